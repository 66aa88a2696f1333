"""CPU golden leg of _foreach_add (seed 000 §3, ``kb/constraints/golden-promote.md``).

float16, bfloat16 and float32 are judged ``cross_check`` (three-party): TTK's Promote hands
this function lists already raised one step (float16/bfloat16 -> float32, float32 ->
float64), and it casts nothing, on entry or at exit. int32 is judged ``binary_equal``
(two-party, never promoted): the DUT computes int32 at int32, so the golden does too, again
without a cast, and torch's int32 addition wraps as the kernel's does. torch computes.
"""


def golden_foreach_add(xs, other, alpha=1):
    """``torch._foreach_add`` in the dtypes it was handed; a list ``other`` takes ``alpha``."""
    import torch

    if isinstance(other, (list, tuple)):
        return list(torch._foreach_add(list(xs), list(other), alpha=alpha))
    return list(torch._foreach_add(list(xs), other))
