"""The memory-parity cases compared in the notebook, the benchmark and on a GPU: picklable
(setup, op) pairs, since each run happens in a fresh process (see :mod:`parity`).

``setup`` allocates the output, as a framework call's caller would; ``op`` fills it by one
of three routes: the aliased path (mask inside the output, expanded in place), a
separate-mask path (an independent M-byte mask expanded into the output), and torch's own
``Tensor.bernoulli_``.
"""

from __future__ import annotations

from functools import partial


def allocate(device, *, n: int, dtype: str):
    import torch

    return torch.zeros(n, dtype=getattr(torch, dtype), device=device)


def aliased(out, *, p: float = 0.5, seed: int = 0) -> None:
    from kb_tools.memory.bernoulli import bernoulli_

    bernoulli_(out, p, seed)


def separate_mask(out, *, p: float = 0.5, seed: int = 0) -> None:
    import torch

    from kb_tools.memory.alias import mask_size
    from kb_tools.memory.bernoulli import generate_mask
    from kb_tools.memory.expand import default_tile, expand_from

    tile = default_tile(out.element_size())
    mask = torch.empty(mask_size(out.numel()), dtype=torch.uint8, device=out.device)
    generate_mask(mask, out.numel(), p, seed, 0, tile)
    expand_from(mask, out, tile=tile)


def torch_bernoulli(out, *, p: float = 0.5, seed: int = 0) -> None:
    import torch

    torch.manual_seed(seed)
    out.bernoulli_(p)


ROUTES = {"aliased": aliased, "separate mask": separate_mask, "Tensor.bernoulli_": torch_bernoulli}


def case(route: str, n: int, dtype: str, p: float = 0.5):
    """(setup, op) for one route on n elements of ``dtype``."""
    return partial(allocate, n=n, dtype=dtype), partial(ROUTES[route], p=p)
