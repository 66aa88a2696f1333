"""Run add's kernel and golden for every supported dtype and save what they return.

    python examples/add/make_tensors.py [--out DIR]

For each dtype: a seeded input read through a transposed view (so the kernel's strided
loads are exercised), plus a Python scalar with an ``alpha`` — for integers ``300 * 3``,
which wraps at int8 width. The DUT is the delivered wrapper's Triton kernel (on the CPU
through Triton's interpreter; ``conftest.py`` beside this file sets it for the tests), the
golden the CPU leg. add is two-party for every dtype, so no third-party leg runs. Written
to ``tensors/<dtype>/{input,dut,golden}``: ``.npy``, bfloat16 as ``.pt``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the example's own packages: ops/, legs/
    sys.path.insert(0, str(HERE))
SHAPE, SEED = (5, 67), 22
SCALARS = {"float": (2.5, -1.5), "int": (300, 3)}  # (other, alpha) per dtype kind


def make_input(dtype: str):
    """A (67, 5) transposed view of seeded data: neither contiguous nor a multiple of a block."""
    import torch

    generator = torch.Generator().manual_seed(SEED)
    if dtype.startswith("int"):
        info = torch.iinfo(getattr(torch, dtype))
        base = torch.randint(info.min, info.max, SHAPE, generator=generator, dtype=getattr(torch, dtype))
    else:
        base = (torch.randn(SHAPE, generator=generator) * 8).to(getattr(torch, dtype))
    return base.t()


def scalar_case(dtype: str) -> tuple:
    return SCALARS["int" if dtype.startswith("int") else "float"]


def run_legs(dtype: str) -> dict:
    """{leg name: tensor} for one dtype."""
    from legs.golden import golden_add
    from ops.wrappers.add_wrapper import add_wrapper

    x = make_input(dtype)
    other, alpha = scalar_case(dtype)
    return {"input": x, "dut": add_wrapper(x, other, alpha), "golden": golden_add(x, other, alpha)}


if __name__ == "__main__":
    os.environ.setdefault("TRITON_INTERPRET", "1")  # the saved DUT is the interpreter's run
    from kb_tools.numerics.saved_legs import write_legs
    from ops.prototypes.add import SUPPORTED_DTYPES

    raise SystemExit(write_legs(run_legs, SUPPORTED_DTYPES, HERE / "tensors", __doc__.splitlines()[0]))
