"""Run the three legs of softmax for every supported dtype and save what they return.

    python examples/softmax/make_tensors.py [--out DIR]

For each dtype: a seeded input whose reduced axis (dim 1 of a (2, 1100, 3) tensor) is neither
the last nor a multiple of the 1024-element tile, so the strided read, the online rescale
across tiles and the tail tile are all exercised; then the DUT (the delivered wrapper's
Triton kernel, run on Triton's interpreter), the golden under TTK's Promote and the
third-party leg (run on the CPU here, so that the saved tensors reproduce bit for bit on any
machine).
Written to ``tensors/<dtype>/{input,dut,golden,third_party}``: ``.npy``, except bfloat16 legs,
which numpy cannot hold, as ``.pt``. The same seed gives the same tensors.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the example's own packages: ops/ and legs/
    sys.path.insert(0, str(HERE))
SHAPE, DIM, SEED, SCALE = (2, 1100, 3), 1, 15, 6.0


def make_input(dtype: str):
    import torch

    generator = torch.Generator().manual_seed(SEED)
    return (torch.randn(SHAPE, generator=generator) * SCALE).to(getattr(torch, dtype))


def kernel_device() -> str:
    """Where the kernel runs: the CPU under Triton's interpreter, else the CUDA device."""
    return "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


def run_legs(dtype: str, device: str | None = "cpu") -> dict:
    """{leg name: tensor} for one dtype, each leg run by its own rules; ``device`` is the
    third-party leg's (None: CUDA when present). The saved tensors are the CPU run's."""
    import torch

    from kb_tools.numerics.promote import golden_policy, run_leg
    from legs.golden import golden_softmax
    from legs.third_party import WIDENING, third_party_softmax
    from ops.wrappers.softmax_wrapper import softmax_wrapper

    x = make_input(dtype)
    policy = golden_policy(dtype, three_party=True, dut_widening=WIDENING[dtype])
    promoted = x.to(getattr(torch, policy.compute))  # what TTK's Promote hands the golden
    return {"input": x, "dut": softmax_wrapper(x.to(kernel_device()), DIM).cpu(),
            "golden": run_leg(policy, lambda t: golden_softmax(t, DIM), promoted),
            "third_party": third_party_softmax(x, DIM, device)}


if __name__ == "__main__":
    os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: the saved DUT is the interpreter's
    from kb_tools.numerics.saved_legs import write_legs
    from ops.prototypes.softmax import SUPPORTED_DTYPES

    raise SystemExit(write_legs(run_legs, SUPPORTED_DTYPES, HERE / "tensors", __doc__.splitlines()[0]))
