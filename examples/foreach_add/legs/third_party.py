"""Third-party leg of _foreach_add (seed 000 §1, §5; ``kb/constraints/third-party-narrowing.md``).

It runs for the three-party dtypes (float16, bfloat16, float32). In TTK this leg is the
framework's operator on a GPU; here it runs on the best device torch finds (CPU on this
machine). It widens exactly as the DUT does (the spec's widening map: float16 and bfloat16
-> float32), computes, and narrows every output back to its declared dtype at exit on one
path, so its dtypes equal the DUT's.
"""

WIDENING = {"float16": "float32", "bfloat16": "float32"}  # = ops/foreach_add.yaml


def third_party_foreach_add(xs, other, alpha=1, device=None):
    """The framework's _foreach_add with the DUT's accumulate type; returns the declared dtypes on the CPU."""
    import torch

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    pairs = list(other) if isinstance(other, (list, tuple)) else [other] * len(xs)
    declared = [torch.result_type(x, y) for x, y in zip(xs, pairs)]

    def widened(t):
        name = str(t.dtype).removeprefix("torch.")
        return t.to(device=device, dtype=getattr(torch, WIDENING.get(name, name)))

    wide = [widened(x) for x in xs]
    if isinstance(other, (list, tuple)):
        outs = torch._foreach_add(wide, [widened(y) for y in other], alpha=alpha)
    else:
        outs = torch._foreach_add(wide, other)
    return [y.to(dtype=d).cpu() for y, d in zip(outs, declared)]
