"""Third-party leg of cat: the framework's ``torch.cat`` on the best device torch finds.

In TTK this leg runs on a GPU; here it runs on CUDA when present, else the CPU. cat
converts nothing, so the leg neither widens nor narrows: its output dtype is the inputs'
(the DUT's), and it is returned on the CPU.
"""


def third_party_cat(tensors, dim=0, device=None):
    """torch.cat of the tensors moved to ``device`` (None: CUDA when present)."""
    import torch

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    return torch.cat([t.to(device) for t in tensors], dim).cpu()
