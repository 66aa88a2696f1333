"""The worked floor_divide operator's own tests: the runtime invariants its KB_USAGE.json claims.

Run with ``python -m pytest examples/floor_divide/test_floor_divide.py``. ``conftest.py`` puts
Triton on its interpreter (the tests hand it CPU tensors), so the delivered kernel runs here.
INT_MIN // -1 is never executed by torch in this process (it traps at int32 and int64
width); the comparisons with torch leave those positions to the guarded golden.
"""

from __future__ import annotations


import pytest
import torch

import make_tensors
from harness import Example, host_trace, line_of, plant
from kb_tools.numerics.integers import wrap
from kb_tools.numerics.promote import case_mode
from legs.golden import WIDENING, ZERO_DIVISOR_YIELDS, golden_floor_divide
from ops.prototypes import floor_divide as prototype
from ops.wrappers.floor_divide_wrapper import floor_divide_kernel, floor_divide_wrapper

EXAMPLE = Example(__file__)
SPEC = EXAMPLE.spec
saved = EXAMPLE.saved
DTYPES = list(prototype.SUPPORTED_DTYPES)
SIGNED = [d for d in DTYPES if d != "uint8"]
LAUNCHES = []
floor_divide_kernel.add_pre_run_hook(lambda *args, **kwargs: LAUNCHES.append(1))


def judged(out, expected, dtype):
    """Floor division keeps the operands' dtype; the spec's criterion for it decides."""
    assert out.dtype == getattr(torch, dtype)
    EXAMPLE.judged(out, expected, dtype)


def info(dtype: str):
    return torch.iinfo(getattr(torch, dtype))


def test_prototype_matches_spec():
    EXAMPLE.check_prototype(prototype)
    assert WIDENING == SPEC["widening"] and ZERO_DIVISOR_YIELDS == prototype.ZERO_DIVISOR_YIELDS
    assert "a zero divisor yields 0" in " ".join(SPEC["description"].split())


def test_registered_under_the_framework_name():
    assert {"default", "Scalar"} <= set(torch.ops.aten.floor_divide.overloads())
    assert prototype.NAME == "floor_divide"


def test_every_case_is_two_party():
    assert not case_mode(SPEC["criteria"]).three_party


@pytest.mark.parametrize("dtype", DTYPES)
def test_saved_tensors_are_the_kernels_and_pass_their_criterion(dtype):
    legs = make_tensors.run_legs(dtype)
    for leg in ("input", "other", "dut", "golden"):
        assert torch.equal(legs[leg], saved(dtype, leg)), f"{dtype} {leg} no longer matches the saved tensor"
    judged(legs["dut"], legs["golden"], dtype)
    assert (legs["other"] == 0).any() and (legs["input"] == info(dtype).min).any()


@pytest.mark.parametrize("dtype", DTYPES)
def test_floor_rounding_matches_the_framework_where_it_is_defined(dtype):
    x = torch.randint(info(dtype).min, info(dtype).max, (700,), dtype=getattr(torch, dtype))
    y = torch.randint(-50, 50, (700,)).to(getattr(torch, dtype))
    y[y == 0] = 3
    if dtype != "uint8":
        y[(x == info(dtype).min) & (y == -1)] = 7  # leave INT_MIN // -1 to the guarded legs
    judged(floor_divide_wrapper(x, y), torch.floor_divide(x, y), dtype)


