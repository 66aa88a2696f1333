"""numerics.stats against scipy and against textbook values computed independently here."""

import math

import pytest
from scipy.stats import binomtest

from kb_tools.numerics import stats


def _wilson(k, n, z):
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


@pytest.mark.parametrize("k,n,p", [(7, 10, 0.5), (480, 1000, 0.5), (3, 2000, 0.001), (0, 50, 0.1)])
def test_proportion_test_matches_scipy_and_the_wilson_formula(k, n, p):
    r = stats.proportion_test(k, n, p, confidence=0.95)
    assert r.p_value == pytest.approx(binomtest(k, n, p).pvalue)
    low, high = _wilson(k, n, 1.959963984540054)
    assert (r.wilson_low, r.wilson_high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))


def test_textbook_values():
    r = stats.proportion_test(7, 10, 0.5, confidence=0.95)
    assert r.p_value == pytest.approx(0.34375)  # 2 * (C(10,7)+C(10,8)+C(10,9)+C(10,10)) / 2^10
    assert (round(r.wilson_low, 4), round(r.wilson_high, 4)) == (0.3968, 0.8922)
    assert r.in_interval


def test_holm_step_down():
    adjusted, rejected = stats.holm([0.01, 0.04, 0.03, 0.005], alpha=0.05)
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert rejected == [True, False, False, True]
