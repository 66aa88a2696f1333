"""gym_gate, the PyPTO-Pro samples' check (mixed tolerance plus MERE/MARE gates), against TTK's
mix_tolerance and stat_rel_err: where they agree, where gym_gate is stricter, where it is looser;
declared in a spec and run by kbt compare; refused input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from kb_tools.numerics import criteria
from kb_tools.numerics import tolerances as tol

INF, NAN = float("inf"), float("nan")


def _verdicts(dut, golden, dtype=None):
    return {c: criteria.judge(c, dut, golden, dtype=dtype) for c in ("mix_tolerance", "stat_rel_err", "gym_gate")}


def _fp16_ones(n=4096, seed=0):
    """fp16 goldens in [1, 2), where one ULP is 2^-10."""
    gen = torch.Generator().manual_seed(seed)
    return (1 + torch.rand(n, generator=gen)).half()


# ---- agreement ----------------------------------------------------------------------------------

def test_agree_pass_on_a_one_ulp_output():
    g = _fp16_ones()
    a = g.clone()
    a[::7] += 2**-10  # one ULP on every 7th element
    v = _verdicts(a, g)
    assert v["mix_tolerance"].passed and v["gym_gate"].passed
    assert v["gym_gate"].metrics["mere"] < tol.stat_threshold("float16")


def test_agree_fail_on_a_wrong_block():
    g = _fp16_ones()
    a = g.clone()
    a[:200] += 0.5  # ~5 % of the output off by far more than the cap
    v = _verdicts(a, g)
    assert not v["mix_tolerance"].passed and not v["gym_gate"].passed
    reasons = " ".join(v["gym_gate"].reasons)
    assert "matched ratio 0.951172 < 0.99: 200 of 4096 elements" in reasons
    assert "max abs error 0.5" in reasons and "> the float16 cap 0.1" in reasons


# ---- gym_gate stricter than mix_tolerance --------------------------------------------------------

def test_stricter_than_mix_the_mean_gate():
    """Two ULPs everywhere: inside atol + rtol*|g| (2^-9 + 2^-9*|g|), so mix_tolerance passes,
    but the mean relative error is about 2^-9 * ln 2 > 2^-10."""
    g = _fp16_ones()
    a = (g.float() + 2**-9).half()
    v = _verdicts(a, g)
    assert v["mix_tolerance"].passed
    gym = v["gym_gate"]
    assert not gym.passed and len(gym.reasons) == 1 and gym.reasons[0].startswith("MERE ")
    assert "the mean gate" in gym.reasons[0]
    assert gym.metrics["matched_ratio"] == 1.0 and gym.metrics["mare"] < tol.STAT_MARE_FACTOR * 2**-10


def test_stricter_than_mix_the_max_relative_gate_on_a_near_zero_golden():
    """One golden near zero, off by 1e-3: within atol (2^-9), but its relative error is ~10,
    above 10 * 2^-10. 70,000 elements (two chunks) keep the mean under its threshold."""
    g = torch.ones(70_000, dtype=torch.float16)
    g[69_999] = 1e-4
    a = g.clone()
    a[69_999] = g[69_999].float() + 1e-3
    v = _verdicts(a, g)
    assert v["mix_tolerance"].passed and not v["stat_rel_err"].passed
    gym = v["gym_gate"]
    assert not gym.passed and len(gym.reasons) == 1 and gym.reasons[0].startswith("MARE ")
    assert gym.metrics["mere"] < 2**-10


# ---- gym_gate stricter than stat_rel_err ---------------------------------------------------------

def test_stricter_than_stat_rel_err_the_cap():
    """One ULP at 1000 in fp16 is 0.5: relative error 5e-4 passes both mean gates, the mixed
    tolerance's fixed cap (0.1) fails it."""
    g = torch.full((1024,), 1000.0, dtype=torch.float16)
    a = g.clone()
    a[3] = 1000.5
    v = _verdicts(a, g)
    assert v["stat_rel_err"].passed and not v["mix_tolerance"].passed
    assert not v["gym_gate"].passed
    assert v["gym_gate"].reasons == ["max abs error 0.5 > the float16 cap 0.1 (5.00x)"]


