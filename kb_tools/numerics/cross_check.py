"""TTK's cross_check (cross_check.py): the DUT's error against a same-precision third party's,
both measured against a more precise golden, in one pass (compiled on the CPU, ``onepass``;
chunked torch elsewhere)."""

from __future__ import annotations

import math

from kb_tools.numerics import chunks, metrics, onepass
from kb_tools.numerics import tolerances as tol
from kb_tools.numerics.verdict import Verdict, dtype_name, finish

FLOAT32_MAX = 3.4028234663852886e38


def safe_div(num: float, den: float, floor: float) -> float:
    """TTK's ratio (cross_check.py): the denominator is floored at the small value, 0/0 and
    inf/inf are 1 (consistent), NaN anywhere or an overflowing DUT is inf."""
    if math.isnan(num) or math.isnan(den):
        return math.inf
    if math.isinf(num):
        return 1.0 if math.isinf(den) else math.inf
    if num == 0 and den == 0:
        return 1.0
    return num / max(den, floor)


def _square_sum(torch, x):
    """Sum of squares as TTK's float32 mean sees it, redone in float64 when the squares overflow."""
    total = torch.dot(x, x) if x.dtype == torch.float64 else (x * x).sum()
    if x.dtype != torch.float64 and math.isinf(float(total)):
        total = torch.dot(x.double(), x.double())
    return total.double()


def _cross_chunk(torch, t, g, b, sv: tol.SmallValue, masked: bool):
    """One chunk's counts and sums (float64) and the maxima of DUT and third-party relative error.

    Unmasked, the chunk is assumed finite: the few small-value elements are gathered by index and
    zeroed out of the large-region sums in place, so the common case costs no full-size mask.
    """
    ag = g.abs()
    dt, db = (t - g).abs_(), (b - g).abs_()
    zero_i = torch.zeros((), dtype=torch.int64, device=t.device)
    if masked:
        fin = torch.isfinite(t) & torch.isfinite(g) & torch.isfinite(b)
        t_nan = torch.isnan(t)
        agrees = (t_nan & torch.isnan(b)) | (t == b) | (~torch.isfinite(g) & ((t_nan & torch.isnan(g)) | (t == g)))
        special_fail = (~fin & ~agrees).sum()
        small = fin & (ag < sv.small_value)
        outside = ~fin | small
        for x in (dt, db):
            x.masked_fill_(~fin, 0)
    else:
        special_fail = zero_i
        small = ag < sv.small_value
    idx = small.nonzero().squeeze(1)
    n_small = idx.numel()
    small_t, small_b = dt[idx], db[idx]
    small_err = torch.stack([(small_t > sv.small_value_atol).sum(), (small_b > sv.small_value_atol).sum()])
    den = ag.add_(tol.REL_EPS)
    rel_t, rel_b = dt / den, db / den
    if masked:
        for x in (rel_t, rel_b, dt, db):
            x.masked_fill_(outside, 0)
        n_large = (~outside).sum()
    else:
        if n_small:
            for x in (rel_t, rel_b, dt, db):
                x.index_fill_(0, idx, 0)
        n_large = torch.tensor(t.numel() - n_small, device=t.device)
    max_b = rel_b.amax()
    tp_inf = torch.isinf(rel_b).sum() if math.isinf(float(max_b)) else zero_i
    counts = torch.stack([n_large, torch.tensor(n_small, device=t.device), small_err[0], small_err[1],
                          special_fail, tp_inf]).double()
    sums = torch.cat([counts, torch.stack([rel_t.sum().double(), rel_b.sum().double(),
                                           _square_sum(torch, dt), _square_sum(torch, db)])])
    finite_check = None if masked else torch.stack([small_t.sum(), small_b.sum()])  # NaN/inf propagate
    return sums, torch.stack([rel_t.amax(), max_b]), finite_check


_ORDER = ("large", "small", "small_err_dut", "small_err_tp", "special_fail", "tp_rel_inf",
          "sum_rel_dut", "sum_rel_tp", "sum_sq_dut", "sum_sq_tp")


def _as_work(value: float, work_is_f32: bool) -> float:
    """A float64 mean as TTK's float32 mean would hold it: past float32's range it is inf."""
    return math.inf if work_is_f32 and abs(value) > FLOAT32_MAX else value


def _cross_pass(torch, t, g, b, sv, work, masked: bool):
    """Region sums and maxima over all chunks; (None, None, None) when the unmasked pass met a
    non-finite value: NaN/inf in any leg shows as a non-finite relative error outside the small
    region, or a non-finite difference inside it."""
    totals, checks = chunks.Totals(len(_ORDER), 2), chunks.Totals(0, 2)
    for lo, hi in chunks.spans(t.numel(), chunks.step(t)):
        sums, maxes, check = _cross_chunk(torch, t[lo:hi].to(work), g[lo:hi].to(work), b[lo:hi].to(work), sv, masked)
        totals.add(sums, maxes)
        if not masked:
            checks.add(maxes=check)
    if not masked and not all(math.isfinite(x) for x in totals.maxes + checks.maxes):
        return None, None, None
    return dict(zip(_ORDER, totals.sums)), totals.maxes[0], totals.maxes[1]


def cross_check(dut, golden, third_party, dtype: str | None = None, level: str = tol.DEFAULT_LEVEL) -> Verdict:
    """DUT-vs-golden error against third-party-vs-golden error (cross_check.py).

    Special positions (NaN/inf in any leg) pass when the DUT equals the third party, or when the
    golden is non-finite and the DUT equals it. Large-value region (finite, |g| >= small value):
    mare, mere and rmse ratios through safe_div, each within the level's limit. Small-value region:
    DUT errors / max(third-party errors, 1) <= 2. The third party must hold the DUT's dtype (a
    same-precision implementation); TTK would promote any leg, so an int8 leg of zeros made every
    DUT look good (hostile-3 repro 30).
    """
    return cross_check_with_metrics(dut, golden, third_party, dtype, level, with_metrics=False)[0]


