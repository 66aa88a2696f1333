"""The one Bernoulli kernel of kb_tools: random statistics in a kernel
(kb/playbooks/random-op-verification.md) and the exact fast paths of a random operator
(kb/patterns/exact-fast-paths.md, launched by :mod:`kb_tools.kernels.fastpaths`). Its draws
come from ``tl.rand(seed, offset + i)``, a counter-based generator, so the same (seed, offset)
gives the same mask on every run and a shifted offset continues the stream without overlap."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch

ZEROS, ONES, RANDOM = 0, 1, 2  # the modes the host picks from p


@triton.jit
def bernoulli_kernel(out_ptr, n, p, seed, offset, mode, BLOCK: tl.constexpr):
    """out[i] in out's dtype: +0 (mode 0), 1 (mode 1), or 1 where the uniform draw of counter
    offset + i is below p (mode 2); no input value is read."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if mode == 0:
        v = tl.zeros([BLOCK], tl.float32)
    elif mode == 1:
        v = tl.full([BLOCK], 1.0, tl.float32)
    else:
        v = (tl.rand(seed, offset + i) < p).to(tl.float32)
    tl.store(out_ptr + i, v.to(out_ptr.dtype.element_ty), mask=i < n)


def bernoulli_mask(n: int, p: float, seed: int, offset: int, *, backend: str, block: int = 1024):
    """A uint8 mask of n Bernoulli(p) draws from counters offset .. offset+n-1 of seed's stream."""
    import torch

    from kb_tools.runtime.backends import device

    out = torch.empty(n, dtype=torch.uint8, device=device(backend))
    launch(bernoulli_kernel, (max(1, triton.cdiv(n, block)),), out, n, p, seed, offset, RANDOM, backend=backend, BLOCK=block)
    return out
