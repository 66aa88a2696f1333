"""TTK's five criteria as functions that return a verdict with the reason it failed.

Each float criterion reads one :class:`~kb_tools.numerics.metrics.Metrics` pass; the thresholds
live in :mod:`kb_tools.numerics.tolerances` with their sources. A criterion never divides by a
zero denominator: a ratio whose denominator is zero is reported as ``None`` and the judgement is
made without dividing (``dut <= limit * third_party``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kb_tools.numerics import metrics as _metrics
from kb_tools.numerics import tolerances as tol


@dataclass
class Verdict:
    criterion: str
    dtype: str
    passed: bool
    reasons: list[str] = field(default_factory=list)  # why it failed; empty when it passed
    notes: list[str] = field(default_factory=list)  # facts worth knowing either way
    metrics: dict = field(default_factory=dict)  # leg name -> Metrics.as_dict()
    ratios: dict = field(default_factory=dict)  # cross_check only; None = undefined
    level: str | None = None

    def as_dict(self) -> dict:
        return {"criterion": self.criterion, "dtype": self.dtype, "level": self.level,
                "verdict": "pass" if self.passed else "fail", "reasons": self.reasons,
                "notes": self.notes, "ratios": self.ratios, "metrics": self.metrics}


def _dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


def _special(m: _metrics.Metrics) -> list[str]:
    if m.special_mismatch:
        return [f"NaN/inf positions differ at {m.special_mismatch} of {m.n} elements"]
    return []


def binary_equal(dut, golden) -> Verdict:
    """Bit-for-bit equality; NaN at the same place counts as equal (TTK "二进制精确").

    Integers of different widths are compared by value in their common type, as TTK does; two
    different float dtypes cannot be bit-compared and raise ValueError.
    """
    import torch

    if tuple(dut.shape) != tuple(golden.shape):
        raise ValueError(f"shape {tuple(dut.shape)} does not match the golden's {tuple(golden.shape)}")
    golden = golden.to(dut.device)
    if dut.dtype != golden.dtype:
        if dut.dtype.is_floating_point or golden.dtype.is_floating_point:
            raise ValueError(f"binary_equal needs one dtype, got {_dtype_name(dut)} against {_dtype_name(golden)}")
        common = torch.promote_types(dut.dtype, golden.dtype)
        a, g = dut.to(common).reshape(-1), golden.to(common).reshape(-1)
        differ = a != g
    elif dut.dtype.is_floating_point:
        view = getattr(torch, _metrics._INT_VIEW[dut.element_size()])
        a, g = dut.reshape(-1), golden.reshape(-1)
        differ = (a.view(view) != g.view(view)) & ~(torch.isnan(a) & torch.isnan(g))
    else:
        differ = dut.reshape(-1) != golden.reshape(-1)
    count = int(differ.sum())
    verdict = Verdict("binary_equal", _dtype_name(dut), count == 0)
    if count:
        first = int(differ.nonzero()[0, 0])
        index = tuple(int(i) for i in torch.unravel_index(torch.tensor(first), tuple(dut.shape))) if dut.dim() else ()
        verdict.reasons.append(f"{count} of {differ.numel()} elements differ bitwise; first at index {index}: "
                               f"{dut.reshape(-1)[first].item()!r} vs golden {golden.reshape(-1)[first].item()!r}")
    return verdict


def _empty(criterion: str, m: _metrics.Metrics) -> Verdict:
    return Verdict(criterion, m.dtype, True, notes=["no elements to compare"], metrics={"dut": m.as_dict()})


def mix_tolerance(dut, golden, dtype: str | None = None) -> Verdict:
    """|a-g| <= atol + rtol·|g| on at least 99 % of elements, and no element over the hard cap."""
    m = _metrics.compute(dut, golden, dtype)
    if m.n == 0:
        return _empty("mix_tolerance", m)
    t = tol.MIX_TOLERANCE[tol.table_key(m.dtype)]
    v = Verdict("mix_tolerance", m.dtype, True, metrics={"dut": m.as_dict()})
    v.reasons += _special(m)
    ratio = (m.mix_ok + m.special_match) / m.n
    if ratio < t.matched_ratio:
        v.reasons.append(f"matched ratio {ratio:.6f} < {t.matched_ratio}: {m.n - m.mix_ok - m.special_match} of "
                         f"{m.n} elements outside atol + rtol*|g| (rtol {t.rtol:.3g}, atol {t.atol:.3g})")
    if m.cap_violations:
        v.reasons.append(f"{m.cap_violations} elements over the hard cap |a-g| <= {t.max_abs_limit:g} and more than "
                         f"{tol.MIX_MAX_ULP} ULP off (max abs error {m.max_abs:.6g})")
    v.passed = not v.reasons
    if v.passed:
        v.notes.append(f"matched ratio {ratio:.6f} (rtol {t.rtol:.3g}, atol {t.atol:.3g})")
    return v


def close(dut, golden, dtype: str | None = None) -> Verdict:
    """isclose with TTK's rtol, atol 1e-8, and at most a share ``ptol`` (= rtol) of mismatches."""
    m = _metrics.compute(dut, golden, dtype)
    if m.n == 0:
        return _empty("close", m)
    rtol = tol.CLOSE_RTOL[tol.table_key(m.dtype)]
    v = Verdict("close", m.dtype, True, metrics={"dut": m.as_dict()})
    mismatched = m.n - m.close_ok - m.special_match
    share = mismatched / m.n
    what = f"{mismatched} of {m.n} elements outside isclose(rtol={rtol:g}, atol={tol.CLOSE_ATOL:g})"
    if share > rtol:
        v.reasons.append(f"mismatch share {share:.6f} > allowed {rtol:g}: {what}")
    else:
        v.notes.append(what)
    v.passed = not v.reasons
    return v


