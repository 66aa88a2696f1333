"""Bernoulli by the aliased path of seed 001: the packed mask is generated inside the
output's own storage and expanded in place (§3.1, §3.2).

Paths, chosen on the host as in §3.2.1: an empty tensor returns untouched; p = 0 and p = 1
are exact fills (ZerosLike / OnesLike); otherwise the mask goes into the first M bytes of
``out`` when the dense-alias predicate holds, and into an independent M-byte mask expanded
into a contiguous temporary plus a copy back when it does not.

The random stream stands in for the DSA generator: numpy's counter-based Philox keyed by
``seed``, its counter started at ``offset // 4``. One Philox counter yields four 64-bit
words, so ``offset`` (counted in words) must be a multiple of 4 — the seed's
``offset % 4 == 0``. p = 0.5 takes the mask straight from random bytes; another p compares
one 53-bit uniform per element with p, tile by tile. The stream is drawn on the host, so a
seed and offset give the same output on every backend.
"""

from __future__ import annotations

import math

from kb_tools.memory.alias import can_alias, mask_size
from kb_tools.memory.expand import default_tile, expand_from, expand_inplace

DTYPES = ("float16", "bfloat16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64", "bool")


def validate(p, seed, offset) -> float:
    """p as a float; ValueError for a p outside [0, 1] or not finite, a non-integer seed, or
    an offset that is negative or not a multiple of 4 (§1.3, §3.2.1 step 4)."""
    p = float(p)
    if not math.isfinite(p) or not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be finite and in [0, 1], got {p}")
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise ValueError(f"offset must be a non-negative integer, got {offset!r}")
    if offset % 4:
        raise ValueError(f"offset must be a multiple of 4 (one Philox counter = 4 words), got {offset}")
    return p


def choose_path(out, p: float) -> str:
    """'empty', 'zeros', 'ones', 'alias' or 'fallback' for this output and probability."""
    if out.numel() == 0:
        return "empty"
    if p == 0.0:
        return "zeros"
    if p == 1.0:
        return "ones"
    return "alias" if can_alias(out, mask_size(out.numel()))[0] else "fallback"


def generate_mask(dest, n: int, p: float, seed: int, offset: int, tile: int) -> None:
    """Fill ``dest`` (a torch uint8 tensor of mask_size(n) bytes) with the packed mask, one
    tile at a time so that no temporary grows with n."""
    import numpy as np
    import torch

    stream = np.random.Philox(key=seed & (2**64 - 1), counter=offset // 4)
    padded = dest.shape[0] * 8  # the mask covers align_up(n, 128) bits, as DSA's does
    for a in range(0, padded, tile):
        b = min(a + tile, padded)
        words = stream.random_raw((b - a) // 64 if p == 0.5 else b - a)
        if p == 0.5:
            packed = words.view(np.uint8)
        else:
            uniform = (words >> np.uint64(11)) * (1.0 / (1 << 53))
            packed = np.packbits(uniform < p, bitorder="little")
        dest[a // 8: b // 8].copy_(torch.from_numpy(packed))


def bernoulli_(out, p, seed: int, offset: int = 0, *, tile: int | None = None):
    """Fill ``out`` (any of the ten dtypes, any layout, any device) with Bernoulli(p) samples
    as exact 0/1; returns ``out``."""
    import torch

    p = validate(p, seed, offset)
    if str(out.dtype).removeprefix("torch.") not in DTYPES:
        raise ValueError(f"dtype {out.dtype} is not one of {', '.join(DTYPES)}")
    path = choose_path(out, p)
    if path == "empty":
        return out
    if path in ("zeros", "ones"):
        return out.fill_(1 if path == "ones" else 0)
    n = out.numel()
    tile = tile or default_tile(out.element_size())
    mask_bytes = mask_size(n)
    if path == "alias":
        generate_mask(out.view(-1).view(torch.uint8)[:mask_bytes], n, p, seed, offset, tile)
        return expand_inplace(out, tile=tile)
    mask = torch.empty(mask_bytes, dtype=torch.uint8, device=out.device)
    generate_mask(mask, n, p, seed, offset, tile)
    dense = torch.empty(out.shape, dtype=out.dtype, device=out.device)
    return out.copy_(expand_from(mask, dense, tile=tile))
