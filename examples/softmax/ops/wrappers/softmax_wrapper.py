"""Delivered softmax wrapper and its one Triton kernel (Triton-Ascend's form).

The wrapper validates against the prototype, reads metadata, derives Python integers,
allocates the declared output with ``torch.empty`` and launches ``softmax_kernel`` once on
every path, empty and 0-d tensors included. No cast, layout change, reshape or arithmetic
on a tensor runs on the host: the kernel reads ``x`` where it lies and widens per tile.

The kernel gives each program whole rows (every index of the other axes), grid-strided.
A row is read through the axis's stride in tiles of ``TILE`` elements, widened to float32 at
the load; pass 1 keeps a running float32 maximum and a running sum rescaled to it (online
softmax), pass 2 normalises and narrows once per tile at the store. The narrowing to
bfloat16 rounds to nearest even by hand on the float32 bits, because Triton 3.9's
interpreter truncates in ``.to(tl.bfloat16)`` where compiled Triton rounds; float16 uses
``.to`` (round to nearest even everywhere).
"""

import torch
import triton
import triton.language as tl

from ops.prototypes.softmax import SUPPORTED_DTYPES, SUPPORTED_RANKS

CORES = 8  # most programs the rows spread over
TILE = 1024  # elements of the reduced axis per tile
MAX_ROW_AXES = max(SUPPORTED_RANKS) - 1  # axes other than the reduced one
NARROW = {"float32": 0, "float16": 1, "bfloat16": 2}  # how the store narrows float32


@triton.jit
def _row_start(row, sizes, strides, AXES: tl.constexpr):
    """Offset of the first element of row ``row`` (row-major over the other axes)."""
    start = row * 0
    for d in tl.static_range(AXES):
        k: tl.constexpr = AXES - 1 - d
        start += (row % sizes[k]) * strides[k]
        row = row // sizes[k]
    return start


@triton.jit
def _store_narrowed(y_ptr, offsets, value, live, NARROW: tl.constexpr):
    """Store float32 ``value`` in y's dtype, rounding to nearest even."""
    if NARROW == 2:
        bits = value.to(tl.uint32, bitcast=True)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        rounded = tl.where(value != value, 0x7FC0, rounded)  # NaN stays a quiet NaN
        words = y_ptr.to(tl.pointer_type(tl.uint16), bitcast=True)
        tl.store(words + offsets, rounded.to(tl.uint16), mask=live)
    else:
        tl.store(y_ptr + offsets, value.to(y_ptr.dtype.element_ty), mask=live)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n, rows, x_axis_stride, y_axis_stride, row_sizes, x_row_strides,
                   y_row_strides, AXES: tl.constexpr, NARROW: tl.constexpr, TILE: tl.constexpr):
    """Softmax of every row along the reduced axis (module docstring: the algorithm)."""
    for row in range(tl.program_id(0), rows, tl.num_programs(0)):
        x_row = x_ptr + _row_start(row, row_sizes, x_row_strides, AXES)
        y_row = y_ptr + _row_start(row, row_sizes, y_row_strides, AXES)
        running_max = tl.full((), float("-inf"), tl.float32)
        running_sum = tl.zeros((), tl.float32)
        for t in range(0, n, TILE):  # pass 1: float32 running max and rescaled sum
            idx = t + tl.arange(0, TILE)
            live = idx < n
            tile = tl.load(x_row + idx * x_axis_stride, mask=live, other=float("-inf")).to(tl.float32)
            new_max = tl.maximum(running_max, tl.max(tile, axis=0))
            terms = tl.where(live, tl.exp(tile - new_max), 0.0)
            running_sum = running_sum * tl.exp(running_max - new_max) + tl.sum(terms, axis=0)
            running_max = new_max
        for t in range(0, n, TILE):  # pass 2: normalise in float32, narrow per tile at the store
            idx = t + tl.arange(0, TILE)
            live = idx < n
            tile = tl.load(x_row + idx * x_axis_stride, mask=live, other=0.0).to(tl.float32)
            _store_narrowed(y_row, idx * y_axis_stride, tl.exp(tile - running_max) / running_sum, live, NARROW)


def _axis_plan(x, dim):
    """(dim, extent, rows, other axes' sizes, x's and a dense y's strides for them) from metadata;
    a 0-d tensor is one row of one element, an empty axis still has its rows."""
    rank = max(x.ndim, 1)
    if not isinstance(dim, int) or not -rank <= dim < rank:
        raise IndexError(f"softmax: dim {dim!r} is out of range for rank {x.ndim}")
    dim %= rank
    if x.ndim == 0:
        return dim, 1, 1, (), ()
    others = [k for k in range(x.ndim) if k != dim]
    rows = 1
    for k in others:
        rows *= x.shape[k]
    return dim, x.shape[dim], rows, tuple(x.shape[k] for k in others), tuple(x.stride(k) for k in others)


def _padded(values, fill):
    return tuple(values) + (fill,) * (MAX_ROW_AXES - len(values))


def softmax_wrapper(x, dim=-1):
    """Softmax of ``x`` along ``dim`` (any dimension); same dtype and shape in and out."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"softmax: expected a tensor, got {type(x).__name__}")
    dtype_name = str(x.dtype).removeprefix("torch.")
    if dtype_name not in SUPPORTED_DTYPES:
        raise TypeError(f"softmax: dtype {dtype_name} is not supported; supported: {', '.join(SUPPORTED_DTYPES)}")
    if x.ndim not in SUPPORTED_RANKS:
        raise ValueError(f"softmax: rank {x.ndim} is not supported; supported ranks: {SUPPORTED_RANKS}")
    dim, n, rows, sizes, x_strides = _axis_plan(x, dim)
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    _, _, _, _, y_strides = _axis_plan(y, dim)
    x_axis_stride = x.stride(dim) if x.ndim else 1
    y_axis_stride = y.stride(dim) if y.ndim else 1
    programs = max(1, min(CORES, rows))
    softmax_kernel[(programs,)](x, y, n, rows, x_axis_stride, y_axis_stride, _padded(sizes, 1),
                                _padded(x_strides, 0), _padded(y_strides, 0),
                                AXES=len(sizes), NARROW=NARROW[dtype_name], TILE=TILE)
    return y
