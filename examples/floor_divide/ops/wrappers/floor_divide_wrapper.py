"""Delivered floor_divide wrapper and its one Triton kernel: ``out = floor(x / other)``.

The wrapper validates against the prototype, derives the broadcast shape and every
operand's strides from metadata as Python integers, allocates the output with
``torch.empty`` and launches the one ``@triton.jit`` kernel once, on every path (0-d and
empty tensors included). The kernel widens int8, uint8 and int16 to int32 (int32 and int64
stay), divides there with both guards in its own code — a divisor of -1 is a wrapping
negation, so INT_MIN // -1 gives INT_MIN and never traps, and a zero divisor gives the
prototype's ZERO_DIVISOR_YIELDS — rounds the truncating quotient down, and narrows once, at
the store, by two's-complement wrap-around.
"""

import torch
import triton
import triton.language as tl

from ops.prototypes.floor_divide import MAX_RANK, SUPPORTED_DTYPES, ZERO_DIVISOR_YIELDS

BLOCK = 1024  # elements per program
# The accumulate type per dtype (= ops/floor_divide.yaml widening).
ACCUMULATE = {"int8": tl.int32, "uint8": tl.int32, "int16": tl.int32, "int32": tl.int32, "int64": tl.int64}


@triton.jit
def floor_divide_kernel(x, y, out, n, shape, x_strides, y_strides, other, on_zero,
                        RANK: tl.constexpr, Y_IS_TENSOR: tl.constexpr, ACC: tl.constexpr, BLOCK: tl.constexpr):
    """One program per BLOCK output elements; coordinates of the broadcast shape meet each
    operand's strides (0 on a broadcast axis)."""
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
    a = tl.load(x + x_off, mask=mask).to(ACC)
    if Y_IS_TENSOR:
        b = tl.load(y + y_off, mask=mask).to(ACC)
    else:  # the scalar wraps to x's dtype first, as the framework converts it, then widens
        b = tl.cast(tl.cast(other, x.dtype.element_ty), ACC)
    minus_one = b == -1
    zero = b == 0
    divisor = tl.where(minus_one | zero, 1, b)
    quotient = a // divisor  # Triton's integer // truncates toward zero
    remainder = a - quotient * divisor
    quotient -= ((remainder != 0) & ((remainder < 0) != (divisor < 0))).to(ACC)  # round down
    quotient = tl.where(minus_one, 0 - a, quotient)  # x // -1 is -x, wrapping at ACC
    quotient = tl.where(zero, tl.cast(on_zero, ACC), quotient)
    tl.store(out + flat, quotient.to(out.dtype.element_ty), mask=mask)  # the one narrowing point


def _name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def broadcast_shape(a, b):
    """The broadcast of two shapes, from metadata only; ValueError naming both otherwise."""
    rank = max(len(a), len(b))
    a, b = (1,) * (rank - len(a)) + tuple(a), (1,) * (rank - len(b)) + tuple(b)
    if any(p != q and 1 not in (p, q) for p, q in zip(a, b)):
        raise ValueError(f"floor_divide: shapes {a} and {b} do not broadcast")
    return tuple(q if p == 1 else p for p, q in zip(a, b))


def broadcast_strides(shape, strides, out_shape):
    """An operand's strides over the output's axes: 0 where it is broadcast."""
    pad = len(out_shape) - len(shape)
    return tuple(0 if i < pad or shape[i - pad] == 1 else strides[i - pad] for i in range(len(out_shape)))


def floor_divide_wrapper(x, other):
    """``floor(x / other)`` in x's integer dtype; ``other`` a tensor of x's dtype and device, or a Python int."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"floor_divide: expected a tensor, got {type(x).__name__}")
    if _name(x.dtype) not in SUPPORTED_DTYPES:
        raise TypeError(f"floor_divide: dtype {_name(x.dtype)} is not supported; supported: {', '.join(SUPPORTED_DTYPES)}")
    y_is_tensor = isinstance(other, torch.Tensor)
    if y_is_tensor:
        if other.dtype != x.dtype or other.device != x.device:
            raise TypeError(f"floor_divide: other must have x's dtype {_name(x.dtype)} and device {x.device}, "
                            f"got {_name(other.dtype)} on {other.device}")
        out_shape = broadcast_shape(x.shape, other.shape)
    elif isinstance(other, int):  # bool included: True divides by 1
        if not -2**63 <= other < 2**63:  # torch refuses these too; narrower ones wrap to x's dtype
            raise ValueError(f"floor_divide: the scalar {other} does not fit int64")
        out_shape = tuple(x.shape)
    else:
        raise TypeError(f"floor_divide: other must be an integer tensor or a Python int, got {type(other).__name__}")
    if len(out_shape) > MAX_RANK:
        raise ValueError(f"floor_divide: rank {len(out_shape)} is not supported; supported ranks: 0..{MAX_RANK}")
    n = 1
    for size in out_shape:
        n *= size
    x_strides = broadcast_strides(x.shape, x.stride(), out_shape)
    y_strides = broadcast_strides(other.shape, other.stride(), out_shape) if y_is_tensor else (0,) * len(out_shape)
    index_shape = tuple(max(size, 1) for size in out_shape)  # an empty axis never divides the flat index
    out = torch.empty(out_shape, dtype=x.dtype, device=x.device)
    grid = (max(1, triton.cdiv(n, BLOCK)),)  # an empty output still gets its one launch
    floor_divide_kernel[grid](x, other if y_is_tensor else None, out, n, index_shape, x_strides, y_strides,
                              0 if y_is_tensor else other, ZERO_DIVISOR_YIELDS, RANK=len(out_shape),
                              Y_IS_TENSOR=y_is_tensor, ACC=ACCUMULATE[_name(x.dtype)], BLOCK=BLOCK)
    return out
