"""Bit reinterpretation inside the kernel (kb/constraints/kernel-bit-reinterpretation.md): the
output's storage written as mask bytes through its own pointer read as uint8, an int64 read as
two int32 words in a stated order. The host passes every tensor as allocated."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch

@triton.jit
def write_mask_kernel(out_ptr, m_bytes, seed, BLOCK: tl.constexpr):
    """A stand-in generator: writes m_bytes pseudo-random mask bytes at the start of out's
    storage, the output pointer read as uint8."""
    j = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = j < m_bytes
    byte = (tl.randint(seed, j) & 0xFF).to(tl.uint8)
    tl.store(out_ptr.to(tl.pointer_type(tl.uint8)) + j, byte, mask=live)


def mask_launcher(*, backend: str, written: list, block: int = 64):
    """``bernoulli_kernel(out, n, mask_bytes, mask_aliases_out, p, seed, offset)`` as the page's
    Do wrapper calls it, reduced to its generator: the mask_bytes bytes go into out's own
    storage when mask_aliases_out, else into an independent buffer (the fallback); each buffer
    written is appended to ``written``."""
    def call(out, n, mask_bytes, mask_aliases_out, p, seed, offset):
        import torch

        target = out if mask_aliases_out else torch.empty(mask_bytes, dtype=torch.uint8, device=out.device)
        launch(write_mask_kernel, (max(1, triton.cdiv(mask_bytes, block)),), target, mask_bytes, seed + offset,
               backend=backend, BLOCK=block)
        written.append(target)
    return call


@triton.jit
def int64_from_words_kernel(x_ptr, out_ptr, n, HIGH_FIRST: tl.constexpr, BLOCK: tl.constexpr):
    """Rebuild each int64 from the two int32 words it is stored as. Little-endian storage puts
    the low word first; HIGH_FIRST=True is the wrong assumption, kept as the counter-example."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    words = x_ptr.to(tl.pointer_type(tl.int32))
    first = tl.load(words + 2 * i, mask=live).to(tl.int64)
    second = tl.load(words + 2 * i + 1, mask=live).to(tl.int64)
    if HIGH_FIRST:
        hi, lo = first, second
    else:
        lo, hi = first, second
    tl.store(out_ptr + i, (hi << 32) | (lo & 0xFFFFFFFF), mask=live)


def int64_from_words(x, *, backend: str, high_first: bool = False, block: int = 64):
    import torch

    out = torch.empty_like(x)
    launch(int64_from_words_kernel, (max(1, triton.cdiv(x.numel(), block)),), x, out, x.numel(),
           backend=backend, HIGH_FIRST=high_first, BLOCK=block)
    return out
