"""Run _foreach_add's legs for every supported dtype and save what they return.

    python examples/foreach_add/make_tensors.py [--out DIR]

For each dtype: a seeded list of five tensors — a (3, 40) matrix, a 0-d tensor, an empty
one, 300 elements (two programs' worth) and a rank-4 one — plus a paired list, added with
alpha = 2 in one launch. Each dtype is its own case, decided by its criterion: the floats
are three-party (Promote for the golden, the third-party leg runs), int32 two-party. The DUT
is the delivered wrapper's Triton kernel, on the CPU through Triton's interpreter. A list's
legs are saved as one tensor each: every tensor flattened and the list concatenated in
order (the comparison is element by element), to ``tensors/<dtype>/``: ``.npy``, bfloat16 as ``.pt``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the example's own packages: ops/, legs/
    sys.path.insert(0, str(HERE))
SHAPES, SEED, SCALE, ALPHA = ((3, 40), (), (0,), (300,), (2, 3, 4, 5)), 22, 8.0, 2
CRITERIA = {"float16": "cross_check", "bfloat16": "cross_check", "float32": "cross_check", "int32": "binary_equal"}  # = ops/foreach_add.yaml


def make_lists(dtype: str):
    """(xs, ys): two seeded lists of SHAPES in ``dtype``."""
    import torch

    generator = torch.Generator().manual_seed(SEED)
    torch_dtype = getattr(torch, dtype)
    if dtype == "int32":
        draw = lambda shape: torch.randint(-2**31, 2**31 - 1, shape, generator=generator, dtype=torch_dtype)  # noqa: E731
    else:
        draw = lambda shape: (torch.randn(shape, generator=generator) * SCALE).to(torch_dtype)  # noqa: E731
    return [draw(s) for s in SHAPES], [draw(s) for s in SHAPES]


def flat(tensors):
    """The list as one tensor: each flattened, concatenated in order."""
    import torch

    return torch.cat([t.reshape(-1) for t in tensors])


def run_legs(dtype: str, device: str | None = "cpu") -> dict:
    """{leg name: tensor} for one dtype; ``device`` is the third-party leg's (None: CUDA when present)."""
    import torch

    from kb_tools.numerics.promote import case_mode, golden_policy
    from legs.golden import golden_foreach_add
    from legs.third_party import WIDENING, third_party_foreach_add
    from ops.wrappers.foreach_add_wrapper import foreach_add_wrapper

    xs, ys = make_lists(dtype)
    three_party = case_mode({dtype: CRITERIA[dtype]}).three_party
    policy = golden_policy(dtype, three_party=three_party, dut_widening=WIDENING.get(dtype))
    handed = [[t.to(getattr(torch, policy.compute)) for t in ts] for ts in (xs, ys)]  # Promote, or the DUT's own type
    legs = {"input": flat(xs), "other": flat(ys), "dut": flat(foreach_add_wrapper(xs, ys, ALPHA)),
            "golden": flat(golden_foreach_add(*handed, alpha=ALPHA))}
    if three_party:
        legs["third_party"] = flat(third_party_foreach_add(xs, ys, ALPHA, device=device))
    return legs


if __name__ == "__main__":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # the saved DUT is the interpreter's run
    from kb_tools.numerics.saved_legs import write_legs
    from ops.prototypes.foreach_add import SUPPORTED_DTYPES

    raise SystemExit(write_legs(run_legs, SUPPORTED_DTYPES, HERE / "tensors", __doc__.splitlines()[0]))
