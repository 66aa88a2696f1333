"""A collapsed golden: in a cross_check case the golden leg equal to the third-party leg bit for
bit. The two references then say one thing, which is what a golden that computes at the
device's precision (casts back to the output dtype) gives; the check still passes, so the
commands that read saved legs warn (issue 41 item 2)."""

from __future__ import annotations

GOLDEN_PAGE = "kb/constraints/golden-promote.md"


def same_bits(a, b) -> bool:
    """Whether two tensors hold the same dtype, shape and bytes (NaN payloads included)."""
    import torch

    if a.dtype != b.dtype or tuple(a.shape) != tuple(b.shape):
        return False
    return torch.equal(a.reshape(-1).contiguous().view(torch.uint8), b.reshape(-1).contiguous().view(torch.uint8))


def collapsed_warning(golden, third_party) -> str | None:
    """The warning for a golden that is the third-party leg bit for bit, or None."""
    if third_party is None or golden.numel() == 0 or not same_bits(golden, third_party):
        return None
    return (f"the golden equals the third-party leg bit for bit ({third_party.dtype}, {golden.numel()} elements): "
            "the likely cause is a golden that computes at the device's precision (a cast back to the output "
            f"dtype), which collapses the dual reference; see {GOLDEN_PAGE}")
