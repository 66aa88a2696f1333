"""Third-party leg of softmax (seed 000 §1, §5; ``kb/constraints/third-party-narrowing.md``).

In TTK this leg runs the framework's operator on a GPU; here it runs on the best device
``torch`` finds (CPU on this machine). It follows the DUT's widening from the spec's map
(float16 and bfloat16 -> float32; float32 stays), computes, and narrows back to the declared
output dtype at exit, as the DUT's store does, so its output dtype equals the DUT's.
"""

WIDENING = {"float16": "float32", "bfloat16": "float32", "float32": "float32"}  # = ops/softmax.yaml


def third_party_softmax(x, dim=-1, device=None):
    """The framework's softmax with the DUT's accumulate type; returns x's dtype on the CPU."""
    import torch

    declared = x.dtype
    accumulate = getattr(torch, WIDENING[str(declared).removeprefix("torch.")])
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    y = torch.softmax(x.to(device=device, dtype=accumulate), dim=dim)
    return y.to(dtype=declared).cpu()
