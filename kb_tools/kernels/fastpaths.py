"""The exact fast paths of a random operator in Triton (kb/patterns/exact-fast-paths.md): one
kernel whose mode, chosen on the host from p, writes exact zeros, exact ones or Bernoulli
draws; an empty output still gets its one launch, on one program with nothing to do."""

from __future__ import annotations

import math

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch

ZEROS, ONES, RANDOM = 0, 1, 2


@triton.jit
def bernoulli_kernel(out_ptr, n, p, seed, mode, BLOCK: tl.constexpr):
    """mode 0 stores +0, mode 1 stores 1, mode 2 draws (rand < p); no input value is read."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    if mode == 0:
        v = tl.zeros([BLOCK], tl.float32)
    elif mode == 1:
        v = tl.full([BLOCK], 1.0, tl.float32)
    else:
        v = (tl.rand(seed, i) < p).to(tl.float32)
    tl.store(out_ptr + i, v.to(out_ptr.dtype.element_ty), mask=live)


@triton.jit
def zeros_by_arithmetic_kernel(x_ptr, out_ptr, n, p, BLOCK: tl.constexpr):
    """The counter-example: "p = 0 means x·p", a fill derived from the input's values."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    tl.store(out_ptr + i, tl.load(x_ptr + i, mask=live) * p, mask=live)


def bernoulli(x, p: float, seed: int, offset: int, *, backend: str, block: int = 64):
    """Validate first (dtype/rank, p finite in [0, 1], offset % 4 == 0), then pick the mode from
    p and launch once; grid = one program for an empty output."""
    import torch

    if not x.dtype.is_floating_point or x.ndim > 8:
        raise TypeError(f"unsupported input {x.dtype} of rank {x.ndim}")
    if not (math.isfinite(p) and 0.0 <= p <= 1.0):
        raise ValueError(f"p must be finite and in [0, 1], got {p}")
    if offset % 4:
        raise ValueError(f"offset must be a multiple of 4, got {offset}")
    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    mode = ZEROS if p == 0.0 else ONES if p == 1.0 else RANDOM
    launch(bernoulli_kernel, (max(1, triton.cdiv(out.numel(), block)),), out, out.numel(), p, seed + offset, mode,
           backend=backend, BLOCK=block)
    return out


def zeros_by_arithmetic(x, p: float, *, backend: str, block: int = 64):
    import torch

    out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    launch(zeros_by_arithmetic_kernel, (max(1, triton.cdiv(x.numel(), block)),), x, out, x.numel(), p,
           backend=backend, BLOCK=block)
    return out
