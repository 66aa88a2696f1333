"""Delivered bernoulli wrapper and its one Triton kernel (seed 001, aclnnBernoulli).

The wrapper validates against the prototype, reads metadata, derives Python integers,
allocates only with ``torch.empty`` and launches ``bernoulli_kernel`` exactly once on every
path, empty and 0-d outputs included. The kernel does everything else: it draws the
Philox stream, packs the mask, expands it and stores every output element.

Paths, decided once on the host from metadata (``kb_tools.memory.alias.can_alias``):

* ``ALIAS`` — the dense-alias predicate holds: the packed mask is written into the first
  M = ceil(n/128)*16 bytes of ``out`` and expanded in place in high-to-low waves
  (``kb_tools.memory.waves``: start = align_up(ceil(ceil(end/8)/d), 256)), the final
  prefix of at most 256 elements read whole before it is written. Triton has no barrier
  across programs, so this path runs as one program and ``tl.debug_barrier`` separates the
  waves.
* ``FALLBACK`` — tiny, non-contiguous, offset or oversized-storage outputs: an independent
  M-byte mask from ``torch.empty``; each program packs and expands its own 256-aligned
  range and stores it through the output's shape and strides, so only the view is written.
* ``CONSTANT`` — p = 0 or 1: exact zeros or ones stored by the kernel, no generator.

Every store goes through an integer pointer of the output's width holding the bit pattern
of the dtype's 0 or 1 (``ONE_BITS``): no value is converted, float64 travels as int64 bits.
The uniform of element i is word i % 4 of Philox4x32-10 at counter offset/4 + i/4 (Triton's
``tl.randint4x``), turned into [0, 1) by ``tl.random.uint_to_uniform_float`` and compared
with p in float32.
"""

import torch
import triton
import triton.language as tl

from kb_tools.memory.alias import can_alias, mask_size
from ops.prototypes.bernoulli import MAX_RANK, ONE_BITS, SUPPORTED_DTYPES, SUPPORTED_RANKS

ALIAS, FALLBACK, CONSTANT = 0, 1, 2
PATH_NAMES = {ALIAS: "alias", FALLBACK: "fallback", CONSTANT: "constant"}
BLOCK = 1024  # elements per block; on the NPU the tile the UB holds (kb_tools.memory.tiling)
PREFIX = 256  # the wave alignment and the longest final prefix (seed 001 §3.4.2)
CORES = 8  # most programs the fallback and constant paths spread over


