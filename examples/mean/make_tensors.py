"""Run mean's legs for every supported dtype and save what they return.

    python examples/mean/make_tensors.py [--out DIR]

For each dtype: a seeded (4, 300, 3) input, reduced over dim 1 — neither the last axis nor a
multiple of the reduction block, so strided loads and a masked tail are both exercised.
Each dtype is its own case, whose mode its criterion decides: float16 and bfloat16 are
three-party (the golden gets Promote's float32, the third-party leg runs), float32 two-party
(the golden follows the DUT, no third-party leg). The DUT is the delivered wrapper's Triton
kernel, on the CPU through Triton's interpreter. Written to ``tensors/<dtype>/``: ``.npy``,
bfloat16 legs as ``.pt``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the example's own packages: ops/, legs/
    sys.path.insert(0, str(HERE))
SHAPE, DIM, SEED, SCALE = (4, 300, 3), 1, 22, 4.0
CRITERIA = {"float16": "cross_check", "bfloat16": "cross_check", "float32": "mix_tolerance"}  # = ops/mean.yaml


def make_input(dtype: str):
    import torch

    generator = torch.Generator().manual_seed(SEED)
    return (torch.randn(SHAPE, generator=generator) * SCALE + 1.0).to(getattr(torch, dtype))


def run_legs(dtype: str, device: str | None = "cpu") -> dict:
    """{leg name: tensor} for one dtype; ``device`` is the third-party leg's (None: CUDA when present)."""
    import torch

    from kb_tools.numerics.promote import case_mode, golden_policy, run_leg
    from legs.golden import golden_mean
    from legs.third_party import WIDENING, third_party_mean
    from ops.wrappers.mean_wrapper import mean_wrapper

    x = make_input(dtype)
    three_party = case_mode({dtype: CRITERIA[dtype]}).three_party
    policy = golden_policy(dtype, three_party=three_party, dut_widening=WIDENING[dtype])
    handed = x.to(getattr(torch, policy.compute))  # what TTK hands the golden (Promote, or the DUT's type)
    legs = {"input": x, "dut": mean_wrapper(x, DIM), "golden": run_leg(policy, lambda t: golden_mean(t, DIM), handed)}
    if three_party:
        legs["third_party"] = third_party_mean(x, DIM, device=device)
    return legs


if __name__ == "__main__":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # the saved DUT is the interpreter's run
    from kb_tools.numerics.saved_legs import write_legs
    from ops.prototypes.mean import SUPPORTED_DTYPES

    raise SystemExit(write_legs(run_legs, SUPPORTED_DTYPES, HERE / "tensors", __doc__.splitlines()[0]))