# ---- gym_gate looser than both: an infinity saturated to the dtype's maximum ----------------------

def test_looser_than_ttk_a_one_sided_infinity_at_the_format_edge():
    """fp16 DUT overflowed to inf where the fp32 golden is 65504 (fp16's max): TTK counts a
    NaN/inf mismatch and fails; the samples' check saturates inf to 65504 and sees no error."""
    g = torch.ones(16)
    g[5] = 65504.0
    a = g.half()
    a[5] = INF
    v = _verdicts(a, g, "float16")
    assert not v["mix_tolerance"].passed and not v["stat_rel_err"].passed
    assert "NaN/inf mismatch" in v["mix_tolerance"].reasons[0]
    assert v["gym_gate"].passed and v["gym_gate"].metrics["max_abs_error"] == 0


def test_a_one_sided_infinity_elsewhere_fails_both():
    g = torch.ones(16, dtype=torch.float16)
    a = g.clone()
    a[2] = -INF
    v = _verdicts(a, g)
    assert not v["mix_tolerance"].passed and not v["gym_gate"].passed
    assert any("cap" in r for r in v["gym_gate"].reasons)


# ---- special values ------------------------------------------------------------------------------

def test_nan_positions_must_agree():
    g = torch.tensor([1.0, 2.0, NAN, 4.0])
    a = torch.tensor([1.0, NAN, NAN, 4.0])
    v = _verdicts(a, g)
    assert not v["mix_tolerance"].passed and not v["gym_gate"].passed
    assert v["gym_gate"].reasons == ["NaN positions differ at 1 of 4 elements (the samples' check fails before any "
                                     "error arithmetic)"]


def test_opposite_infinities_fail():
    v = criteria.judge("gym_gate", torch.tensor([INF, 1.0]), torch.tensor([-INF, 1.0]))
    assert not v.passed and v.reasons == ["opposite infinities at 1 of 2 elements"]


def test_matching_specials_match_and_leave_the_means():
    g = torch.tensor([NAN, INF, -INF, 1.0])
    a = torch.tensor([NAN, INF, -INF, 1.0 + 2**-20])
    v = criteria.judge("gym_gate", a, g)
    assert v.passed and v.metrics["matched_ratio"] == 1.0
    assert v.metrics["mere"] == pytest.approx(2**-20 / (1 + tol.REL_EPS))  # one compared pair, not four
    only = criteria.judge("gym_gate", torch.tensor([NAN, INF]), torch.tensor([NAN, INF]))
    assert only.passed and only.metrics["mere"] is None and "undefined" in only.notes[0]


def _restated(a: np.ndarray, g: np.ndarray, dtype: str) -> dict:
    """The samples' check restated in numpy float64, for finite data."""
    row = tol.mix_row(dtype)
    err = np.abs(a - g)
    rel = err / (np.abs(g) + tol.REL_EPS)
    return {"matched_ratio": float(np.mean(err <= row.atol + row.rtol * np.abs(g))), "max_abs_error": float(err.max()),
            "mere": float(rel.mean()), "mare": float(rel.max())}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_numbers_match_a_numpy_restatement(dtype):
    gen = torch.Generator().manual_seed(1)
    g = torch.randn(70_001, generator=gen, dtype=torch.float64)
    a = (g * (1 + 3e-3 * torch.randn(70_001, generator=gen, dtype=torch.float64))).to(getattr(torch, dtype))
    v = criteria.judge("gym_gate", a, g, dtype=dtype)
    expected = _restated(a.double().numpy(), g.numpy(), dtype)
    for key, value in expected.items():
        assert v.metrics[key] == pytest.approx(value, rel=1e-9), key
    stat, mix = criteria.judge("stat_rel_err", a, g, dtype=dtype), criteria.judge("mix_tolerance", a, g, dtype=dtype)
    assert v.passed == (stat.passed and mix.passed)  # finite data: the conjunction of TTK's two


