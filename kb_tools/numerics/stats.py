"""Acceptance statistics for random operators (seed 001 §5.1: 99 % Wilson interval, exact
two-sided binomial test, Holm correction). scipy computes; nothing here re-derives a test."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class ProportionTest:
    k: int  # ones observed
    n: int  # trials
    p: float  # expected probability of a one
    wilson_low: float
    wilson_high: float
    p_value: float  # exact two-sided binomial test
    z: float  # (k - n p) / sqrt(n p (1 - p)); 0 when p is 0 or 1

    @property
    def in_interval(self) -> bool:
        return self.wilson_low <= self.p <= self.wilson_high


def proportion_test(k: int, n: int, p: float, confidence: float = 0.99) -> ProportionTest:
    """Wilson interval at ``confidence`` and the exact two-sided binomial p-value for k of n."""
    from scipy.stats import binomtest

    result = binomtest(int(k), int(n), float(p), alternative="two-sided")
    ci = result.proportion_ci(confidence_level=confidence, method="wilson")
    var = n * p * (1.0 - p)
    z = (k - n * p) / math.sqrt(var) if var > 0 else 0.0
    return ProportionTest(int(k), int(n), float(p), float(ci.low), float(ci.high), float(result.pvalue), z)


def holm(p_values: list[float], alpha: float = 0.01) -> tuple[list[float], list[bool]]:
    """Holm's step-down correction: (adjusted p-values, rejected?) in the input's order.

    scipy has no Holm procedure (its false_discovery_control is Benjamini-Hochberg), so the
    step-down is written out: the i-th smallest p is scaled by (m - i), a running maximum
    keeps the adjusted values monotone, and each is capped at 1.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted, [a <= alpha for a in adjusted]
