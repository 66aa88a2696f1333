"""CPU golden leg of cat: ``torch.cat`` on the same tensors (seed 004 §3.2).

cat is pure data movement, judged ``binary_equal`` for every dtype (two-party,
``ops/cat.yaml``): the kernel widens nothing, so the golden casts nothing, on entry or at
exit, and computes in the inputs' own dtype (bf16 and bool natively in torch). Nothing here
imports the kernel or its wrapper.
"""


def golden_cat(tensors, dim=0):
    """The framework's concatenation; the output dtype is the inputs'."""
    import torch

    return torch.cat(list(tensors), dim)