@triton.jit
def _draw_bits(idx, p, seed, counter0):
    """0/1 (int32) per element index: word idx % 4 of Philox at counter counter0 + idx // 4."""
    r0, r1, r2, r3 = tl.randint4x(seed, counter0 + idx // 4)
    lane = idx % 4
    word = tl.where(lane == 0, r0, tl.where(lane == 1, r1, tl.where(lane == 2, r2, r3)))
    return (tl.random.uint_to_uniform_float(word) < p).to(tl.int32)


@triton.jit
def _pack_mask(dest, byte_lo, byte_hi, p, seed, counter0, BLOCK: tl.constexpr):
    """Mask bytes byte_lo..byte_hi-1 into ``dest``: bit k of byte b is element 8b + k (LSB first)."""
    lanes = tl.arange(0, 8)
    for b in range(byte_lo, byte_hi, BLOCK // 8):
        byte = b + tl.arange(0, BLOCK // 8)
        idx = byte[:, None].to(tl.int64) * 8 + lanes[None, :]
        packed = tl.sum(_draw_bits(idx, p, seed, counter0) << lanes[None, :], axis=1)
        tl.store(dest + byte, packed.to(tl.uint8), mask=byte < byte_hi)


@triton.jit
def _bits_of(mask, idx, live):
    """Bit idx of the packed mask (0/1, int32); a block's bytes are loaded before any store."""
    byte = tl.load(mask + idx // 8, mask=live, other=0).to(tl.int32)
    return (byte >> (idx % 8).to(tl.int32)) & 1


@triton.jit
def _strided_offsets(idx, sizes, strides, RANK: tl.constexpr):
    """Element offsets of row-major indices idx in a view of the given sizes and strides."""
    rest = idx.to(tl.int64)
    offsets = rest * 0
    for d in tl.static_range(RANK):
        k: tl.constexpr = RANK - 1 - d
        offsets += (rest % sizes[k]) * strides[k]
        rest = rest // sizes[k]
    return offsets


@triton.jit
def bernoulli_kernel(out_ptr, mask_ptr, n, per_program, p, seed, counter0, one_bits, sizes, strides,
                     PATH: tl.constexpr, WIDTH: tl.constexpr, RANK: tl.constexpr, BLOCK: tl.constexpr,
                     PREFIX: tl.constexpr):
    """Fill ``out`` with Bernoulli(p) as the exact 0/1 bit patterns of its dtype (module docstring)."""
    if WIDTH == 1:  # the output read as integers of its own width: bit patterns, never values
        words = out_ptr.to(tl.pointer_type(tl.int8), bitcast=True)
    elif WIDTH == 2:
        words = out_ptr.to(tl.pointer_type(tl.int16), bitcast=True)
    elif WIDTH == 4:
        words = out_ptr.to(tl.pointer_type(tl.int32), bitcast=True)
    else:
        words = out_ptr.to(tl.pointer_type(tl.int64), bitcast=True)  # float64 as int64 bits
    kind = words.dtype.element_ty
    if PATH == 0:  # ALIAS: mask in out's own first bytes, expanded in place, high to low
        raw = out_ptr.to(tl.pointer_type(tl.uint8), bitcast=True)
        _pack_mask(raw, 0, (n + 127) // 128 * 16, p, seed, counter0, BLOCK)
        tl.debug_barrier()
        end = n
        while end > PREFIX:  # each wave's writes miss every mask byte still to be read
            start = tl.cdiv(tl.cdiv(tl.cdiv(end, 8), WIDTH), PREFIX) * PREFIX
            for a in range(start, end, BLOCK):
                idx = a + tl.arange(0, BLOCK)
                live = idx < end
                bits = _bits_of(raw, idx, live)
                tl.store(words + idx, tl.where(bits != 0, one_bits, 0).to(kind), mask=live)
            tl.debug_barrier()  # the wave is finished before the lower one starts
            end = start
        idx = tl.arange(0, PREFIX)  # the final prefix: its mask bytes read whole, then written
        live = idx < end
        bits = _bits_of(raw, idx, live)
        tl.debug_barrier()
        tl.store(words + idx, tl.where(bits != 0, one_bits, 0).to(kind), mask=live)
    else:  # FALLBACK (independent mask) or CONSTANT: each program its own range, stored through strides
        lo = tl.program_id(0) * per_program
        hi = tl.minimum(lo + per_program, n)
        if PATH == 1:
            _pack_mask(mask_ptr, lo // 8, tl.cdiv(hi, 8), p, seed, counter0, BLOCK)
            tl.debug_barrier()
        for a in range(lo, hi, BLOCK):
            idx = a + tl.arange(0, BLOCK)
            live = idx < hi
            if PATH == 1:
                value = tl.where(_bits_of(mask_ptr, idx, live) != 0, one_bits, 0)
            else:
                value = tl.zeros((BLOCK,), tl.int64) + tl.where(p >= 1.0, one_bits, 0)  # the same word everywhere
            tl.store(words + _strided_offsets(idx, sizes, strides, RANK), value.to(kind), mask=live)


def _byte_span(t) -> tuple[int, int]:
    """[first, last] byte addresses a view touches (metadata only; strides are non-negative)."""
    far = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    return t.data_ptr(), t.data_ptr() + (far + 1) * t.element_size() - 1


def _has_internal_overlap(t) -> bool:
    """Two elements share a location: a stride-0 axis, or an axis shorter than the span inside it."""
    span = 0
    for size, stride in sorted(((s, st) for s, st in zip(t.shape, t.stride()) if s > 1), key=lambda d: d[1]):
        if stride <= span:
            return True
        span += (size - 1) * stride
    return False


def _check_out(x, out) -> None:
    """out= must match x's shape, have no internal overlap and overlap x fully or not at all
    (bernoulli reads no value of x, so a full overlap is safe)."""
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"bernoulli: out must be a tensor, got {type(out).__name__}")
    if out.shape != x.shape:
        raise ValueError(f"bernoulli: out has shape {tuple(out.shape)}, x has {tuple(x.shape)}")
    if str(out.dtype).removeprefix("torch.") not in SUPPORTED_DTYPES:
        raise TypeError(f"bernoulli: out dtype {out.dtype} is not supported")
    if any(stride < 0 for stride in out.stride()) or _has_internal_overlap(out):
        raise ValueError("bernoulli: out has internal overlap (an expanded view); it cannot be written")
    if out.numel() and x.numel():  # torch's rule for out=: the same byte range, or disjoint ones
        (a, b), (c, d) = _byte_span(out), _byte_span(x)
        if (a, b) != (c, d) and a <= d and c <= b:
            raise ValueError("bernoulli: out partially overlaps x; pass x itself or a separate tensor")


def validate(x, p, seed, offset) -> float:
    """p as a float after every check of the prototype; raises before any path or launch."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"bernoulli: expected a tensor, got {type(x).__name__}")
    if str(x.dtype).removeprefix("torch.") not in SUPPORTED_DTYPES:
        raise TypeError(f"bernoulli: dtype {x.dtype} is not supported; supported: {', '.join(SUPPORTED_DTYPES)}")
    if x.ndim not in SUPPORTED_RANKS:
        raise ValueError(f"bernoulli: rank {x.ndim} is not supported; supported ranks: 0..{MAX_RANK}")
    if x.layout != torch.strided:
        raise ValueError(f"bernoulli: layout {x.layout} is not the ND format")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"bernoulli: p must be a finite number in [0, 1], got {p!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ValueError(f"bernoulli: seed must be an integer in [0, 2**63), got {seed!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0 or offset % 4:
        raise ValueError(f"bernoulli: offset must be a non-negative multiple of 4, got {offset!r}")
    return float(p)


def choose_path(out, p: float) -> int:
    """CONSTANT for p = 0 or 1, ALIAS when the dense-alias predicate holds, FALLBACK otherwise."""
    if p in (0.0, 1.0):
        return CONSTANT
    return ALIAS if can_alias(out, mask_size(out.numel()))[0] else FALLBACK


def bernoulli_wrapper(x, p=0.5, seed=0, offset=0, out=None):
    """Bernoulli(p) samples shaped and typed like ``x``, into ``out`` (x itself for in place)."""
    p = validate(x, p, seed, offset)
    if out is None:
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    else:
        _check_out(x, out)
    n = out.numel()
    path = choose_path(out, p)
    mask = torch.empty(mask_size(n), dtype=torch.uint8, device=out.device) if path == FALLBACK else out
    programs = 1 if path == ALIAS else max(1, min(CORES, triton.cdiv(n, PREFIX)))
    per_program = triton.cdiv(triton.cdiv(n, programs), PREFIX) * PREFIX
    sizes = tuple(out.shape) + (1,) * (MAX_RANK - out.ndim)
    strides = tuple(out.stride()) + (0,) * (MAX_RANK - out.ndim)
    bernoulli_kernel[(programs,)](out, mask, n, per_program, p, seed, offset // 4,
                                  ONE_BITS[str(out.dtype).removeprefix("torch.")], sizes, strides,
                                  PATH=path, WIDTH=out.element_size(), RANK=out.ndim, BLOCK=BLOCK, PREFIX=PREFIX)
    return out
