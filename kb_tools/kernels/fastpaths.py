"""The exact fast paths of a random operator in Triton (kb/patterns/exact-fast-paths.md): the
one Bernoulli kernel (:mod:`kb_tools.kernels.bernoulli_mask`), whose mode, chosen on the host
from p, writes exact zeros, exact ones or draws; an empty output still gets its one launch, on
one program with nothing to do. The host side is the page's own wrapper, with
:class:`BernoulliLauncher` bound to the kernel's name; and the counter-example that derives
the zeros from the input's values."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.kernels.bernoulli_mask import ONES, RANDOM, ZEROS, bernoulli_kernel  # noqa: F401 - the modes, for callers of the launcher
from kb_tools.runtime.backends import launch


@triton.jit
def zeros_by_arithmetic_kernel(x_ptr, out_ptr, n, p, BLOCK: tl.constexpr):
    """The counter-example: "p = 0 means x·p", a fill derived from the input's values."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    tl.store(out_ptr + i, (tl.load(x_ptr + i, mask=live).to(tl.float32) * p).to(out_ptr.dtype.element_ty), mask=live)


class BernoulliLauncher:
    """``bernoulli_kernel[None, block_dim](out, n, p, seed, offset, mode)`` as the page's Do
    wrapper launches it: block_dim programs, each a contiguous share of the elements."""

    def __init__(self, *, backend: str):
        self.backend = backend

    def __getitem__(self, grid):
        _, block_dim = grid

        def call(out, n, p, seed, offset, mode):
            share = max(1, triton.cdiv(n, block_dim))
            launch(bernoulli_kernel, (block_dim,), out, n, p, seed, offset, mode,
                   backend=self.backend, BLOCK=triton.next_power_of_2(share))
        return call


def zeros_by_arithmetic(x, p: float, *, backend: str, block: int = 64):
    import torch

    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    launch(zeros_by_arithmetic_kernel, (max(1, triton.cdiv(x.numel(), block)),), x, out, x.numel(), p,
           backend=backend, BLOCK=block)
    return out
