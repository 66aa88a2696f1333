"""Promote in a kernel (kb/constraints/golden-promote.md): the device computes a fused
multiply-add at its own width, one rounding per step, while the golden widens before it
computes and narrows once. The kernel is the device under test; the golden stays torch."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch


@triton.jit
def fma_own_width_kernel(x_ptr, y_ptr, z_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """out = x*y + z with every intermediate in the inputs' dtype: no widening on the device."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    x = tl.load(x_ptr + i, mask=live)
    y = tl.load(y_ptr + i, mask=live)
    z = tl.load(z_ptr + i, mask=live)
    product = x * y  # rounded to the input dtype here
    tl.store(out_ptr + i, product + z, mask=live)


def fma_own_width(x, y, z, *, backend: str, block: int = 1024):
    """x*y + z computed by the kernel at x's dtype (contiguous, same shape)."""
    import torch

    out = torch.empty_like(x)
    launch(fma_own_width_kernel, (triton.cdiv(x.numel(), block),), x, y, z, out, x.numel(),
           backend=backend, BLOCK=block)
    return out
