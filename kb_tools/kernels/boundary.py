"""The wrapper boundary with a kernel (kb/constraints/wrapper-boundary.md): a compliant wrapper
allocates its output and launches one kernel that does the casts itself; the anti-pattern casts
on the host before and after the launch, work that a dispatch trace shows as the wrapper's ATen
operators."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch


@triton.jit
def scaled_cast_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    """out = (x widened to fp32) * alpha, stored at the output's dtype: the cast is in the kernel."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    x = tl.load(x_ptr + i, mask=live, other=0).to(tl.float32)
    tl.store(out_ptr + i, (x * alpha).to(out_ptr.dtype.element_ty), mask=live)


def compliant_scale(x, alpha: float, *, backend: str, block: int = 1024):
    """One allocation, one launch: the kernel reads x as it is (contiguous) and casts inside."""
    import torch

    out = torch.empty_like(x)
    launch(scaled_cast_kernel, (triton.cdiv(x.numel(), block),), x, out, x.numel(), alpha,
           backend=backend, BLOCK=block)
    return out


def host_cast_scale(x, alpha: float, *, backend: str, block: int = 1024):
    """The anti-pattern: the wrapper widens x on the host before the launch and narrows the
    result after it, two host casts (the wrapper-boundary rule) outside the kernel besides the output's allocation."""
    import torch

    wide = x.float()
    out = torch.empty_like(wide)
    launch(scaled_cast_kernel, (triton.cdiv(wide.numel(), block),), wide, out, wide.numel(), alpha,
           backend=backend, BLOCK=block)
    return out.to(x.dtype)
