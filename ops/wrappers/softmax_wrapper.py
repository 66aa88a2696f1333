"""Delivered softmax wrapper in the PyPTO-Pro style (seed 003, "boundary rule").

The wrapper validates, reads metadata, derives Python integers, allocates the declared
output with torch.empty and launches the one @pl.jit kernel once. The kernel loads the
native dtype, widens per tile (pl.cast, platform-gated) and walks the reduced axis through
its stride, so no cast, transpose or reshape runs on the host. ``kbt audit`` parses this
file; it never imports it (pypto_pro need not be installed to audit it).
"""

import torch
import pypto_pro.language as pl

BLOCK_DIM = 8  # cores the launch spreads rows over
TILE = 256  # elements of the reduced axis per tile


@pl.jit(auto_mutex=True)
def softmax_kernel(x: pl.Ptr, y: pl.Ptr, n: int, stride_n: int, inner: int, outer: int, tiles: int):
    # Schematic body: pl.cast and pl.set_validshape are the calls seed 003 names; the load,
    # store and reduce names stand for the target's tile API. Per (outer, inner) row: load `n` native-dtype elements `stride_n` apart tile by tile,
    # cast each tile to fp32 on chip, keep a running max and sum, then store y = exp(x - max)
    # / sum cast back to y's dtype. Tails use pl.set_validshape; nothing is padded.
    for row in pl.range(outer * inner):
        base = (row // inner) * n * inner + row % inner
        running_max = pl.full((1,), float("-inf"), pl.float32)
        running_sum = pl.full((1,), 0.0, pl.float32)
        for t in pl.range(tiles):
            tile = pl.cast(pl.load_strided(x, base + t * TILE * stride_n, stride_n, TILE), pl.float32)
            pl.set_validshape(tile, min(TILE, n - t * TILE))
            new_max = pl.maximum(running_max, pl.reduce_max(tile))
            running_sum = running_sum * pl.exp(running_max - new_max) + pl.reduce_sum(pl.exp(tile - new_max))
            running_max = new_max
        for t in pl.range(tiles):
            tile = pl.cast(pl.load_strided(x, base + t * TILE * stride_n, stride_n, TILE), pl.float32)
            pl.set_validshape(tile, min(TILE, n - t * TILE))
            out = pl.cast(pl.exp(tile - running_max) / running_sum, y.dtype)
            pl.store_strided(y, base + t * TILE * stride_n, stride_n, out)


def softmax_wrapper(x, dim=-1):
    """Softmax of ``x`` along ``dim`` (any dimension), same dtype in and out."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"expected a tensor, got {type(x).__name__}")
    if x.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise TypeError(f"unsupported dtype {x.dtype}")
    if x.ndim == 0:
        raise ValueError("softmax needs at least one dimension")
    dim = dim % x.ndim
    n = x.shape[dim]
    inner = 1
    for size in x.shape[dim + 1:]:
        inner *= size
    outer = x.numel() // max(n * inner, 1)
    tiles = (n + TILE - 1) // TILE
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[None, BLOCK_DIM](x, y, n, x.stride(dim), inner, outer, tiles)
    return y
