"""The worked softmax operator's own tests: the runtime invariants its KB_USAGE.json claims.

Run with ``python -m pytest examples/softmax/test_softmax.py`` (``tests/test_examples.py`` does).
The kernel runs on Triton's interpreter (``conftest.py`` sets TRITON_INTERPRET=1 where no CUDA
device is present) or on CUDA; inputs go to the kernel's device and results come back.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

import make_tensors
from harness import Example, Launches, host_trace, plant
from legs.golden import golden_softmax
from legs.third_party import WIDENING
from ops.prototypes import softmax as prototype

from kb_tools.numerics.criteria import judge
from kb_tools.numerics.promote import case_mode
from ops.wrappers import softmax_wrapper as delivered

EXAMPLE = Example(__file__)
SPEC = EXAMPLE.spec
DTYPES = list(prototype.SUPPORTED_DTYPES)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def run(x, dim=-1):
    """The delivered wrapper on the kernel's device; the result on the CPU."""
    return delivered.softmax_wrapper(x.to(DEVICE), dim).cpu()


@pytest.fixture
def launches(monkeypatch):
    return Launches.installed(monkeypatch, delivered, "softmax_kernel")


def test_prototype_matches_spec():
    EXAMPLE.check_prototype(prototype)
    assert WIDENING == SPEC["widening"]


def test_case_is_three_party_from_declared_criteria():
    mode = case_mode(SPEC["criteria"])
    assert mode.three_party and mode.promote


@pytest.mark.parametrize("dtype", DTYPES)
def test_saved_tensors_reproduce_and_pass_cross_check(dtype):
    legs = make_tensors.run_legs(dtype, device="cpu")
    interpreted = make_tensors.kernel_device() == "cpu"  # compiled exp may differ in the last bit: judged below
    EXAMPLE.check_saved(legs, dtype, ("input", "dut", "golden", "third_party") if interpreted else ("input", "golden", "third_party"))
    assert legs["third_party"].dtype == legs["dut"].dtype  # leg dtypes match the DUT
    # the golden sits one step above both same-precision legs (Promote: fp16/bf16 -> fp32, fp32 -> fp64)
    assert legs["golden"].dtype == getattr(torch, "float64" if dtype == "float32" else "float32")
    assert legs["golden"].dtype.itemsize > legs["dut"].dtype.itemsize
    EXAMPLE.check_legs(legs, dtype, "cross_check")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the third-party leg ran on the CPU only")
@pytest.mark.parametrize("dtype", DTYPES)
def test_third_party_leg_on_cuda_passes_cross_check(dtype):
    legs = make_tensors.run_legs(dtype, device="cuda")
    assert legs["third_party"].dtype == legs["dut"].dtype and legs["third_party"].device.type == "cpu"
    verdict = judge("cross_check", legs["dut"], legs["golden"], legs["third_party"], dtype=dtype)
    assert verdict.passed, verdict.reasons


def test_golden_casts_nothing():
    for dtype in (torch.float32, torch.float64):
        assert golden_softmax(torch.randn(3, 5, dtype=dtype)).dtype == dtype


def test_fp32_accumulator_where_fp16_would_overflow():
    n = 70_000  # a row of zeros: the fp16 sum of exp(0) overflows at 65504
    x = torch.zeros(1, n, dtype=torch.float16)
    assert torch.isinf(torch.exp(x).sum(dtype=torch.float16))
    y = run(x)
    assert torch.isfinite(y).all() and torch.allclose(y.float(), torch.full((1, n), 1 / n), rtol=1e-3)


def test_bf16_exponential_widened():
    x = torch.linspace(-20, 20, 1001, dtype=torch.bfloat16)
    wide = torch.softmax(x.float(), 0)
    assert (run(x).float() - wide).abs().max() <= (torch.softmax(x, 0).float() - wide).abs().max()


