"""Random statistics in a kernel (kb/playbooks/random-op-verification.md): a Bernoulli(p) mask
drawn with ``tl.rand(seed, offset + i)``, a counter-based generator, so the same (seed, offset)
gives the same mask on every run and a shifted offset continues the stream without overlap."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch


@triton.jit
def bernoulli_kernel(out_ptr, n, p, seed, offset, BLOCK: tl.constexpr):
    """out[i] = 1 when the uniform draw of counter offset + i is below p, else 0."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    u = tl.rand(seed, offset + i)
    tl.store(out_ptr + i, (u < p).to(tl.uint8), mask=i < n)


def bernoulli_mask(n: int, p: float, seed: int, offset: int, *, backend: str, block: int = 1024):
    """A uint8 mask of n Bernoulli(p) draws from counters offset .. offset+n-1 of seed's stream."""
    import torch

    from kb_tools.runtime.backends import device

    out = torch.empty(n, dtype=torch.uint8, device=device(backend))
    launch(bernoulli_kernel, (triton.cdiv(n, block),), out, n, p, seed, offset, backend=backend, BLOCK=block)
    return out
