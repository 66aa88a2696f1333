"""The worked mean operator's own tests: the runtime invariants its KB_USAGE.json claims.

Run with ``python -m pytest examples/mean/test_mean.py``. ``conftest.py`` puts Triton on its
interpreter (the tests hand it CPU tensors), so the delivered kernel runs on the CPU.
"""

from __future__ import annotations


import pytest
import torch

import make_tensors
from harness import Example, host_trace, line_of, plant, span
from kb_tools.numerics.criteria import judge
from kb_tools.numerics.metrics import compute
from kb_tools.numerics.promote import case_mode
from legs.golden import golden_mean
from legs.third_party import WIDENING
from ops.prototypes import mean as prototype
from ops.wrappers.mean_wrapper import VERSIONS, mean_kernel, mean_wrapper, reduction_block

EXAMPLE = Example(__file__)
SPEC = EXAMPLE.spec
saved = EXAMPLE.saved
DTYPES = list(prototype.SUPPORTED_DTYPES)
LAUNCHES = []
mean_kernel.add_pre_run_hook(lambda *args, **kwargs: LAUNCHES.append(1))


def judged(out, x, dim=None, keepdim=False):
    """The spec's criterion for x's dtype, against the golden (and the third-party leg where the
    case is three-party) computed as make_tensors computes them."""
    from legs.third_party import third_party_mean

    dtype = str(x.dtype).removeprefix("torch.")
    criterion = SPEC["criteria"][dtype]
    handed = x.float() if criterion == "cross_check" else x  # Promote's float32, or the DUT's own type
    golden = golden_mean(handed, dim, keepdim)
    third = third_party_mean(x, dim, keepdim, device="cpu") if criterion == "cross_check" else None
    assert out.dtype == x.dtype and out.shape == golden.shape
    verdict = judge(criterion, out, golden, third, dtype=dtype)
    assert verdict.passed, verdict.reasons


def test_prototype_matches_spec():
    EXAMPLE.check_prototype(prototype)
    assert WIDENING == SPEC["widening"] and make_tensors.CRITERIA == SPEC["criteria"]


def test_registered_under_the_framework_name():
    assert {"default", "dim"} <= set(torch.ops.aten.mean.overloads())
    assert prototype.NAME == "mean"


def test_each_dtype_is_its_own_case():
    assert case_mode({"float16": "cross_check"}).three_party and case_mode({"bfloat16": "cross_check"}).three_party
    assert not case_mode({"float32": SPEC["criteria"]["float32"]}).three_party


@pytest.mark.parametrize("dtype", DTYPES)
def test_saved_tensors_are_the_kernels_and_pass_their_criterion(dtype):
    legs = make_tensors.run_legs(dtype)
    EXAMPLE.check_saved(legs, dtype)
    EXAMPLE.check_legs(legs, dtype)
    if SPEC["criteria"][dtype] == "cross_check":  # the golden sits above both legs, and the third-party error is real
        assert legs["golden"].dtype == torch.float32 and legs["third_party"].dtype == legs["dut"].dtype
        assert compute(legs["third_party"], legs["golden"], dtype).max_abs > 0
    else:
        assert legs["golden"].dtype == legs["dut"].dtype == torch.float32


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the third-party leg ran on the CPU only")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_third_party_leg_on_cuda_passes_cross_check(dtype):
    legs = make_tensors.run_legs(dtype, device="cuda")
    verdict = judge("cross_check", legs["dut"], legs["golden"], legs["third_party"], dtype=dtype)
    assert verdict.passed, verdict.reasons


def test_golden_casts_nothing():
    for dtype in (torch.float32, torch.float64):
        assert golden_mean(torch.randn(3, 5, dtype=dtype), 1).dtype == dtype


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_fp32_accumulator_where_a_half_one_stalls(dtype):
    x = torch.ones(5000, dtype=getattr(torch, dtype))
    narrow_sum = torch.zeros((), dtype=x.dtype)
    for value in x:  # a running sum kept in the half type stalls (fp16 at 2048, bf16 at 256)
        narrow_sum = narrow_sum + value
    assert narrow_sum.item() < 5000 / 2
    assert mean_wrapper(x).item() == 1.0


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduction_order_is_fixed_per_configuration(dtype):
    x = (torch.randn(3, 1000) * 10).to(getattr(torch, dtype))
    first = mean_wrapper(x, 1)
    assert all(torch.equal(first, mean_wrapper(x, 1)) for _ in range(3))


