"""Delivered add wrapper and its one Triton kernel: ``out = x + alpha * other``.

The wrapper validates against the prototype, derives the result dtype, the broadcast shape
and every operand's strides from metadata as Python integers, allocates the output with
``torch.empty`` and launches the one ``@triton.jit`` kernel once, on every path (0-d and
empty tensors included: one program with an all-false mask). A Python scalar ``other``
reaches the kernel as a launch scalar; the kernel converts it, loads each operand in its
native dtype through its strides, computes at the accumulate type and narrows at the store
(two's-complement wrap-around for integers).

The kernel is plain Triton: it runs on CUDA, on the CPU under ``TRITON_INTERPRET=1`` and,
unchanged in intent, through triton-ascend on an NPU (see DESIGN.md, platform notes).
"""

import torch
import triton
import triton.language as tl

from ops.prototypes.add import MAX_RANK, SUPPORTED_DTYPES

BLOCK = 1024  # elements per program
FLOAT_DTYPES = ("float16", "bfloat16", "float32")
DEFAULT_FLOAT = torch.float32  # torch's default dtype: an int tensor plus a float scalar gives it
# The accumulate type per result dtype (= ops/add.yaml widening, identity elsewhere).
ACCUMULATE = {"float16": tl.float32, "bfloat16": tl.float32, "float32": tl.float32,
              "int8": tl.int32, "int32": tl.int32, "int64": tl.int64}


@triton.jit
def add_kernel(x, y, out, n, shape, x_strides, y_strides, other, alpha,
               RANK: tl.constexpr, Y_IS_TENSOR: tl.constexpr, ACC: tl.constexpr, OUT_BF16: tl.constexpr,
               BLOCK: tl.constexpr):
    """One program per BLOCK output elements; the flat index is split into the broadcast
    shape's coordinates, which meet each operand's strides (0 on a broadcast axis)."""
    flat = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = flat < n
    rest = flat
    x_off = flat * 0
    y_off = flat * 0
    for d in tl.static_range(RANK - 1, -1, -1):
        coordinate = rest % shape[d]
        rest = rest // shape[d]
        x_off += coordinate * x_strides[d]
        y_off += coordinate * y_strides[d]
    a = tl.load(x + x_off, mask=mask).to(ACC)  # native dtype in, widened on chip
    if Y_IS_TENSOR:
        b = tl.load(y + y_off, mask=mask).to(ACC)
    else:
        b = tl.cast(other, ACC)  # the scalar converted explicitly, as the framework converts it
    result = a + tl.cast(alpha, ACC) * b  # at ACC: an integer product and sum wrap there
    if OUT_BF16:  # fp32 -> bf16 rounded to nearest even by hand: Triton's interpreter truncates
        bits = result.to(tl.uint32, bitcast=True)
        bits += 0x7FFF + ((bits >> 16) & 1)
        result = (bits >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)
    tl.store(out + flat, result.to(out.dtype.element_ty), mask=mask)  # narrowing store (wraps)


def _name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def scalar_result_dtype(tensor_dtype, scalar):
    """Result dtype of tensor + Python scalar, as torch promotes it (a float scalar lifts an
    integer tensor to the default float dtype; anything else keeps the tensor's dtype)."""
    if isinstance(scalar, float) and not isinstance(scalar, bool) and _name(tensor_dtype) not in FLOAT_DTYPES:
        return DEFAULT_FLOAT
    return tensor_dtype


def broadcast_shape(a, b):
    """The broadcast of two shapes, from metadata only; ValueError naming both otherwise."""
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + tuple(a), (1,) * (rank - len(b)) + tuple(b)
    if any(p != q and 1 not in (p, q) for p, q in zip(a, b)):
        raise ValueError(f"add: shapes {a} and {b} do not broadcast")
    return tuple(q if p == 1 else p for p, q in zip(a, b))


def broadcast_strides(shape, strides, out_shape):
    """An operand's strides over the output's axes: 0 where it is broadcast."""
    pad = len(out_shape) - len(shape)
    return tuple(0 if i < pad or shape[i - pad] == 1 else strides[i - pad] for i in range(len(out_shape)))


def add_wrapper(x, other, alpha=1):
    """``x + alpha * other``; ``other`` a tensor of x's dtype and device, or a Python number."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"add: expected a tensor, got {type(x).__name__}")
    if _name(x.dtype) not in SUPPORTED_DTYPES:
        raise TypeError(f"add: dtype {_name(x.dtype)} is not supported; supported: {', '.join(SUPPORTED_DTYPES)}")
    y_is_tensor = isinstance(other, torch.Tensor)
    if y_is_tensor:
        if other.dtype != x.dtype or other.device != x.device:
            raise TypeError(f"add: other must have x's dtype {_name(x.dtype)} and device {x.device}, "
                            f"got {_name(other.dtype)} on {other.device}")
        out_dtype, out_shape = x.dtype, broadcast_shape(x.shape, other.shape)
    elif isinstance(other, (bool, int, float)):
        out_dtype, out_shape = scalar_result_dtype(x.dtype, other), tuple(x.shape)
    else:
        raise TypeError(f"add: other must be a tensor or a Python bool, int or float, got {type(other).__name__}")
    if len(out_shape) > MAX_RANK:
        raise ValueError(f"add: rank {len(out_shape)} is not supported; supported ranks: 0..{MAX_RANK}")
    if _name(out_dtype) not in FLOAT_DTYPES and not isinstance(alpha, int):
        raise TypeError(f"add: alpha must be an integer for an {_name(out_dtype)} result, got {alpha!r}")
    n = 1
    for size in out_shape:
        n *= size
    x_strides = broadcast_strides(x.shape, x.stride(), out_shape)
    y_strides = broadcast_strides(other.shape, other.stride(), out_shape) if y_is_tensor else (0,) * len(out_shape)
    index_shape = tuple(max(size, 1) for size in out_shape)  # an empty axis never divides the flat index
    out = torch.empty(out_shape, dtype=out_dtype, device=x.device)
    grid = (max(1, triton.cdiv(n, BLOCK)),)  # an empty output still gets its one launch
    add_kernel[grid](x, other if y_is_tensor else None, out, n, index_shape, x_strides, y_strides,
                     0 if y_is_tensor else other, alpha, RANK=len(out_shape), Y_IS_TENSOR=y_is_tensor,
                     ACC=ACCUMULATE[_name(out_dtype)], OUT_BF16=out_dtype == torch.bfloat16, BLOCK=BLOCK)
    return out
