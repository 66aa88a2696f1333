"""Delivered softmax wrapper and its one kernel, in the PyPTO-Pro shape (seed 003).

The wrapper validates against the prototype, reads metadata, derives Python integers,
allocates the declared output with ``torch.empty`` and launches the one ``@pl.jit`` kernel
once, on every path, empty tensors included. No cast, layout change, reshape or arithmetic
on a tensor runs on the host: the kernel reads ``x`` where it lies and widens per tile.

CPU REFERENCE KERNEL BODY: on the accelerator the body below is tile code (pl.load of a
native-dtype tile, pl.cast to fp32, running max and sum, pl.cast back before pl.store, tails
by pl.set_validshape). Here it is written with torch on the host so that the example runs on
any CPU through the stand-in ``pypto_pro`` package beside it; it keeps the tile algorithm —
the same tile size, the same fp32 running max and sum, the same narrowing at the store.
"""

import torch
import pypto_pro.language as pl

from ops.prototypes.softmax import SUPPORTED_DTYPES, SUPPORTED_RANKS

BLOCK_DIM = 8  # cores the launch spreads rows over
TILE = 256  # elements of the reduced axis per tile


@pl.jit(auto_mutex=True)
def softmax_kernel(x: pl.Ptr, y: pl.Ptr, dim: int, n: int, tiles: int):
    """CPU reference body (see the module docstring): online softmax over tiles of the axis."""
    rows = x.movedim(dim, -1)  # a strided view: the axis is read through its stride, not copied
    out = y.movedim(dim, -1)
    running_max = torch.full(rows.shape[:-1], float("-inf"), dtype=torch.float32)
    running_sum = torch.zeros(rows.shape[:-1], dtype=torch.float32)
    for t in range(tiles):  # pass 1: fp32 running max and sum, tile by tile
        tile = rows[..., t * TILE:min((t + 1) * TILE, n)].to(torch.float32)  # on-chip widen (pl.cast)
        new_max = torch.maximum(running_max, tile.amax(dim=-1))
        rescale = torch.exp(running_max - new_max).nan_to_num(0.0)  # first tile: exp(-inf) = 0
        running_sum = running_sum * rescale + torch.exp(tile - new_max[..., None]).sum(dim=-1)
        running_max = new_max
    for t in range(tiles):  # pass 2: normalise in fp32, narrow per tile at the store
        tile = rows[..., t * TILE:min((t + 1) * TILE, n)].to(torch.float32)
        value = torch.exp(tile - running_max[..., None]) / running_sum[..., None]
        out[..., t * TILE:min((t + 1) * TILE, n)] = value.to(y.dtype)  # per-tile narrowing (pl.cast)


def softmax_wrapper(x, dim=-1):
    """Softmax of ``x`` along ``dim`` (any dimension); same dtype and shape in and out."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"softmax: expected a tensor, got {type(x).__name__}")
    dtype_name = str(x.dtype).removeprefix("torch.")
    if dtype_name not in SUPPORTED_DTYPES:
        raise TypeError(f"softmax: dtype {dtype_name} is not supported; supported: {', '.join(SUPPORTED_DTYPES)}")
    if x.ndim not in SUPPORTED_RANKS:
        raise ValueError(f"softmax: rank {x.ndim} is not supported; supported ranks: {SUPPORTED_RANKS}")
    if not -x.ndim <= dim < x.ndim:
        raise IndexError(f"softmax: dim {dim} is out of range for rank {x.ndim}")
    dim = dim % x.ndim
    n = x.shape[dim]
    tiles = (n + TILE - 1) // TILE
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    softmax_kernel[None, BLOCK_DIM](x, y, dim, n, tiles)
    return y