@pytest.mark.parametrize("dtype", DTYPES)
def test_bucket_edges_and_the_general_version(dtype):
    """Each version's edges: the bucket's smallest and largest count, the first count past it
    (the general version) and a long axis; every result within the criterion."""
    small_bound = VERSIONS[0][0]
    assert [reduction_block(n) for n in (1, small_bound, small_bound + 1, 5000)] == [64, 64, 256, 256]
    for n in (1, small_bound, small_bound + 1, 5000):
        x = (torch.randn(2, n) * 3).to(getattr(torch, dtype))
        judged(mean_wrapper(x, 1), x, 1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dims_keepdim_and_strides(dtype):
    base = (torch.randn(5, 6, 7) * 2).to(getattr(torch, dtype))
    x = base.permute(2, 0, 1)[:, 1:, ::2]  # not contiguous, storage offset, strided axes
    for dim, keepdim in ((None, False), (0, False), (-1, True), ((0, 2), False), ([2, 1], True)):
        judged(mean_wrapper(x, dim, keepdim), x, dim, keepdim)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_dim_and_empty_inputs_launch_once(dtype):
    torch_dtype = getattr(torch, dtype)
    cases = ((torch.tensor(2.5, dtype=torch_dtype), None), (torch.tensor(2.5, dtype=torch_dtype), 0),
             (torch.empty(3, 0, dtype=torch_dtype), 1), (torch.empty(0, 4, dtype=torch_dtype), 1))
    for x, dim in cases:
        before = len(LAUNCHES)
        out = mean_wrapper(x, dim)
        assert len(LAUNCHES) == before + 1
        expected = torch.mean(x) if dim is None else torch.mean(x, dim)
        assert out.shape == expected.shape and out.dtype == expected.dtype
        assert torch.equal(out.isnan(), expected.isnan()) and torch.equal(out.nan_to_num(), expected.nan_to_num())


def test_nan_and_inf_propagate():
    x = torch.tensor([[1.0, float("nan")], [1.0, float("inf")], [float("inf"), float("-inf")]])
    assert torch.equal(mean_wrapper(x, 1).isnan(), torch.tensor([True, False, True]))
    assert mean_wrapper(x, 1)[1].item() == float("inf")


def test_outside_the_prototype_is_rejected_before_the_launch():
    EXAMPLE.check_rejected(((lambda: mean_wrapper(torch.ones(2, dtype=torch.float64)), TypeError),
                            (lambda: mean_wrapper(torch.ones((1,) * 9)), ValueError),
                            (lambda: mean_wrapper(torch.ones(2, 2), 2), IndexError),
                            (lambda: mean_wrapper(torch.ones(2, 2), (1, -1)), ValueError),
                            (lambda: mean_wrapper(torch.ones(2), 0, dtype=torch.float64), TypeError)), lambda: len(LAUNCHES))


def test_nothing_dispatched_outside_the_kernel():
    x = torch.randn(4, 300, 3).transpose(0, 2)
    trace = host_trace(mean_wrapper, x, 1, kernel=mean_kernel)
    assert trace.violations == [] and trace.ops


def test_planted_second_launch_is_caught(tmp_path):
    """A second launch planted in a copy: kbt verify reports WB109 and fails the single-launch claim."""
    copy = EXAMPLE.copy(tmp_path)
    wrapper = copy / "ops" / "wrappers" / "mean_wrapper.py"
    launch = span(wrapper, "    mean_kernel[(max(1, n_out),)]", "    return y\n")
    plant(wrapper, launch, launch + launch)  # the same launch twice
    proc = EXAMPLE.kbt("verify", copy, "--root", copy, select_into=copy)
    assert proc.returncode == 1
    assert "WB109" in proc.stderr and "single-launch" in proc.stderr


def test_planted_golden_cast_back_is_caught(tmp_path):
    """A golden that casts its promoted result back to half, planted in a copy: kbt audit reports GD102."""
    copy = EXAMPLE.copy(tmp_path)
    planted = plant(copy / "legs" / "golden.py", "torch.mean(x)\n", "torch.mean(x).to(torch.float16)\n")
    proc = EXAMPLE.kbt("audit", copy, "--spec", "ops/mean.yaml")
    assert proc.returncode == 1 and "GD102" in proc.stdout and f"golden.py:{line_of(planted, 'float16)')}:" in proc.stdout
