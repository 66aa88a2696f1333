"""Delivered cat wrapper and its one Triton kernel (seed 004 §3.2, kb/patterns/cat-lowering.md).

The wrapper validates the list against the prototype, reads metadata, derives Python
integers, allocates the output with ``torch.empty`` and launches ``cat_kernel`` exactly once
for the whole list, whatever its length. The inputs travel as ``B_MAX`` fixed slots; slots
past the real length repeat slot 0 with extent 0, so the kernel's loop over them runs zero
times. Nothing is joined, copied or made contiguous on the host.

The copy plan is the corrected one of the page: ``outer`` is the product of the axes before
``dim``; input i's row holds ``inner_i = extent_i x trailing`` elements (its own extent
along ``dim``); row o of input i goes to ``o x row_out + prefix_i`` of the output, where
``row_out = sum(inner)`` is the output's row stride and ``prefix_i`` the sum of the inner
extents before i. A zero-extent input moves nothing and shifts nothing. Each input is read
where it lies, through its own strides; elements move as integers of their width, so no
value is converted.
"""

import math

import torch
import triton
import triton.language as tl

from ops.prototypes.cat import B_MAX, MAX_RANK, SUPPORTED_DTYPES, SUPPORTED_RANKS

BLOCK = 1024  # elements per block
CORES = 8  # most programs the copies spread over


@triton.jit
def _as_words(ptr, WIDTH: tl.constexpr):
    """The pointer re-typed as integers of the element's width: copies move bit patterns."""
    if WIDTH == 1:
        words = ptr.to(tl.pointer_type(tl.int8), bitcast=True)
    elif WIDTH == 2:
        words = ptr.to(tl.pointer_type(tl.int16), bitcast=True)
    elif WIDTH == 4:
        words = ptr.to(tl.pointer_type(tl.int32), bitcast=True)
    else:
        words = ptr.to(tl.pointer_type(tl.int64), bitcast=True)
    return words


@triton.jit
def _source_offsets(row, col, sizes, strides, DIM: tl.constexpr, RANK: tl.constexpr):
    """Offsets in a strided input of (row over the leading axes, col within the row)."""
    offsets = row * 0
    for d in tl.static_range(RANK - 1 - DIM):  # the trailing axes, innermost first
        k: tl.constexpr = RANK - 1 - d
        offsets += (col % sizes[k]) * strides[k]
        col = col // sizes[k]
    offsets += col * strides[DIM]  # what is left of col is the position along dim
    for d in tl.static_range(DIM):  # the leading axes
        k: tl.constexpr = DIM - 1 - d
        offsets += (row % sizes[k]) * strides[k]
        row = row // sizes[k]
    return offsets


@triton.jit
def cat_kernel(out_ptr, srcs, extents, strides, sizes, outer, trailing, row_out,
               SLOTS: tl.constexpr, DIM: tl.constexpr, RANK: tl.constexpr, WIDTH: tl.constexpr,
               BLOCK: tl.constexpr):
    """Copy every slot's rows to their place in the output (module docstring: the plan)."""
    dest = _as_words(out_ptr, WIDTH)
    first = tl.program_id(0) * BLOCK
    step = tl.num_programs(0) * BLOCK
    prefix = tl.zeros((), dtype=tl.int64)
    for i in tl.static_range(SLOTS):
        inner = extents[i] * trailing  # this input's own row length
        total = outer * inner
        src = _as_words(srcs[i], WIDTH)
        for a in range(first, total, step):  # zero times for a zero-extent input or an unused slot
            idx = (a + tl.arange(0, BLOCK)).to(tl.int64)
            live = idx < total
            row = idx // inner
            col = idx % inner
            values = tl.load(src + _source_offsets(row, col, sizes, strides[i], DIM, RANK), mask=live)
            tl.store(dest + row * row_out + prefix + col, values, mask=live)  # destination row stride: row_out
        prefix += inner


def _skipped(t) -> bool:
    """A 1-D tensor of shape (0,): torch.cat skips it whatever the other shapes are."""
    return t.ndim == 1 and t.shape[0] == 0


def validate(tensors, dim):
    """(output shape, normalised dim) after every check of the prototype; raises before the launch."""
    if not isinstance(tensors, (list, tuple)) or not 1 <= len(tensors) <= B_MAX:
        raise ValueError(f"cat: expected a list or tuple of 1 to {B_MAX} tensors")
    for i, t in enumerate(tensors):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"cat: element {i} is a {type(t).__name__}, not a tensor")
        if t.ndim == 0:
            raise ValueError(f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated")
        if t.dtype != tensors[0].dtype or t.device != tensors[0].device:
            raise TypeError(f"cat: tensor {i} is {t.dtype} on {t.device}; every tensor must be "
                            f"{tensors[0].dtype} on {tensors[0].device}")
        if t.layout != torch.strided:
            raise ValueError(f"cat: tensor {i} has layout {t.layout}, not the ND format")
    if str(tensors[0].dtype).removeprefix("torch.") not in SUPPORTED_DTYPES:
        raise TypeError(f"cat: dtype {tensors[0].dtype} is not supported; supported: {', '.join(SUPPORTED_DTYPES)}")
    kept = [t for t in tensors if not _skipped(t)] or [tensors[0]]
    first = kept[0]
    if first.ndim not in SUPPORTED_RANKS:
        raise ValueError(f"cat: rank {first.ndim} is not supported; supported ranks: 1..{MAX_RANK}")
    if not isinstance(dim, int) or not -first.ndim <= dim < first.ndim:
        raise IndexError(f"cat: dim {dim!r} is out of range for rank {first.ndim}")
    dim = dim % first.ndim
    for i, t in enumerate(tensors):
        if not _skipped(t) and (t.ndim != first.ndim or
                                any(a != b for k, (a, b) in enumerate(zip(t.shape, first.shape)) if k != dim)):
            raise ValueError(f"cat: tensor {i} has shape {tuple(t.shape)}, which differs from "
                             f"{tuple(first.shape)} outside dim {dim}")
    extent = sum(t.shape[dim] for t in kept if not _skipped(t))
    return tuple(first.shape[:dim]) + (extent,) + tuple(first.shape[dim + 1:]), dim


def cat_wrapper(tensors, dim=0):
    """The tensors joined along ``dim``; one dtype in, the same dtype out."""
    shape, dim = validate(tensors, dim)
    y = torch.empty(shape, dtype=tensors[0].dtype, device=tensors[0].device)
    rank = len(shape)
    outer = math.prod(shape[:dim])
    trailing = math.prod(shape[dim + 1:])
    pad = B_MAX - len(tensors)
    slots = list(tensors) + [tensors[0]] * pad  # unused slots repeat slot 0 ...
    extents = [0 if _skipped(t) else t.shape[dim] for t in tensors] + [0] * pad  # ... with extent 0
    strides = [tuple(t.stride()) + (0,) * (MAX_RANK - t.ndim) for t in tensors]
    strides += [strides[0]] * pad
    sizes = tuple(shape) + (1,) * (MAX_RANK - rank)
    programs = max(1, min(CORES, triton.cdiv(outer * max(extents) * trailing, BLOCK)))
    cat_kernel[(programs,)](y, tuple(slots), tuple(extents), tuple(strides), sizes, outer, trailing, shape[dim] * trailing,
                            SLOTS=B_MAX, DIM=dim, RANK=rank, WIDTH=y.element_size(), BLOCK=BLOCK)
    return y