# ---- routing and bad input -----------------------------------------------------------------------

def test_integers_are_judged_bit_for_bit_as_ttk_routes_them():
    v = criteria.judge("gym_gate", torch.tensor([1, 2], dtype=torch.int32), torch.tensor([1, 3], dtype=torch.int32))
    assert v.criterion == "binary_equal" and v.requested == "gym_gate" and not v.passed


def test_refused_input():
    with pytest.raises(ValueError, match="gym_gate has rows for float16, bfloat16, float32, float64 only"):
        criteria.judge("gym_gate", torch.zeros(4, dtype=torch.float8_e4m3fn), torch.zeros(4))
    with pytest.raises(ValueError, match="elements"):
        criteria.judge("gym_gate", torch.zeros(4), torch.zeros(5))
    with pytest.raises(ValueError, match="unknown criterion 'gym'"):
        criteria.judge("gym", torch.zeros(4), torch.zeros(4))
    assert criteria.judge("gym_gate", torch.zeros(0), torch.zeros(0)).passed


# ---- the spec and the command line ---------------------------------------------------------------

SPEC = """\
op: gym_checked
class_id: "."
topologies: [elementwise]
properties:
  dtypes: [float16, float32]
target: a2
criteria:
  float16: gym_gate
  float32: {float32}
"""


def test_a_spec_declares_it_and_select_and_usage_accept_it(kbt, tmp_path):
    spec = tmp_path / "gym_checked.yaml"
    spec.write_text(SPEC.format(float32="gym_gate"))
    assert kbt("select", spec, "-o", tmp_path / "out").code == 0
    assert kbt("usage", spec, "-o", tmp_path / "out").code == 0
    assert json.loads((tmp_path / "out" / "KB_SELECTION.json").read_text())["op"] == "gym_checked"
    spec.write_text(SPEC.format(float32="gym_gates"))
    bad = kbt("select", spec, "-o", tmp_path / "bad")
    assert bad.code != 0 and "Traceback" not in bad.err
    assert f"{spec}:9: SP020 criteria.float32: 'gym_gates' is not one of" in bad.err and "gym_gate" in bad.err
    assert not (tmp_path / "bad" / "KB_SELECTION.json").exists()


@pytest.fixture
def legs(tmp_path):
    g = _fp16_ones()
    np.save(tmp_path / "golden.npy", g.numpy())
    np.save(tmp_path / "two_ulp.npy", (g.float() + 2**-9).half().numpy())
    torch.save(torch.zeros(8, dtype=torch.float8_e4m3fn), tmp_path / "fp8.pt")
    return tmp_path


def test_kbt_compare_runs_it_with_the_reason(kbt, legs):
    args = ("compare", "--dut", legs / "two_ulp.npy", "--golden", legs / "golden.npy")
    mix = kbt(*args, "--criterion", "mix_tolerance")
    gym = kbt(*args, "--criterion", "gym_gate")
    assert mix.code == 0 and gym.code == 1
    assert gym.out.startswith("kbt compare: FAIL gym_gate (float16)")
    assert "  why: MERE " in gym.out and "the mean gate" in gym.out
    report = json.loads(kbt(*args, "--criterion", "gym_gate", "--format", "json").out)
    assert report["criterion"] == "gym_gate" and report["verdict"] == "fail"
    assert {"matched_ratio", "max_abs_error", "mere", "mare", "threshold"} <= set(report["metrics"])
    assert set(report["legs"]) == {"dut"}


def test_kbt_compare_refuses_a_dtype_without_a_row(kbt, legs):
    result = kbt("compare", "--dut", legs / "fp8.pt", "--golden", legs / "fp8.pt", "--criterion", "gym_gate")
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.count("\n") == 1 and "CMP001" in result.err and "float8_e4m3fn" in result.err
