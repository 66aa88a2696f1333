"""Precision metrics in a kernel (kb/constraints/precision-criteria.md): a row sum whose
accumulator dtype and walk order are compile-time choices, so fp16 against fp32 accumulation and
forward against reversed reduction order are measured on the same data by the same kernel."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n, ACC_FP32: tl.constexpr, REVERSE: tl.constexpr, TILE: tl.constexpr):
    """Program r sums row r TILE elements at a time, first tile to last (or last to first),
    in an fp32 or fp16 accumulator; the result is stored in fp32, so only the accumulator rounds."""
    r = tl.program_id(0)
    if ACC_FP32:
        acc = tl.zeros([TILE], tl.float32)
    else:
        acc = tl.zeros([TILE], tl.float16)
    tiles = tl.cdiv(n, TILE)
    for t in range(0, tiles):
        c = tiles - 1 - t if REVERSE else t
        k = c * TILE + tl.arange(0, TILE)
        acc += tl.load(x_ptr + r * n + k, mask=k < n, other=0).to(acc.dtype)
    tl.store(out_ptr + r, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def row_sum(x, *, backend: str, acc_fp32: bool, reverse: bool = False, tile: int = 64):
    """Sum of each row of a contiguous 2-D x, as the kernel accumulates it (an fp32 tensor)."""
    import torch

    rows, n = x.shape
    out = torch.empty(rows, dtype=torch.float32, device=x.device)
    launch(row_sum_kernel, (rows,), x, out, n, backend=backend, ACC_FP32=acc_fp32, REVERSE=reverse, TILE=tile)
    return out
