"""A tensor-scalar add in Triton (kb/constraints/scalar-operand-promotion.md): the output dtype
comes from the framework's promotion, the scalar arrives as a launch scalar and the kernel
converts it to the computation dtype itself. The host side is the page's own wrapper; Triton
types a Python float launch scalar as fp32, so exact test scalars keep fp64 results exact."""

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


@triton.jit
def add_scalar_tensor_kernel(x_ptr, s_ptr, y_ptr, n, alpha, BLOCK: tl.constexpr):
    """The page's Don't: the scalar folded into a one-element tensor of x's dtype on the host."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    tl.store(y_ptr + i, tl.load(x_ptr + i, mask=live) + tl.load(s_ptr) * alpha, mask=live)


def add_launcher(*, backend: str, block: int = 64):
    """``add_scalar_kernel(x, y, n, other, alpha)`` as the page's Do wrapper calls it."""
    def call(x, y, n, other, alpha):
        launch(add_scalar_kernel, (max(1, triton.cdiv(n, block)),), x, y, n, other, alpha,
               backend=backend, COMPUTE=compute_dtype(y.dtype), BLOCK=block)
    return call


def host_scalar_launcher(*, backend: str, block: int = 64):
    """``add_scalar_kernel(x, s, y, n, alpha)`` as the page's Don't calls it (s a tensor)."""
    def call(x, s, y, n, alpha):
        launch(add_scalar_tensor_kernel, (max(1, triton.cdiv(n, block)),), x, s, y, n, alpha,
               backend=backend, BLOCK=block)
    return call
