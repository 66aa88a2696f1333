"""The core split of kb/patterns/multicore-tiling-balance.md in Triton: program c is core c, it
walks its own range [c·elementsPerCore, min((c+1)·elementsPerCore, total)) tileElements at a
time, and counts each element it writes, so coverage is measured rather than assumed."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch


@triton.jit
def scale_kernel(x_ptr, y_ptr, hits_ptr, total, per_core, TILE: tl.constexpr):
    lo = tl.program_id(0) * per_core
    hi = tl.minimum(lo + per_core, total)
    for start in range(lo, hi, TILE):
        i = start + tl.arange(0, TILE)
        live = i < hi
        tl.store(y_ptr + i, tl.load(x_ptr + i, mask=live) * 2, mask=live)
        tl.atomic_add(hits_ptr + i, 1, mask=live)


def run_split(x, block_dim: int, per_core: int, tile: int, *, backend: str):
    """(y, hits): y = 2x over the split, hits[i] = how many cores wrote element i."""
    import torch

    y = torch.zeros_like(x)
    hits = torch.zeros(x.numel(), dtype=torch.int32, device=x.device)
    launch(scale_kernel, (block_dim,), x, y, hits, x.numel(), per_core, backend=backend, TILE=tile)
    return y, hits