def stat_rel_err(dut, golden, dtype: str | None = None) -> Verdict:
    """MERE < thr and MARE < 10·thr; a NaN/inf disagreement fails outright."""
    m = _metrics.compute(dut, golden, dtype)
    if m.n == 0:
        return _empty("stat_rel_err", m)
    thr = tol.STAT_REL_ERR[tol.table_key(m.dtype)]
    v = Verdict("stat_rel_err", m.dtype, True, metrics={"dut": m.as_dict()})
    v.reasons += _special(m)
    if m.finite == 0:
        v.notes.append("no finite element pair: MERE and MARE are undefined")
    else:
        if m.mere >= thr:
            v.reasons.append(f"MERE {m.mere:.6g} >= threshold {thr:.6g} ({m.mere / thr:.2f}x)")
        if m.max_rel >= tol.STAT_MARE_FACTOR * thr:
            v.reasons.append(f"MARE {m.max_rel:.6g} >= {tol.STAT_MARE_FACTOR}*threshold "
                             f"{tol.STAT_MARE_FACTOR * thr:.6g} ({m.max_rel / (tol.STAT_MARE_FACTOR * thr):.2f}x)")
    v.passed = not v.reasons
    return v


def _judge_ratio(name: str, dut: float | None, tp: float | None, limit: float, v: Verdict) -> None:
    """Record DUT/third-party for one error measure and fail it if over ``limit``."""
    if dut is None:
        v.ratios[name] = None
        return
    if not tp:
        v.ratios[name] = None
        if dut > 0:
            v.reasons.append(f"{name} ratio undefined: the third-party leg's error is 0 while the DUT's is {dut:.6g} "
                             f"(the reference has collapsed onto the third-party leg?)")
        return
    ratio = dut / tp
    v.ratios[name] = ratio
    if ratio > limit:
        v.reasons.append(f"{name} ratio {ratio:.4g} > {limit:g} (DUT {dut:.6g} vs third party {tp:.6g}, "
                         f"{ratio / limit:.2f}x the limit)")


def cross_check(dut, golden, third_party, dtype: str | None = None, level: str = tol.DEFAULT_LEVEL) -> Verdict:
    """DUT-vs-golden error over third-party-vs-golden error, by level; small values by error counts.

    Large-value region (|g| >= small value): the max-, mean-relative-error and RMSE ratios must
    not exceed the level's limits. Small-value region: the DUT's error count must not exceed
    twice the third party's (XPU_Cross_Check.md, Precision_Comparison.md §8).
    """
    if third_party is None:
        raise ValueError("cross_check needs the third-party leg")
    if level not in tol.LEVELS:
        raise ValueError(f"unknown level {level!r}; choose one of {', '.join(tol.LEVELS)}")
    md = _metrics.compute(dut, golden, dtype)
    mt = _metrics.compute(third_party, golden, md.dtype)
    if md.dtype not in tol.CROSS_CHECK_DTYPES:
        raise ValueError(f"cross_check supports {', '.join(tol.CROSS_CHECK_DTYPES)}, not {md.dtype}")
    limits = tol.LEVELS[level]
    v = Verdict("cross_check", md.dtype, True, metrics={"dut": md.as_dict(), "third_party": mt.as_dict()}, level=level)
    if md.n == 0:
        v.notes.append("no elements to compare")
        return v
    v.reasons += _special(md)
    if mt.special_mismatch:
        v.notes.append(f"the third-party leg's NaN/inf positions differ from the golden at {mt.special_mismatch} elements")
    if md.large:
        _judge_ratio("mare", md.large_mare, mt.large_mare, limits.mare, v)
        _judge_ratio("mere", md.large_mere, mt.large_mere, limits.mere, v)
        _judge_ratio("rmse", md.large_rmse, mt.large_rmse, limits.rmse, v)
    else:
        v.notes.append("no element in the large-value region")
    if md.small:
        v.ratios["small_errors"] = md.small_errors / mt.small_errors if mt.small_errors else None
        if md.small_errors > tol.SMALL_COUNT_RATIO * mt.small_errors:
            v.reasons.append(f"small-value region (|g| < {tol.SMALL_VALUE[md.dtype]:.3g}, {md.small} elements): DUT has "
                             f"{md.small_errors} errors > {tol.SMALL_COUNT_RATIO:g} x the third party's {mt.small_errors}")
    v.passed = not v.reasons
    return v


FLOAT_CRITERIA = {"close": close, "mix_tolerance": mix_tolerance, "stat_rel_err": stat_rel_err}


def judge(criterion: str, dut, golden, third_party=None, dtype: str | None = None,
          level: str | None = None) -> Verdict:
    """Apply one criterion by name; ValueError for input it cannot judge."""
    if criterion == "binary_equal":
        return binary_equal(dut, golden)
    if not dut.dtype.is_floating_point:
        raise ValueError(f"{criterion} judges floating outputs; {_dtype_name(dut)} is judged by binary_equal")
    if criterion == "cross_check":
        return cross_check(dut, golden, third_party, dtype, level or tol.DEFAULT_LEVEL)
    if criterion not in FLOAT_CRITERIA:
        raise ValueError(f"unknown criterion {criterion!r}; choose one of {', '.join(tol.CRITERIA)}")
    return FLOAT_CRITERIA[criterion](dut, golden, dtype)
