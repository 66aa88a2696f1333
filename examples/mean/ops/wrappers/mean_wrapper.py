"""Delivered mean wrapper and its one Triton kernel.

The wrapper validates against the prototype, splits the axes into kept and reduced ones
(shapes and strides as Python integers), picks the kernel's version — its reduction block —
from the reduced element count, allocates the output with ``torch.empty`` and launches the
one ``@triton.jit`` kernel once, on every path: 0-d inputs, empty reduced axes (NaN, as
0 / 0) and empty outputs included. The kernel reads ``x`` where it lies in its native dtype,
accumulates in fp32, combines its lane partials by a tree that is fixed for the version,
divides by the element count once and narrows at the store.
"""

import torch
import triton
import triton.language as tl

from ops.prototypes.mean import MAX_RANK, SUPPORTED_DTYPES

# The finite set of versions: (largest reduced count it serves, its reduction block); the last
# one is the general version and serves every count above the buckets before it.
VERSIONS = ((64, 64), (None, 256))


@triton.jit
def mean_kernel(x, y, n_out, n_red, kept_shape, kept_strides, red_shape, red_strides,
                KEPT_RANK: tl.constexpr, RED_RANK: tl.constexpr, RBLOCK: tl.constexpr, OUT_BF16: tl.constexpr):
    """Program p computes output element p: RBLOCK fp32 lane partials, each summing every
    RBLOCK-th reduced element in order, then one tree over the lanes and one division."""
    p = tl.program_id(0)
    rest = p
    base = p * 0
    for d in tl.static_range(KEPT_RANK - 1, -1, -1):
        base += (rest % kept_shape[d]) * kept_strides[d]
        rest = rest // kept_shape[d]
    lanes = tl.arange(0, RBLOCK)
    live = (lanes * 0 + p) < n_out  # the one program of an empty output reads nothing
    partial = tl.zeros([RBLOCK], dtype=tl.float32)  # the fp32 accumulator, for fp16 and bf16 too
    for start in range(0, n_red, RBLOCK):
        r = start + lanes
        rest_r = r
        offset = base + r * 0
        for d in tl.static_range(RED_RANK - 1, -1, -1):
            offset += (rest_r % red_shape[d]) * red_strides[d]
            rest_r = rest_r // red_shape[d]
        partial += tl.load(x + offset, mask=(r < n_red) & live, other=0.0).to(tl.float32)
    value = tl.sum(partial, axis=0) / n_red  # divided once by the count; 0 / 0 is NaN for an empty axis
    if OUT_BF16:  # fp32 -> bf16 rounded to nearest even by hand: Triton's interpreter truncates
        bits = value.to(tl.uint32, bitcast=True)
        bits += 0x7FFF + ((bits >> 16) & 1)
        value = (bits >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)
    tl.store(y + p, value.to(y.dtype.element_ty), mask=p < n_out)


def _name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def reduced_axes(dim, ndim: int) -> tuple:
    """The reduced axes, sorted and non-negative; None means every axis (a 0-d tensor accepts
    dim 0 and -1, as torch does, and reduces nothing)."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    bound = max(ndim, 1)
    if any(not isinstance(d, int) or not -bound <= d < bound for d in dims):
        raise IndexError(f"mean: dim {dim} is out of range for rank {ndim}")
    axes = tuple(sorted({d % bound for d in dims}))
    if len(axes) != len(dims):
        raise ValueError(f"mean: dim {dim} names an axis twice")
    return tuple(a for a in axes if a < ndim)


def reduction_block(n_red: int) -> int:
    """The version for a reduced count: the first bucket that holds it, else the general one."""
    return next(block for bound, block in VERSIONS if bound is None or n_red <= bound)


def mean_wrapper(x, dim=None, keepdim=False, dtype=None):
    """Mean of ``x`` over ``dim`` (None: every axis); same dtype in and out."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"mean: expected a tensor, got {type(x).__name__}")
    if _name(x.dtype) not in SUPPORTED_DTYPES:
        raise TypeError(f"mean: dtype {_name(x.dtype)} is not supported; supported: {', '.join(SUPPORTED_DTYPES)}")
    if x.ndim > MAX_RANK:
        raise ValueError(f"mean: rank {x.ndim} is not supported; supported ranks: 0..{MAX_RANK}")
    if dtype is not None:
        raise TypeError(f"mean: dtype={dtype} is not supported; the result has x's dtype (dtype=None)")
    axes = reduced_axes(dim, x.ndim)
    kept = [a for a in range(x.ndim) if a not in axes]
    n_out = n_red = 1
    for a in kept:
        n_out *= x.shape[a]
    for a in axes:
        n_red *= x.shape[a]
    out_shape = tuple(1 if a in axes else x.shape[a] for a in range(x.ndim)) if keepdim else tuple(x.shape[a] for a in kept)
    y = torch.empty(out_shape, dtype=x.dtype, device=x.device)
    mean_kernel[(max(1, n_out),)](x, y, n_out, n_red,  # an empty output still gets its one launch
                                  tuple(max(x.shape[a], 1) for a in kept), tuple(x.stride(a) for a in kept),
                                  tuple(max(x.shape[a], 1) for a in axes), tuple(x.stride(a) for a in axes),
                                  KEPT_RANK=len(kept), RED_RANK=len(axes), RBLOCK=reduction_block(n_red),
                                  OUT_BF16=x.dtype == torch.bfloat16)
    return y
