"""The worked _foreach_add operator's own tests: the runtime invariants its KB_USAGE.json claims.

Run with ``python -m pytest examples/foreach_add/test_foreach_add.py``. ``conftest.py`` puts
Triton on its interpreter (the tests hand it CPU tensors), so the delivered kernel runs here.
"""

from __future__ import annotations


import pytest
import torch

import make_tensors
from harness import Example, host_trace, line_of, plant, span
from kb_tools.numerics.criteria import judge
from kb_tools.numerics.metrics import compute
from kb_tools.numerics.promote import case_mode
from legs.golden import golden_foreach_add
from legs.third_party import WIDENING, third_party_foreach_add
from ops.prototypes import foreach_add as prototype
from ops.wrappers.foreach_add_wrapper import foreach_add_kernel, foreach_add_wrapper, scalar_result_dtype

EXAMPLE = Example(__file__)
SPEC = EXAMPLE.spec
DTYPES = list(prototype.SUPPORTED_DTYPES)
B_MAX = prototype.B_MAX
LAUNCHES = []
foreach_add_kernel.add_pre_run_hook(lambda *args, **kwargs: LAUNCHES.append(1))


def judged(outs, xs, other, alpha=1):
    """Each output against the golden (and the third-party leg where the case is three-party),
    by the spec's criterion for the list's dtype."""
    dtype = str(xs[0].dtype).removeprefix("torch.")
    criterion = SPEC["criteria"][dtype]
    promote = {"float16": torch.float32, "bfloat16": torch.float32, "float32": torch.float64}.get(dtype) if criterion == "cross_check" else None
    lift = (lambda ts: [t.to(promote) for t in ts]) if promote else list  # noqa: E731 (Promote, as TTK does it)
    golden = golden_foreach_add(lift(xs), lift(other) if isinstance(other, list) else other, alpha)
    third = third_party_foreach_add(xs, other, alpha, device="cpu") if criterion == "cross_check" else [None] * len(xs)
    assert len(outs) == len(xs)
    for out, x, g, t in zip(outs, xs, golden, third):
        assert out.shape == x.shape and out.dtype == torch.result_type(x, other[0] if isinstance(other, list) else other)
        verdict = judge(criterion, out, g, t, dtype=dtype)
        assert verdict.passed, verdict.reasons


def lists(dtype: str, shapes, scale=10.0):
    torch_dtype = getattr(torch, dtype)
    make = (lambda s: torch.randint(-1000, 1000, s, dtype=torch_dtype)) if dtype == "int32" else (lambda s: (torch.randn(s) * scale).to(torch_dtype))  # noqa: E731
    return [make(s) for s in shapes], [make(s) for s in shapes]


def test_prototype_matches_spec():
    EXAMPLE.check_prototype(prototype)
    assert WIDENING == SPEC["widening"] and make_tensors.CRITERIA == SPEC["criteria"]
    assert f"B_MAX = {B_MAX}" in " ".join(SPEC["description"].split())


def test_registered_under_the_framework_name():
    assert {"List", "Scalar"} <= set(torch.ops.aten._foreach_add.overloads())
    assert prototype.NAME == "_foreach_add"


def test_each_dtype_is_its_own_case():
    assert all(case_mode({d: SPEC["criteria"][d]}).three_party for d in ("float16", "bfloat16", "float32"))
    assert not case_mode({"int32": SPEC["criteria"]["int32"]}).three_party


@pytest.mark.parametrize("dtype", DTYPES)
def test_saved_tensors_are_the_kernels_and_pass_their_criterion(dtype):
    legs = make_tensors.run_legs(dtype)
    EXAMPLE.check_saved(legs, dtype)
    EXAMPLE.check_legs(legs, dtype)
    if SPEC["criteria"][dtype] == "cross_check":  # the golden one Promote step above both legs, whose dtypes agree
        assert legs["golden"].dtype.itemsize > legs["dut"].dtype.itemsize and legs["third_party"].dtype == legs["dut"].dtype
        assert compute(legs["third_party"], legs["golden"], dtype).max_abs > 0  # the third-party error is real
    else:
        assert legs["golden"].dtype == legs["dut"].dtype == torch.int32


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device: the third-party leg ran on the CPU only")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_third_party_leg_on_cuda_passes_cross_check(dtype):
    legs = make_tensors.run_legs(dtype, device="cuda")
    verdict = judge("cross_check", legs["dut"], legs["golden"], legs["third_party"], dtype=dtype)
    assert verdict.passed, verdict.reasons


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("length", [0, 1, 3, B_MAX])
def test_one_launch_for_the_whole_list_whatever_its_length(dtype, length):
    xs, ys = lists(dtype, [(5, 7), (), (0,), (300,), (2, 2, 2, 2), (1,), (513,), (4, 4)][:length])
    for other, alpha in ((ys, 3), (5, 1)):
        before = len(LAUNCHES)
        outs = foreach_add_wrapper(xs, other, alpha)
        assert len(LAUNCHES) == before + 1
        if length:
            judged(outs, xs, other, alpha)
        else:
            assert outs == []


