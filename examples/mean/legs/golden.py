"""CPU golden leg of mean (seed 000 §3, ``kb/constraints/golden-promote.md``).

float16 and bfloat16 are judged ``cross_check`` (three-party): TTK's Promote hands this
function inputs already raised to float32, and it casts nothing, on entry or at exit, so it
stays more precise than both same-precision legs. float32 is judged ``mix_tolerance``
(two-party): no Promote, and since the DUT does not widen float32 (the spec's widening maps it
to itself), the golden computes in float32 and again casts nothing. torch computes.
"""


def golden_mean(x, dim=None, keepdim=False):
    """The mean in ``x``'s own dtype (already promoted where the case is three-party)."""
    import torch

    return torch.mean(x, dim=dim, keepdim=keepdim) if dim is not None else torch.mean(x)
