"""Run the legs of bernoulli for every supported dtype and save what they return.

    python examples/bernoulli/make_tensors.py [--out DIR]

The DUT is the delivered wrapper's Triton kernel, run on Triton's interpreter (CPU) so that
the saved bits reproduce on any machine. The output is a (3, 700) tensor: dense, so the
aliased path runs, and large enough for three high-to-low waves at one-byte widths. Per
dtype: the input (zeros: only its shape and dtype matter), the DUT, the golden (the same
Philox stream drawn in torch) and the third-party leg (``Tensor.bernoulli_``, CPU), in
``tensors/<dtype>/{input,dut,golden,third_party}`` (``.npy``; bfloat16 as ``.pt``).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the example's own packages: ops/ and legs/
    sys.path.insert(0, str(HERE))
SHAPE, P, SEED, OFFSET = (3, 700), 0.3, 2026, 8


def kernel_device() -> str:
    """Where the kernel runs: the CPU under Triton's interpreter, else the CUDA device."""
    return "cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda"


def run_legs(dtype: str, device: str | None = "cpu") -> dict:
    """{leg name: tensor} for one dtype; ``device`` is the third-party leg's (None: CUDA when present)."""
    import torch

    from kb_tools.numerics.promote import golden_policy, run_leg
    from legs.golden import golden_bernoulli
    from legs.third_party import third_party_bernoulli
    from ops.wrappers.bernoulli_wrapper import bernoulli_wrapper

    x = torch.zeros(SHAPE, dtype=getattr(torch, dtype))
    policy = golden_policy(dtype, three_party=False, dut_widening=None)
    return {"input": x, "dut": bernoulli_wrapper(x.to(kernel_device()), P, SEED, OFFSET).cpu(),
            "golden": run_leg(policy, lambda t: golden_bernoulli(t, P, SEED, OFFSET), x),
            "third_party": third_party_bernoulli(x, P, SEED, device)}


if __name__ == "__main__":
    os.environ["TRITON_INTERPRET"] = "1"  # before the kernel module is imported: the saved DUT is the interpreter's
    from kb_tools.numerics.saved_legs import write_legs
    from ops.prototypes.bernoulli import SUPPORTED_DTYPES

    raise SystemExit(write_legs(run_legs, SUPPORTED_DTYPES, HERE / "tensors", __doc__.splitlines()[0]))
