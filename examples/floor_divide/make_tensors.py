"""Run floor_divide's kernel and golden for every supported dtype and save what they return.

    python examples/floor_divide/make_tensors.py [--out DIR]

For each dtype: a seeded dividend read through a transposed view, whose first row holds the
dtype's minimum, and a seeded divisor of the same dtype holding -1 (INT_MIN // -1 among
them), 0 and values of both signs. The DUT is the delivered wrapper's Triton kernel (on the
CPU through Triton's interpreter), the golden the CPU leg; floor_divide is two-party, so no
third-party leg runs. Written to ``tensors/<dtype>/{input,other,dut,golden}.npy``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the example's own packages: ops/, legs/
    sys.path.insert(0, str(HERE))
SHAPE, SEED = (9, 40), 22


def make_inputs(dtype: str):
    """(dividend, divisor): a (40, 9) transposed view and a contiguous tensor of its shape."""
    import torch

    torch_dtype = getattr(torch, dtype)
    info = torch.iinfo(torch_dtype)
    generator = torch.Generator().manual_seed(SEED)
    base = torch.randint(info.min, info.max, SHAPE, generator=generator, dtype=torch_dtype)
    base[0] = info.min
    divisor = torch.randint(-9, 10, SHAPE[::-1], generator=generator).to(torch_dtype)  # -1 and 0 among them; uint8 wraps
    divisor[0, :3] = torch.tensor([-1, 0, 1]).to(torch_dtype)
    return base.t(), divisor


def run_legs(dtype: str) -> dict:
    """{leg name: tensor} for one dtype."""
    from legs.golden import golden_floor_divide
    from ops.wrappers.floor_divide_wrapper import floor_divide_wrapper

    x, other = make_inputs(dtype)
    return {"input": x, "other": other, "dut": floor_divide_wrapper(x, other), "golden": golden_floor_divide(x, other)}


if __name__ == "__main__":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # the saved DUT is the interpreter's run
    from kb_tools.numerics.saved_legs import write_legs
    from ops.prototypes.floor_divide import SUPPORTED_DTYPES

    raise SystemExit(write_legs(run_legs, SUPPORTED_DTYPES, HERE / "tensors", __doc__.splitlines()[0]))
