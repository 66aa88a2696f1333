"""Delivered _foreach_add wrapper and its one Triton kernel: ``outs[i] = xs[i] + alpha * other[i]``.

A TensorList becomes a fixed set of slots: each list formal is B_MAX pointer parameters (a
tuple of B_MAX tensors, which Triton flattens into B_MAX independent pointer arguments), the
real tensors first and the unused slots repeating slot 0 with an element count of 0, so one
signature serves every length and the wrapper launches once. The wrapper validates length,
pairing, dtype, device, contiguity and shape from metadata, allocates each output with
``torch.empty`` and launches the one ``@triton.jit`` kernel once, whatever the length — the
empty list included, whose one launch (one program) compiles the version with no slot body.
"""

import torch
import triton
import triton.language as tl

from ops.prototypes.foreach_add import B_MAX, SUPPORTED_DTYPES, SUPPORTED_RANKS

BLOCK = 256  # elements of every slot per program
FLOAT_DTYPES = ("float16", "bfloat16", "float32")
DEFAULT_FLOAT = torch.float32  # torch's default dtype: an int tensor plus a float scalar gives it
# The accumulate type per result dtype (= ops/foreach_add.yaml widening, identity elsewhere).
ACCUMULATE = {"float16": tl.float32, "bfloat16": tl.float32, "float32": tl.float32, "int32": tl.int32}


@triton.jit
def foreach_add_kernel(x_slots, y_slots, out_slots, sizes, other, alpha, SLOTS: tl.constexpr,
                       HAS_ITEMS: tl.constexpr, Y_IS_LIST: tl.constexpr, ACC: tl.constexpr,
                       OUT_BF16: tl.constexpr, BLOCK: tl.constexpr):
    """Program p adds block p of every slot; a slot whose count is 0 (padding, or an empty
    tensor) has every lane masked and does no work."""
    flat = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if HAS_ITEMS:
        for i in tl.static_range(SLOTS):
            mask = flat < sizes[i]
            a = tl.load(x_slots[i] + flat, mask=mask).to(ACC)
            if Y_IS_LIST:
                b = tl.load(y_slots[i] + flat, mask=mask).to(ACC)
            else:
                b = tl.cast(other, ACC)  # the scalar converted explicitly, as the framework converts it
            result = a + tl.cast(alpha, ACC) * b
            if OUT_BF16:  # fp32 -> bf16 rounded to nearest even by hand: Triton's interpreter truncates
                bits = result.to(tl.uint32, bitcast=True)
                bits += 0x7FFF + ((bits >> 16) & 1)
                result = (bits >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)
            tl.store(out_slots[i] + flat, result.to(out_slots[i].dtype.element_ty), mask=mask)


def _name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def scalar_result_dtype(tensor_dtype, scalar):
    """Result dtype of tensor + Python scalar, as torch promotes it."""
    if isinstance(scalar, float) and not isinstance(scalar, bool) and _name(tensor_dtype) not in FLOAT_DTYPES:
        return DEFAULT_FLOAT
    return tensor_dtype


def _check_slot(x, where: str, dtype, device):
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"foreach_add: {where} is a {type(x).__name__}, not a tensor")
    if x.dtype != dtype or x.device != device:
        raise TypeError(f"foreach_add: {where} is {_name(x.dtype)} on {x.device}; the list is {_name(dtype)} on {device}")
    if x.ndim not in SUPPORTED_RANKS:
        raise ValueError(f"foreach_add: {where} has rank {x.ndim}; supported ranks: {SUPPORTED_RANKS}")
    if not x.is_contiguous():
        raise ValueError(f"foreach_add: {where} is not contiguous; the flat-slot form takes contiguous tensors only")


def foreach_add_wrapper(xs, other, alpha=1):
    """``[x + alpha * y for x, y in zip(xs, other)]`` or ``[x + other for x in xs]``, in one launch."""
    xs = list(xs)
    n_items = len(xs)
    if n_items > B_MAX:
        raise ValueError(f"foreach_add: a list of {n_items} tensors; the contract takes 0..{B_MAX}")
    y_is_list = isinstance(other, (list, tuple))
    if not y_is_list and not isinstance(other, (bool, int, float)):
        raise TypeError(f"foreach_add: other must be a list of tensors or a Python bool, int or float, got {type(other).__name__}")
    if not y_is_list and alpha != 1:
        raise TypeError("foreach_add: alpha goes with a list other only, as in torch._foreach_add")
    ys = list(other) if y_is_list else []
    if y_is_list and len(ys) != n_items:
        raise ValueError(f"foreach_add: paired lists of {n_items} and {len(ys)} tensors")
    dtype = xs[0].dtype if n_items else torch.float32
    device = xs[0].device if n_items else None
    if n_items and _name(dtype) not in SUPPORTED_DTYPES:
        raise TypeError(f"foreach_add: dtype {_name(dtype)} is not supported; supported: {', '.join(SUPPORTED_DTYPES)}")
    for i, x in enumerate(xs):
        _check_slot(x, f"xs[{i}]", dtype, device)
        if y_is_list:
            _check_slot(ys[i], f"other[{i}]", dtype, device)
            if ys[i].shape != x.shape:
                raise ValueError(f"foreach_add: other[{i}] has shape {tuple(ys[i].shape)}, xs[{i}] {tuple(x.shape)}")
    out_dtype = dtype if y_is_list else scalar_result_dtype(dtype, other)
    if _name(out_dtype) not in FLOAT_DTYPES and not isinstance(alpha, int):
        raise TypeError(f"foreach_add: alpha must be an integer for an {_name(out_dtype)} result, got {alpha!r}")
    outs = [torch.empty(x.shape, dtype=out_dtype, device=x.device) for x in xs]
    pad = B_MAX - n_items  # unused slots repeat slot 0 with a count of 0; an empty list has no slot 0
    sizes = tuple(x.numel() for x in xs) + (0,) * pad
    x_slots = tuple(xs + xs[:1] * pad) if n_items else (None,) * B_MAX
    y_slots = tuple(ys + ys[:1] * pad) if n_items and y_is_list else x_slots
    out_slots = tuple(outs + outs[:1] * pad) if n_items else (None,) * B_MAX
    grid = (max(1, triton.cdiv(max(sizes), BLOCK)),)  # one program at least: the empty list launches too
    foreach_add_kernel[grid](x_slots, y_slots, out_slots, sizes, 0 if y_is_list else other, alpha, SLOTS=B_MAX,
                             HAS_ITEMS=n_items > 0, Y_IS_LIST=y_is_list, ACC=ACCUMULATE[_name(out_dtype)],
                             OUT_BF16=out_dtype == torch.bfloat16, BLOCK=BLOCK)
    return outs
