"""CPU golden leg of softmax (seed 000 §3, ``kb/constraints/golden-promote.md``).

Softmax's floating outputs are three-party (``cross_check`` for every dtype), so TTK's Promote
hands this function inputs already raised one step (fp16/bf16 -> fp32, fp32 -> fp64). The golden
casts nothing, on entry or at exit: it computes in the dtype it was handed and returns that
dtype, which keeps it more precise than both same-precision legs it judges. torch computes,
bf16 included (native bf16); numpy only saves and loads the tensors.
"""


def golden_softmax(x, dim=-1):
    """Softmax in ``x``'s own (already promoted) dtype; the output dtype is ``x.dtype``."""
    import torch

    return torch.softmax(x, dim=dim)
