"""Narrowing in a kernel (kb/constraints/integer-narrowing.md): int8/int16 arithmetic wraps at
every step in the kernel. For + and * wrapping per step equals wrapping once at the end (both
are arithmetic modulo 2^bits); a division after a wrapped product does not, since the quotient
of the wrapped value is not the wrapped quotient."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch


@triton.jit
def wrap_chain_kernel(a_ptr, b_ptr, c_ptr, sum_ptr, quot_ptr, n, BLOCK: tl.constexpr):
    """sum = a*b + c and quot = (a*b) / c (truncating), all at the inputs' integer width."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    a = tl.load(a_ptr + i, mask=live, other=0)
    b = tl.load(b_ptr + i, mask=live, other=0)
    c = tl.load(c_ptr + i, mask=live, other=1)
    product = a * b  # wraps at the input width
    tl.store(sum_ptr + i, product + c, mask=live)
    tl.store(quot_ptr + i, product // c, mask=live)  # Triton integer // truncates toward zero


def wrap_chain(a, b, c, *, backend: str, block: int = 1024):
    """(a*b + c, trunc((a*b) / c)) computed by the kernel at a's integer dtype; c has no zero."""
    import torch

    total, quotient = torch.empty_like(a), torch.empty_like(a)
    launch(wrap_chain_kernel, (triton.cdiv(a.numel(), block),), a, b, c, total, quotient, a.numel(),
           backend=backend, BLOCK=block)
    return total, quotient
