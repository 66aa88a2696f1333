"""Seed 000 §5's four-cell table, over both legs, and the case mode of §2."""

import pytest
import torch

from kb_tools.numerics import promote

# (dtype, three_party, DUT widening, leg) -> (entry, compute, exit, output); None = that leg does not run.
TABLE = [
    # float + three-party: the golden is zero-cast in the promoted dtype; the GPU leg follows the DUT.
    ("float16", True, "float32", "golden", (None, "float32", None, "float32")),
    ("float16", True, "float32", "third_party", ("float32", "float32", "float16", "float16")),
    ("float16", True, None, "golden", (None, "float32", None, "float32")),
    ("float16", True, None, "third_party", (None, "float16", None, "float16")),
    ("bfloat16", True, "float32", "golden", (None, "float32", None, "float32")),
    ("float32", True, None, "golden", (None, "float64", None, "float64")),
    ("float32", True, None, "third_party", (None, "float32", None, "float32")),
    # float + two-party: the golden follows the DUT's widening and narrowing; no GPU leg.
    ("float16", False, "float32", "golden", ("float32", "float32", "float16", "float16")),
    ("float16", False, None, "golden", (None, "float16", None, "float16")),
    ("float16", False, "float32", "third_party", None),
    # integer + three-party (a mixed-dtype multi-output case): both legs follow the DUT, no Promote.
    ("int8", True, "int32", "golden", ("int32", "int32", "int8", "int8")),
    ("int8", True, "int32", "third_party", ("int32", "int32", "int8", "int8")),
    ("int32", True, None, "golden", (None, "int32", None, "int32")),
    # integer + two-party: the golden follows the DUT; no GPU leg.
    ("int16", False, "int32", "golden", ("int32", "int32", "int16", "int16")),
    ("int16", False, "int32", "third_party", None),
]


def _policy(dtype, three_party, widening, leg):
    if leg == "golden":
        return promote.golden_policy(dtype, three_party, widening)
    return promote.third_party_policy(dtype, three_party, widening)


@pytest.mark.parametrize("dtype,three_party,widening,leg,expected", TABLE)
def test_four_cell_table(dtype, three_party, widening, leg, expected):
    p = _policy(dtype, three_party, widening, leg)
    if expected is None:
        assert p is None
    else:
        assert (p.entry, p.compute, p.exit, p.output) == expected


def test_promote_map_has_no_integer_entry():
    assert all(promote.dtype_class(k) == "float" for k in promote.PROMOTE_MAP)
    assert promote.promoted("int8") == "int8" and promote.promoted("float32") == "float64"
    with pytest.raises(ValueError):
        promote.golden_policy("float128", True, None)


def test_case_mode_three_party_when_any_output_cross_checks():
    mode = promote.case_mode({"y": "cross_check", "idx": "binary_equal"})
    assert mode.three_party and mode.promote and not mode.warnings
    assert not promote.case_mode({"y": "mix_tolerance"}).three_party


def test_close_override_switches_promote_off_and_warns():
    mode = promote.case_mode({"y": "cross_check"}, override="close")
    assert not mode.three_party and not mode.promote
    assert mode.criteria == {"y": "close"}
    assert "Promote is off" in mode.warnings[0]
    assert not promote.case_mode({"y": "mix_tolerance"}, override="close").warnings


def test_run_leg_narrows_an_integer_sum_that_torch_widens():
    x = torch.full((4, 100), 100, dtype=torch.int8)
    assert torch.sum(x, -1).dtype == torch.int64  # torch widens integer sums on its own
    policy = promote.third_party_policy("int8", True, "int32")
    out = promote.run_leg(policy, lambda t: torch.sum(t, -1), x)
    assert out.dtype == torch.int8
    assert out.tolist() == [((10000 + 128) % 256) - 128] * 4  # wrapped, as an int8 store of AccT


def test_run_leg_zero_cast_golden_returns_promoted_dtype():
    x = torch.randn(8, dtype=torch.float16)
    (xp,) = promote.ttk_promote(x)
    assert xp.dtype == torch.float32
    out = promote.run_leg(promote.golden_policy("float16", True, "float32"), torch.exp, xp)
    assert out.dtype == torch.float32