def _check_arguments(dut, third_party, dtype: str, level: str) -> None:
    if third_party is None:
        raise ValueError("cross_check needs the third-party leg")
    if level not in tol.LEVELS:
        raise ValueError(f"unknown level {level!r}; choose one of {', '.join(tol.LEVELS)}")
    if dtype not in tol.SMALL_VALUE:
        raise ValueError(f"cross_check supports {', '.join(tol.SMALL_VALUE)} only (TTK), not {dtype}")
    if third_party.dtype != dut.dtype:
        raise ValueError(f"the third-party leg holds {dtype_name(third_party)}, the DUT {dtype_name(dut)}: cross_check "
                         f"compares the DUT with a third-party implementation of the same precision")


def cross_check_with_metrics(dut, golden, third_party, dtype: str | None = None, level: str = tol.DEFAULT_LEVEL,
                             with_metrics: bool = True):
    """(:func:`cross_check`'s verdict, {"dut": Metrics, "third_party": Metrics} or {}), the
    criterion and both legs' metrics from one pass where the compiled pass takes the legs."""
    import torch

    dtype = dtype or dtype_name(dut)
    _check_arguments(dut, third_party, dtype, level)
    (t, g, b), notes = chunks.flat_legs(dut, golden, third_party)
    sv, limits = tol.SMALL_VALUE[dtype], tol.LEVELS[level]
    v = Verdict("cross_check", dtype, True, notes=notes, level=level)
    n = t.numel()
    legs = {}
    if n == 0:
        v.notes.append("no elements to compare")
        return v, ({"dut": metrics.compute(t, g, dtype), "third_party": metrics.compute(b, g, dtype)}
                   if with_metrics else {})
    work = chunks.work_dtype(torch, t, g, b)
    if onepass.supports(t, g, b):
        s, dut_sums, tp_sums = onepass.cross(t, g, b, work == torch.float64, sv, with_metrics)
        max_rel_dut, max_rel_tp = s["max_rel_dut"], s["max_rel_tp"]
        if with_metrics:
            legs = {"dut": metrics.from_sums(dtype, n, dut_sums), "third_party": metrics.from_sums(dtype, n, tp_sums)}
    else:
        s, max_rel_dut, max_rel_tp = _cross_pass(torch, t, g, b, sv, work, masked=False)
        if s is None:  # a NaN/inf in some leg (or an overflowing difference): TTK's three-way masks
            s, max_rel_dut, max_rel_tp = _cross_pass(torch, t, g, b, sv, work, masked=True)
        if with_metrics:
            legs = {"dut": metrics.compute(t, g, dtype), "third_party": metrics.compute(b, g, dtype)}
    v.metrics = {"small_value": sv.small_value, "small_value_atol": sv.small_value_atol,
                 "limits": {"mare": limits.mare, "mere": limits.mere, "rmse": limits.rmse},
                 "large": int(s["large"]), "small": int(s["small"]),
                 "small_err_cnt_dut": int(s["small_err_dut"]), "small_err_cnt_third": int(s["small_err_tp"])}
    if s["special_fail"]:
        v.reasons.append(f"NaN/inf mismatch at {int(s['special_fail'])} positions: the DUT matches neither the "
                         f"third party nor a non-finite golden there")
    _judge_large(v, s, max_rel_dut, max_rel_tp, sv, limits, work == torch.float32)
    if s["small"]:
        ratio = s["small_err_dut"] / max(s["small_err_tp"], 1)
        v.ratios["small_err"] = ratio
        if ratio > tol.SMALL_COUNT_RATIO:
            v.reasons.append(f"small-value region (|g| < {sv.small_value:.3g}, {int(s['small'])} elements): DUT errors "
                             f"{int(s['small_err_dut'])} / max(third-party errors {int(s['small_err_tp'])}, 1) = "
                             f"{ratio:.3g} > {tol.SMALL_COUNT_RATIO:g}")
    return finish(v), legs


def _judge_large(v, s, max_rel_dut, max_rel_tp, sv, limits, work_is_f32) -> None:
    large = s["large"]
    if not large:
        v.notes.append("no element in the large-value region")
        return
    if s["tp_rel_inf"] == large:
        v.notes.append("the third party's relative error is inf at every large-value element: TTK skips the ratios")
        return
    mean_dut = _as_work(s["sum_rel_dut"] / large, work_is_f32)
    mean_tp = _as_work(s["sum_rel_tp"] / large, work_is_f32)
    rmse_dut, rmse_tp = math.sqrt(s["sum_sq_dut"] / large), math.sqrt(s["sum_sq_tp"] / large)
    v.metrics.update(mare_dut=max_rel_dut, mare_third=max_rel_tp, mere_dut=mean_dut, mere_third=mean_tp,
                     rmse_dut=rmse_dut, rmse_third=rmse_tp)
    for name, num, den, limit in (("mare", max_rel_dut, max_rel_tp, limits.mare),
                                  ("mere", mean_dut, mean_tp, limits.mere),
                                  ("rmse", rmse_dut, rmse_tp, limits.rmse)):
        ratio = safe_div(num, den, sv.small_value)
        v.ratios[name] = ratio
        if ratio > limit:
            floored = " (third party floored at the small value)" if den < sv.small_value and num else ""
            v.reasons.append(f"{name} ratio {ratio:.4g} > {limit:g}: DUT {num:.6g} vs third party {den:.6g}{floored}")
