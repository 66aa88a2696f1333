"""May the packed mask live in the output's own storage? Seed 001 §3.2.2's dense-alias
predicate, asked of a real torch tensor.

The five conditions: (1) row-major contiguous, strides matching the shape; (2) view and
storage offset 0; (3) the view covers its whole storage (a contiguous small view over a
larger storage would let the in-place kernel write into the guard region beyond it);
(4) capacity N·B >= M; (5) no private format. An empty tensor never aliases: the empty
fast path returns before any mask exists (§3.2.1).
"""

from __future__ import annotations

from kb_tools.memory.tiling import ceil_div


def mask_size(n: int) -> int:
    """Bytes of the DSA packed mask for n elements: 128-bit aligned, M = ceil(n/128)·16 (§1.4)."""
    return ceil_div(n, 128) * 16


def row_major_strides(shape) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(tuple(shape)):
        strides.append(step)
        step *= max(int(size), 1)
    return tuple(reversed(strides))


def _private_format(out) -> str | None:
    import torch

    if out.layout != torch.strided:
        return f"layout {out.layout} is not a plain strided layout"
    if out.is_quantized:
        return "quantized tensors carry a private format"
    for fmt, name in ((torch.channels_last, "channels_last"), (torch.channels_last_3d, "channels_last_3d")):
        if out.dim() == (4 if name == "channels_last" else 5) and out.is_contiguous(memory_format=fmt) \
                and not out.is_contiguous():
            return f"memory format {name} is not the row-major order the kernel writes"
    return None


def can_alias(out, mask_bytes: int) -> tuple[bool, str]:
    """(True, "") when a mask of ``mask_bytes`` may be written at the start of ``out``'s storage
    and expanded in place; otherwise (False, the first failing condition of §3.2.2)."""
    n = out.numel()
    if n == 0:
        return False, "empty tensor: the empty fast path returns before any mask is generated"
    private = _private_format(out)
    if private:
        return False, f"condition 5 (format): {private}"
    expected = row_major_strides(out.shape)
    if any(size > 1 and stride != want for size, stride, want in zip(out.shape, out.stride(), expected)):
        return False, f"condition 1 (row-major): strides {tuple(out.stride())} do not match shape {tuple(out.shape)} (want {expected})"
    if out.storage_offset() != 0:
        return False, f"condition 2 (offset): storage offset is {out.storage_offset()} elements, not 0"
    view_bytes = n * out.element_size()
    storage_bytes = out.untyped_storage().nbytes()
    if storage_bytes != view_bytes:
        return False, f"condition 3 (whole storage): the view covers {view_bytes} of {storage_bytes} storage bytes"
    if view_bytes < mask_bytes:
        return False, f"condition 4 (capacity): N*B = {view_bytes} B < mask {mask_bytes} B"
    return True, ""
