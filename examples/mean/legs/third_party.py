"""Third-party leg of mean (seed 000 §1, §5; ``kb/constraints/third-party-narrowing.md``).

It runs for the three-party dtypes (float16, bfloat16). In TTK this leg is the framework's
operator on a GPU; here it runs on the best device torch finds (CPU on this machine). It
widens exactly as the DUT does (the spec's widening map), computes, and narrows back to the
declared dtype at exit on every path, so its output dtype equals the DUT's.
"""

WIDENING = {"float16": "float32", "bfloat16": "float32", "float32": "float32"}  # = ops/mean.yaml


def third_party_mean(x, dim=None, keepdim=False, device=None):
    """The framework's mean with the DUT's accumulate type; returns x's dtype on the CPU."""
    import torch

    declared = x.dtype
    accumulate = getattr(torch, WIDENING[str(declared).removeprefix("torch.")])
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    wide = x.to(device=device, dtype=accumulate)
    y = torch.mean(wide, dim=dim, keepdim=keepdim) if dim is not None else torch.mean(wide)
    return y.to(dtype=declared).cpu()
