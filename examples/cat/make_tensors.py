"""Run the legs of cat for every supported dtype and save what they return.

    python examples/cat/make_tensors.py [--out DIR]

The DUT is the delivered wrapper's Triton kernel, run on Triton's interpreter (CPU) so the
saved bits reproduce on any machine. The case joins four tensors along dim -2 of rank 3:
extents 5, 0, 7 and 2, so the extents are unequal and one is zero; the third input is a
transposed (non-contiguous) view. Per dtype: the inputs (``input``, then ``input_1`` ..
``input_3``, saved contiguous), the DUT, the golden (``torch.cat``) and the third-party leg (``torch.cat``
on the CPU), in ``tensors/<dtype>/`` (``.npy``; bfloat16 as ``.pt``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the example's own packages: ops/ and legs/
    sys.path.insert(0, str(HERE))
LEADING, TRAILING, EXTENTS, DIM, SEED = 3, 4, (5, 0, 7, 2), -2, 4


def make_inputs(dtype: str) -> list:
    """Seeded inputs of ``dtype``; floats span several binades, integers reach their extremes."""
    import torch

    generator = torch.Generator().manual_seed(SEED)
    kind = getattr(torch, dtype)
    tensors = []
    for i, extent in enumerate(EXTENTS):
        shape = (LEADING, TRAILING, extent) if i == 2 else (LEADING, extent, TRAILING)
        if kind.is_floating_point:
            t = (torch.randn(shape, generator=generator) * 100).to(kind)
        elif kind == torch.bool:
            t = torch.randint(0, 2, shape, generator=generator).to(kind)
        else:
            info = torch.iinfo(kind)
            t = torch.randint(info.min, info.max, shape, generator=generator, dtype=torch.int64).to(kind)
        tensors.append(t.transpose(1, 2) if i == 2 else t)  # the third is read through its strides
    return tensors


def kernel_device() -> str:
    """Where the kernel runs: the CPU under Triton's interpreter, else the CUDA device."""
    return "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


def run_legs(dtype: str, device: str | None = "cpu") -> dict:
    """{leg name: tensor} for one dtype; ``device`` is the third-party leg's (None: CUDA when present)."""
    from kb_tools.numerics.promote import golden_policy, run_leg
    from legs.golden import golden_cat
    from legs.third_party import third_party_cat
    from ops.wrappers.cat_wrapper import cat_wrapper

    tensors = make_inputs(dtype)
    policy = golden_policy(dtype, three_party=False, dut_widening=None)
    legs = {("input" if i == 0 else f"input_{i}"): t for i, t in enumerate(tensors)}
    legs.update(dut=cat_wrapper([t.to(kernel_device()) for t in tensors], DIM).cpu(), golden=run_leg(policy, lambda *ts: golden_cat(ts, DIM), *tensors),
                third_party=third_party_cat(tensors, DIM, device))
    return legs


if __name__ == "__main__":
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: the saved DUT is the interpreter's
    from kb_tools.numerics.saved_legs import write_legs
    from ops.prototypes.cat import SUPPORTED_DTYPES

    raise SystemExit(write_legs(run_legs, SUPPORTED_DTYPES, HERE / "tensors", __doc__.splitlines()[0]))
