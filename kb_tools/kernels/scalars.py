"""A tensor-scalar add in Triton (kb/constraints/scalar-operand-promotion.md): the output dtype
comes from the framework's promotion, the scalar arrives as a launch scalar and the kernel
converts it to the computation dtype itself."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch


@triton.jit
def add_scalar_kernel(x_ptr, y_ptr, n, other, alpha, COMPUTE: tl.constexpr, BLOCK: tl.constexpr):
    """y = x + alpha·other in COMPUTE, stored in y's dtype. Integers compute in int64 and wrap
    at the output's width on the store, as torch wraps an out-of-range scalar."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    x = tl.load(x_ptr + i, mask=live).to(COMPUTE)
    s = tl.full([BLOCK], other, COMPUTE) * tl.full([BLOCK], alpha, COMPUTE)  # the scalar converted in the kernel
    tl.store(y_ptr + i, (x + s).to(y_ptr.dtype.element_ty), mask=live)


def compute_dtype(out_dtype):
    """fp64 for fp64, fp32 for the narrower floats (torch's opmath), int64 for integers and bool."""
    import torch

    if out_dtype == torch.float64:
        return tl.float64
    return tl.float32 if out_dtype.is_floating_point else tl.int64


def add_scalar(x, other, out_dtype, *, backend: str, alpha=1, block: int = 64):
    """One launch: x (any dtype) + alpha·other into a new tensor of ``out_dtype``. The scalar is
    handed over as given; Triton types a Python float as fp32, so keep test scalars exact there."""
    import torch

    y = torch.empty(x.shape, dtype=out_dtype, device=x.device)
    launch(add_scalar_kernel, (max(1, triton.cdiv(x.numel(), block)),), x, y, x.numel(), other, alpha,
           backend=backend, COMPUTE=compute_dtype(out_dtype), BLOCK=block)
    return y
