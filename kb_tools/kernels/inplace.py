"""In-place writes (kb/constraints/inplace-aliasing.md): a tile kernel that reads each tile
before writing the same tile, so the output may be exactly its input. Handed a partial overlap
it returns whatever its launch geometry makes of it, which is why the page rejects that call."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch


@triton.jit
def add_one_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out[i] = x[i] + 1; each program loads its whole tile before it stores that tile."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=live) + 1, mask=live)


def add_one(x, out, *, backend: str, block: int = 64):
    """One launch over contiguous ``x`` into contiguous ``out`` (either may be the other)."""
    n = x.numel()
    launch(add_one_kernel, (max(1, triton.cdiv(n, block)),), x, out, n, backend=backend, BLOCK=block)
    return out