@pytest.mark.parametrize("dtype", SIGNED)
def test_int_min_by_minus_one_is_a_wrapping_negation(dtype):
    x = torch.tensor([info(dtype).min, info(dtype).max, -5, 0], dtype=getattr(torch, dtype))
    expected = torch.tensor([info(dtype).min, -info(dtype).max, 5, 0], dtype=getattr(torch, dtype))
    for divisor in (-1, torch.full_like(x, -1)):
        judged(floor_divide_wrapper(x, divisor), expected, dtype)
        judged(golden_floor_divide(x, divisor), expected, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_divisor_yields_the_specs_value_where_torch_raises(dtype):
    x = torch.tensor([info(dtype).min, 7, info(dtype).max], dtype=getattr(torch, dtype))
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        torch.floor_divide(x, 0)
    expected = torch.full_like(x, ZERO_DIVISOR_YIELDS)
    for divisor in (0, torch.zeros_like(x)):
        judged(floor_divide_wrapper(x, divisor), expected, dtype)
        judged(golden_floor_divide(x, divisor), expected, dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
def test_narrowing_at_the_accumulate_width(dtype):
    """The kernel divides at int32 and narrows once at the store: the result is the int32
    quotient wrapped to the dtype. An int64 golden left wide computes another function."""
    x = torch.tensor([info(dtype).min, info(dtype).max, 3], dtype=getattr(torch, dtype))
    wide = golden_floor_divide(x.to(torch.int32), torch.tensor([-1, -1, 2], dtype=torch.int32))
    out = floor_divide_wrapper(x, torch.tensor([-1, -1, 2]).to(getattr(torch, dtype)))
    judged(out, wrap(wide, getattr(torch, dtype)), dtype)
    if dtype != "uint8":
        assert wide[0].item() == -info(dtype).min != out[0].item() == info(dtype).min


def test_int32_result_differs_from_an_int64_golden():
    x = torch.tensor([-2**31], dtype=torch.int32)
    assert floor_divide_wrapper(x, -1).item() == -2**31
    assert golden_floor_divide(x.to(torch.int64), -1).item() == 2**31  # the 'safe' widening disagrees


def _edge_scalars(dtype: str) -> list:
    """Negative, zero, one, -1, the dtype's minimum and maximum and values outside its range
    (scalar-operand-promotion's list; they wrap to x's dtype as torch converts them)."""
    outside = [info(dtype).max + 1 + 44, info(dtype).min - 1] if dtype != "int64" else []  # int64: rejected, as by torch
    return [-7, 0, 1, -1, info(dtype).min, info(dtype).max, *outside, True]


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_edge_cases(dtype):
    x = torch.tensor([info(dtype).min, -100, -1, 0, 1, 99, info(dtype).max], dtype=getattr(torch, dtype)).clamp(min=info(dtype).min)
    for scalar in _edge_scalars(dtype):
        out = floor_divide_wrapper(x, scalar)
        assert out.dtype == torch.result_type(x, scalar)
        judged(out, golden_floor_divide(x, scalar), dtype)
        wrapped = torch.tensor(scalar, dtype=torch.int64).to(x.dtype).item()
        if wrapped not in (0, -1):  # both are the guarded cases, tested above
            judged(out, torch.floor_divide(x, scalar), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast_operands_read_through_strides(dtype):
    base = torch.randint(-100, 100, (6, 4, 3)).to(getattr(torch, dtype))
    x = base.transpose(0, 2)
    y = base[0, :, 0][:, None] % 7 + 1
    judged(floor_divide_wrapper(x, y), torch.floor_divide(x, y), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_dim_and_empty_inputs_launch_once(dtype):
    torch_dtype = getattr(torch, dtype)
    for x, other in ((torch.tensor(9, dtype=torch_dtype), 2), (torch.empty(0, 4, dtype=torch_dtype), 3),
                     (torch.tensor(9, dtype=torch_dtype), torch.full((2, 3), 4, dtype=torch_dtype))):
        before = len(LAUNCHES)
        out = floor_divide_wrapper(x, other)
        assert len(LAUNCHES) == before + 1
        judged(out, torch.floor_divide(x, other), dtype)


def test_outside_the_prototype_is_rejected_before_the_launch():
    ints = torch.ones(2, dtype=torch.int32)
    EXAMPLE.check_rejected(((lambda: floor_divide_wrapper(torch.ones(2), 1), TypeError),
                            (lambda: floor_divide_wrapper(ints, 2.5), TypeError),
                            (lambda: floor_divide_wrapper(ints, torch.ones(2, dtype=torch.int64)), TypeError),
                            (lambda: floor_divide_wrapper(torch.ones((1,) * 9, dtype=torch.int8), 1), ValueError),
                            (lambda: floor_divide_wrapper(ints, torch.ones(3, dtype=torch.int32)), ValueError),
                            (lambda: floor_divide_wrapper(ints, 2**63), ValueError)), lambda: len(LAUNCHES))


def test_nothing_dispatched_outside_the_kernel():
    x = torch.randint(-99, 99, (30, 7), dtype=torch.int16).t()
    trace = host_trace(floor_divide_wrapper, x, -3, kernel=floor_divide_kernel)
    assert trace.violations == [] and trace.ops


def test_planted_unguarded_minus_one_divisor_is_caught(tmp_path):
    """The golden's -1 route removed in a copy: kbt audit reports GD104 at the division."""
    golden = EXAMPLE.copy(tmp_path) / "legs" / "golden.py"
    plant(golden, "    minus_one = b == -1\n", "")
    plant(golden, "minus_one | zero", "zero")
    planted = plant(golden, "    quotient = torch.where(minus_one, torch.neg(a), quotient)  # -INT_MIN wraps to INT_MIN at this width\n", "")
    assert "minus_one" not in planted
    proc = EXAMPLE.kbt("audit", golden.parents[1])
    assert proc.returncode == 1
    line = line_of(planted, 'rounding_mode="floor"')
    assert f"golden.py:{line}:" in proc.stdout and "GD104" in proc.stdout and "INT_MIN / -1" in proc.stdout