def test_launches_once_on_every_path_and_rejects_before_launch(launches):
    cases = ((torch.randn(2, 3), -1), (torch.randn(2, 3, 4).transpose(0, 2), 1), (torch.empty(0, 4), 0),
             (torch.empty(3, 0), 1), (torch.tensor(2.5), 0), (torch.tensor(2.5), -1))
    for x, dim in cases:
        y = run(x, dim)
        assert torch.equal(y, torch.softmax(x, dim)) or torch.allclose(y, torch.softmax(x, dim), rtol=1e-6, atol=1e-7)
    assert launches.count == len(cases)
    for bad, error in ((torch.ones(3, dtype=torch.int32), TypeError), (torch.ones(1, 1, 1, 1, 1), ValueError),
                       ([1.0, 2.0], TypeError)):
        with pytest.raises(error, match="softmax: "):
            delivered.softmax_wrapper(bad)
    for x, dim in ((torch.ones(2, 2), 2), (torch.tensor(1.0), 1)):
        with pytest.raises(IndexError, match="softmax: "):
            delivered.softmax_wrapper(x, dim=dim)
    assert launches.count == len(cases)


def test_nothing_dispatched_outside_the_kernel():
    x = torch.randn(4, 300, 3).transpose(0, 2)
    trace = host_trace(delivered.softmax_wrapper, x, 1)
    assert trace.violations == [] and any(o.where == "kernel" for o in trace.ops)
    assert [o.op for o in trace.ops if o.where == "wrapper"] == ["empty.memory_format"]  # y only


def test_strided_input_is_read_where_it_lies():
    base = torch.randn(6, 520)
    x = base[:, ::2].t()  # non-contiguous, storage offset 0, axis 0 strided
    assert not x.is_contiguous()
    assert torch.allclose(run(x, 0), torch.softmax(x, 0), atol=1e-7)


def test_boundary_semantics():
    x = torch.randn(3, 4)
    assert torch.equal(run(x, -1), run(x, 1))
    assert torch.equal(run(torch.randn(5, 1), 1), torch.ones(5, 1))
    assert run(torch.empty(2, 0), 1).shape == (2, 0)
    assert torch.equal(run(torch.tensor(-3.0), 0), torch.tensor(1.0))  # 0-d: one row of one
    y = run(torch.tensor([[0.0, float("nan")], [0.0, float("inf")]]))
    assert torch.isnan(y[0]).all() and torch.isnan(y[1, 1])


def test_order_fixed_per_configuration():
    x = torch.randn(3, 1000, dtype=torch.float16)
    assert torch.equal(run(x), run(x))


def test_bf16_store_rounds_to_nearest_even():
    """The bf16 narrowing is round to nearest even, as torch's and compiled Triton's."""
    x = torch.randn(7, 1500).to(torch.bfloat16)
    # exact on purpose: the rounding itself is the property under test
    assert torch.equal(run(x), torch.softmax(x.float(), -1).to(torch.bfloat16))  # kbt: ignore[TS106]


def test_planted_golden_that_casts_back_is_caught(tmp_path):
    """A copy whose golden narrows its Promote-raised result: kbt audit reports GD102 there (the
    code of the no-float-cast-in-source claim) and the runtime test of the golden's dtype fails."""
    copy = EXAMPLE.copy(tmp_path)
    planted = plant(copy / "legs" / "golden.py", "return torch.softmax(x, dim=dim)", "return torch.softmax(x, dim=dim).to(torch.float16)")
    proc = EXAMPLE.kbt("audit", copy, "--format", "json")
    found = [(f["code"], Path(f["path"]).name, f["line"]) for f in json.loads(proc.stdout)["findings"]]
    line = planted.splitlines().index("    return torch.softmax(x, dim=dim).to(torch.float16)") + 1
    assert proc.returncode == 1 and found == [("GD102", "golden.py", line)], found
    tests = EXAMPLE.pytest(f"{copy / 'test_softmax.py'}::test_golden_casts_nothing")
    assert tests.returncode == 1 and "test_golden_casts_nothing" in tests.stdout, tests.stdout[-2000:]
