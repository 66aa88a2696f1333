"""Each difference issue 12 found between opkb and TTK, as a case derived from TTK's code or docs
(hicann/ops-test-kit ttk/core_modules/comparison/*.py, resolve.py, docs/Precision_Comparison.md).
Every case failed on the engine before the fix; the comment says which TTK line decides it."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kb_tools.numerics import criteria, tensors_io
from kb_tools.numerics.cross_check import safe_div

NAN, INF = float("nan"), float("inf")


def f16(values):
    return torch.tensor(values, dtype=torch.float16)


def f32(values):
    return torch.tensor(values, dtype=torch.float32)


# 1. mix_tolerance's hard cap is one number per dtype: max(1e-k, 32 * eps) (resolve.py MIX_TOLERANCE).

@pytest.mark.parametrize("dtype,cap", [(torch.float16, 0.1), (torch.bfloat16, 1.0), (torch.float32, 0.01)])
def test_mix_cap_is_one_number_per_dtype(dtype, cap):
    golden = torch.full((1000,), 10.0).to(dtype)
    over = golden.clone()
    over[0] = float(golden[0]) + 2 * cap  # 1 element in 1000: the matched ratio stays >= 0.99
    v = criteria.judge("mix_tolerance", over, golden)
    assert v.metrics["max_abs_error_limit"] == cap and not v.passed
    assert any("cap" in r for r in v.reasons)


def test_fp16_1000_5_against_1000_fails_on_the_cap():
    v = criteria.judge("mix_tolerance", f16([1000.5]), f16([1000.0]))  # 1 fp16 ULP, 0.5 > 0.1
    assert not v.passed and v.metrics["max_abs_error"] == 0.5 and v.metrics["matched_ratio"] == 1.0


def test_mix_atol_boundary_at_a_zero_golden():
    atol = 2**-16  # TTK's own test_mix_tolerance.py: err = atol passes, 2 * atol does not (fp32)
    assert criteria.judge("mix_tolerance", f32([atol]), f32([0.0])).passed
    assert not criteria.judge("mix_tolerance", f32([2 * atol]), f32([0.0])).passed


# 2. cross_check floors the third party's error at small_value in every ratio; 0/0 is 1 (safe_div).

def _fp32_legs(tp_rel, dut_rel, n=4096):
    gen = torch.Generator().manual_seed(2)
    golden = (torch.rand(n, generator=gen, dtype=torch.float64) + 0.5)
    third = (golden * (1 + tp_rel * torch.randn(n, generator=gen, dtype=torch.float64))).float()
    dut = (golden * (1 + dut_rel * torch.randn(n, generator=gen, dtype=torch.float64))).float()
    return dut, golden, third


@pytest.mark.parametrize("worse", [2, 10, 50])
def test_accurate_third_party_does_not_fail_a_slightly_worse_dut(worse):
    dut, golden, third = _fp32_legs(1e-7, worse * 1e-7)
    v = criteria.judge("cross_check", dut, golden, third)
    assert v.passed, v.reasons
    assert v.ratios["rmse"] < 1  # the denominator was floored at 2^-14, not the third party's 1e-7


def test_exact_third_party_is_floored_not_undefined():
    dut, golden, _ = _fp32_legs(0, 1e-6)
    v = criteria.judge("cross_check", dut, golden, golden.float())
    assert v.passed and all(r is not None for r in v.ratios.values())
    exact = golden.float()
    same = criteria.judge("cross_check", exact, exact.double(), exact.clone())
    assert same.passed and same.ratios["mare"] == same.ratios["mere"] == same.ratios["rmse"] == 1.0  # 0/0


def test_safe_div_rules():
    assert safe_div(0.0, 0.0, 2**-14) == 1.0
    assert safe_div(INF, INF, 2**-14) == 1.0
    assert safe_div(INF, 1.0, 2**-14) == INF and safe_div(NAN, 1.0, 2**-14) == INF
    assert safe_div(1e-3, 1e-9, 2**-14) == 1e-3 / 2**-14


# 3. Small-value region: DUT errors / max(third-party errors, 1) <= 2 (cross_check.py _check_small).

@pytest.mark.parametrize("gross,passes", [(1, True), (2, True), (3, False)])
def test_small_region_allows_two_gross_errors_when_the_third_party_has_none(gross, passes):
    golden = torch.full((100,), 1e-6, dtype=torch.float64)  # all below fp32's 2^-14
    third = golden.float()
    dut = third.clone()
    dut[:gross] += 1e-3
    v = criteria.judge("cross_check", dut, golden, third)
    assert v.passed is passes and v.ratios["small_err"] == gross


# 4. NaN/inf: three-way rule (cross_check.py _check_special).

def test_dut_and_third_party_both_nan_at_a_finite_golden_pass():
    v = criteria.judge("cross_check", f32([NAN, 1.0]), f32([2.0, 1.0]).double(), f32([NAN, 1.0]))
    assert v.passed, v.reasons


def test_third_party_only_inf_fails_even_when_the_dut_equals_the_golden():
    v = criteria.judge("cross_check", f32([2.0, 1.0]), f32([2.0, 1.0]).double(), f32([INF, 1.0]))
    assert not v.passed and "NaN/inf" in v.reasons[0]


def test_dut_equal_to_a_non_finite_golden_passes_whatever_the_third_party():
    v = criteria.judge("cross_check", f32([-INF, 1.0]), f32([-INF, 1.0]).double(), f32([5.0, 1.0]))
    assert v.passed


# 5. close: FAIL when (1 - precision) > ptol in floats; isclose in TTK's precision (is_close.py).

def test_one_wrong_element_in_a_thousand_fails_fp16():
    golden = torch.ones(1000, dtype=torch.float16)
    dut = golden.clone()
    dut[0] = 2
    v = criteria.judge("close", dut, golden)
    # one mismatch in 1000 is exactly ptol, yet 1 - 0.999 = 0.0010000000000000009 > 0.001 in floats
    assert not v.passed and v.metrics["mismatched"] == 1 and v.metrics["ptol"] == 1e-3
    assert not criteria.judge("close", dut.bfloat16(), golden.bfloat16()).passed


def test_fp16_isclose_runs_in_fp16():
    x, y = 0.97705078125, 0.97607421875  # two fp16 values 2 ULPs apart
    assert np.isclose(np.float16(x), np.float16(y), rtol=1e-3, atol=1e-8)  # fp16 arithmetic: close
    assert not np.isclose(x, y, rtol=1e-3, atol=1e-8)  # float64 arithmetic: not close
    assert criteria.judge("close", f16([x]), f16([y])).passed


# 6. Integer and bool outputs go to binary_equal whatever was asked (resolve.py), with the reason.

@pytest.mark.parametrize("dtype", [torch.int8, torch.int32, torch.int64, torch.uint8, torch.bool])
@pytest.mark.parametrize("asked", ["close", "mix_tolerance", "mixed", "stat_rel_err", "cross_check"])
def test_integer_and_bool_outputs_are_compared_bit_for_bit(dtype, asked):
    a = torch.tensor([0, 1, 1, 0]).to(dtype)
    b = a.clone()
    b[2] = 0
    v = criteria.judge(asked, a, b, third_party=a)
    assert v.criterion == "binary_equal" and v.requested in ("close", "mix_tolerance", "stat_rel_err", "cross_check")
    assert not v.passed and "bit for bit" in v.notes[0]
    assert criteria.judge(asked, a, a.clone(), third_party=a).passed


def test_quant_is_off_by_one_on_int8_and_refused_elsewhere():
    golden = torch.tensor([-3, 0, 5, 127], dtype=torch.int8)
    assert criteria.judge("quant", golden + torch.tensor([1, -1, 0, 0], dtype=torch.int8), golden).passed
    assert not criteria.judge("quant", golden + torch.tensor([2, 0, 0, 0], dtype=torch.int8), golden).passed
    with pytest.raises(ValueError, match="int4/int8"):
        criteria.judge("quant", golden.int(), golden.int())


def test_cross_dtype_bits_fail_unless_both_are_integers():
    assert criteria.judge("binary_equal", torch.tensor([1, 2], dtype=torch.int8), torch.tensor([1, 2])).passed
    v = criteria.judge("binary_equal", f16([1.0]), f32([1.0]))
    assert not v.passed and "not bitwise comparable" in v.reasons[0]


# 7. fp8: TTK's own mix_tolerance and stat_rel_err rows; float8_e8m0 bit for bit.

def test_float8_rows():
    golden = torch.linspace(1, 2, 200)
    dut = (golden * 1.2).to(torch.float8_e4m3fn)  # 20 % off: inside e4m3fn's rtol 0.25 + atol 1/16
    v = criteria.judge("mix_tolerance", dut, golden)
    assert v.passed and v.metrics["rtol"] == 0.25 and v.metrics["max_abs_error_limit"] == 4.0
    assert not criteria.judge("mix_tolerance", (golden * 2).to(torch.float8_e4m3fn), golden).passed
    stat = criteria.judge("stat_rel_err", dut, golden)  # MERE ~0.2 >= e4m3fn's 2^-3
    assert not stat.passed and stat.metrics["threshold"] == 2**-3
    e5m2 = criteria.judge("stat_rel_err", (golden * 1.1).to(torch.float8_e5m2), golden)
    assert e5m2.passed and e5m2.metrics["threshold"] == 2**-2


def test_float8_e8m0_is_compared_bit_for_bit():
    a = torch.tensor([1.0, 2.0, 4.0]).to(torch.float8_e8m0fnu)
    v = criteria.judge("mix_tolerance", a, a.clone())
    assert v.criterion == "binary_equal" and v.passed
    with pytest.raises(ValueError, match="cross_check supports"):
        criteria.judge("cross_check", torch.ones(2).to(torch.float8_e4m3fn), torch.ones(2), torch.ones(2))


# 8. Shapes and files: TTK compares flattened data of equal size.

def test_equal_sizes_with_different_shapes_are_compared_with_a_note():
    v = criteria.judge("mix_tolerance", torch.ones(2, 3), torch.ones(6))
    assert v.passed and any("compared flattened" in n for n in v.notes)
    with pytest.raises(ValueError, match="elements"):
        criteria.judge("mix_tolerance", torch.ones(2, 3), torch.ones(5))


def test_zero_d_npy_stays_zero_d(tmp_path):
    np.save(tmp_path / "s.npy", np.float32(3.5))
    assert tensors_io.load(tmp_path / "s.npy").shape == ()


def test_mixed_is_an_alias_of_mix_tolerance():
    v = criteria.judge("mixed", f16([1.0]), f16([1.0]))
    assert v.criterion == "mix_tolerance" and v.requested is None
