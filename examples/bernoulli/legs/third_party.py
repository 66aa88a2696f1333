"""Third-party leg of bernoulli: the framework's own ``Tensor.bernoulli_`` (seed 001 §5.1).

Its generator is not the kernel's, so this leg is never compared element by element; only
its value set and its distribution are judged (``test_bernoulli.py``: Wilson, exact binomial,
Holm). It runs on the best device torch finds and returns the output on the CPU in the
output's own dtype; the framework computes in that dtype (no widening).
"""


def third_party_bernoulli(x, p, seed: int, device=None):
    """torch's in-place Bernoulli on a tensor shaped and typed like ``x``."""
    import torch

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    generator = torch.Generator(device=device).manual_seed(seed)
    return torch.empty(x.shape, dtype=x.dtype, device=device).bernoulli_(float(p), generator=generator).cpu()