def test_slots_are_fixed_and_padding_repeats_a_real_tensor_with_count_zero():
    seen = []
    hook = lambda x_slots, y_slots, out_slots, sizes, *rest, **kwargs: seen.append((x_slots, out_slots, sizes))  # noqa: E731
    foreach_add_kernel.add_pre_run_hook(hook)
    try:
        xs, ys = lists("float32", [(3,), (4, 2)])
        foreach_add_wrapper(xs, ys)
        foreach_add_wrapper([], [])
    finally:
        foreach_add_kernel.pre_run_hooks.remove(hook)
    (x_slots, out_slots, sizes), (empty_x, empty_out, empty_sizes) = seen
    assert len(x_slots) == len(out_slots) == len(sizes) == B_MAX
    assert list(sizes) == [3, 8] + [0] * (B_MAX - 2)
    assert all(slot.data_ptr() == x_slots[0].data_ptr() for slot in x_slots[2:])  # padding is slot 0, not a new tensor
    assert empty_sizes == (0,) * B_MAX and set(empty_x) == set(empty_out) == {None}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", [2, -1, 0, 2.5, float("nan"), True], ids=repr)
def test_scalar_result_dtype_is_torchs(dtype, scalar):
    xs, _ = lists(dtype, [(4,)])
    expected = torch.result_type(xs[0], scalar)
    assert scalar_result_dtype(xs[0].dtype, scalar) == expected
    assert foreach_add_wrapper(xs, scalar)[0].dtype == expected


def _edge_scalars(dtype: str) -> list:
    """Negative, zero, one, the dtype's minimum and maximum, a value outside its range, and
    for floats NaN and both infinities (scalar-operand-promotion's list)."""
    if dtype == "int32":
        return [-7, 0, 1, -2**31, 2**31 - 1, 2**31 + 5]
    info = torch.finfo(getattr(torch, dtype))
    return [-7.25, 0.0, 1.0, float(info.min), float(info.max), 1e39, float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_edge_cases_against_the_golden(dtype):
    xs = [torch.tensor([-3, 0, 5, 100], dtype=getattr(torch, dtype)), torch.tensor(7, dtype=getattr(torch, dtype))]
    for scalar in _edge_scalars(dtype):
        judged(foreach_add_wrapper(xs, scalar), xs, scalar)


def test_int32_wraps_as_the_framework_does():
    x = [torch.tensor([2**31 - 1, -2**31], dtype=torch.int32)]
    assert foreach_add_wrapper(x, x, alpha=3)[0].tolist() == torch._foreach_add(x, x, alpha=3)[0].tolist()


def test_outside_the_contract_is_rejected_before_the_launch():
    ok = torch.ones(4)
    EXAMPLE.check_rejected(((lambda: foreach_add_wrapper([ok] * (B_MAX + 1), 1), ValueError),
                            (lambda: foreach_add_wrapper([ok, ok], [ok]), ValueError),
                            (lambda: foreach_add_wrapper([ok], [torch.ones(5)]), ValueError),
                            (lambda: foreach_add_wrapper([ok, torch.ones(4, dtype=torch.float16)], 1), TypeError),
                            (lambda: foreach_add_wrapper([torch.ones(4, dtype=torch.float64)], 1), TypeError),
                            (lambda: foreach_add_wrapper([torch.ones(4, 2).t()], 1), ValueError),
                            (lambda: foreach_add_wrapper([torch.ones((1,) * 5)], 1), ValueError),
                            (lambda: foreach_add_wrapper([ok], 1, alpha=2), TypeError),
                            (lambda: foreach_add_wrapper([torch.ones(2, dtype=torch.int32)] * 2, [torch.ones(2, dtype=torch.int32)] * 2, 1.5), TypeError)), lambda: len(LAUNCHES))


def test_nothing_dispatched_outside_the_kernel():
    xs, ys = lists("float16", [(3, 5), (), (40,)])
    trace = host_trace(foreach_add_wrapper, xs, ys, 2, kernel=foreach_add_kernel)
    assert trace.violations == [] and trace.ops


def test_planted_per_tensor_launch_loop_is_caught(tmp_path):
    """One launch per list element, planted in a copy: kbt verify reports WB110 and fails the claims."""
    copy = EXAMPLE.copy(tmp_path)
    wrapper = copy / "ops" / "wrappers" / "foreach_add_wrapper.py"
    launch = span(wrapper, "    foreach_add_kernel[grid]", "    return outs\n")
    loop = ("    for x, y, out in zip(xs, ys or xs, outs):  # one launch per tensor\n"
            "        foreach_add_kernel[grid]((x,) * B_MAX, (y,) * B_MAX, (out,) * B_MAX, (x.numel(),) + (0,) * (B_MAX - 1),\n"
            "                                 0 if y_is_list else other, alpha, SLOTS=B_MAX, HAS_ITEMS=True, Y_IS_LIST=y_is_list,\n"
            "                                 ACC=ACCUMULATE[_name(out_dtype)], OUT_BF16=out_dtype == torch.bfloat16, BLOCK=BLOCK)\n")
    planted = plant(wrapper, launch, loop)
    proc = EXAMPLE.kbt("verify", copy, "--root", copy, select_into=copy)
    line = line_of(planted, "        foreach_add_kernel[grid]((x,) * B_MAX, (y,) * B_MAX, (out,) * B_MAX, (x.numel(),)")
    assert proc.returncode == 1
    assert "WB110" in proc.stderr and "no-launch-per-element" in proc.stderr and f"foreach_add_wrapper.py:{line}:" in proc.stderr
