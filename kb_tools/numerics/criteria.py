"""TTK's criteria, decision for decision, each returning a verdict that says why it failed.

The reference is hicann/ops-test-kit, ``ttk/core_modules/comparison/`` (mix_tolerance.py,
is_close.py, stat_rel_err.py, cross_check.py, binary_equal.py, quant.py; routing in resolve.py).
Here live the three element-wise float criteria; the bit-for-bit ones are in ``bitwise``,
cross_check in ``cross_check``. On the CPU, mix_tolerance, stat_rel_err and cross_check take
one compiled pass (``onepass``) that handles NaN/inf and the small-value region per element;
elsewhere (a device, an integer leg) each makes one chunked torch pass in TTK's working precision
(float32 unless a leg is float64), and a second one with TTK's NaN/inf masks only when the first
met a non-finite value. :func:`judge` gives the verdict; :func:`compare` gives it with each leg's
metrics, from the same single pass where the compiled pass takes the legs.
"""

from __future__ import annotations

import math

from kb_tools.numerics import chunks, metrics, onepass, routing
from kb_tools.numerics import tolerances as tol
from kb_tools.numerics.bitwise import binary_equal, quant
from kb_tools.numerics.cross_check import cross_check, cross_check_with_metrics
from kb_tools.numerics.gym_gate import gym_gate
from kb_tools.numerics.verdict import Verdict, dtype_name, empty, finish


def _finite_and_agreeing(torch, a, g):
    """TTK's masks: (both finite, a non-finite pair that matches — NaN with NaN, an infinity with itself)."""
    both = torch.isfinite(a) & torch.isfinite(g)
    same = (torch.isnan(a) & torch.isnan(g)) | (torch.isinf(a) & (a == g))
    return both, same


def _fast_or_masked(one_pass, *args):
    """``one_pass`` assuming finite data, redone with TTK's masks when its maximum (the last result)
    is not finite: a NaN/inf somewhere, or a difference that overflowed."""
    result = one_pass(*args, masked=False)
    return result if math.isfinite(result[-1]) else one_pass(*args, masked=True)


# ---- mix_tolerance ------------------------------------------------------------------------------

def _mix_pass(torch, a, g, row, work, masked: bool):
    """(matched, NaN/inf mismatches, max |a-g| over finite pairs); unmasked assumes finite data."""
    totals = chunks.Totals(2, 1)
    for lo, hi in chunks.spans(a.numel(), chunks.step(a)):
        af, gf = a[lo:hi].to(work), g[lo:hi].to(work)
        err = (af - gf).abs_()
        within = err <= gf.abs().mul_(row.rtol).add_(row.atol)
        if not masked:
            totals.add(within.sum().reshape(1), err.amax().reshape(1))  # no NaN/inf: no mismatch to count
            continue
        both, same = _finite_and_agreeing(torch, af, gf)
        totals.add(torch.stack([(same | (both & within)).sum(), (~both & ~same).sum()]),
                   err.masked_fill_(~both, 0).amax().reshape(1))
    return int(totals.sums[0]), int(totals.sums[1]), totals.maxes[0]


def mix_tolerance(dut, golden, dtype: str | None = None) -> Verdict:
    """|a-g| <= atol + rtol·|g| on at least 99 % of elements, and max |a-g| <= the dtype's cap.

    NaN against NaN and same-sign infinities match; any other non-finite disagreement makes the
    max error unbounded, so it fails the cap (mix_tolerance.py).
    """
    return _pair_criterion("mix_tolerance", dut, golden, dtype, with_metrics=False)[0]


def _pair_criterion(name: str, dut, golden, dtype: str | None, with_metrics: bool):
    """(verdict of mix_tolerance or stat_rel_err, the DUT's metrics or None): one compiled pass
    on the CPU, the criterion's torch pass(es) and a metrics pass elsewhere."""
    import torch

    (a, g), notes = chunks.flat_legs(dut, golden)
    dtype = dtype or dtype_name(dut)
    if a.numel() == 0:
        return empty(name, dtype, notes), (metrics.compute(a, g, dtype) if with_metrics else None)
    work = chunks.work_dtype(torch, a, g)
    row = tol.mix_row(dtype)
    if onepass.supports(a, g):
        stats = onepass.MIX_STATS if name == "mix_tolerance" else onepass.STAT_STATS
        s, sums = onepass.pair(a, g, work == torch.float64, row.rtol, row.atol, with_metrics, stats)
        if name == "mix_tolerance":
            verdict = _mix_verdict(dtype, notes, a.numel(), row, int(s["matched"]), int(s["mismatched"]), s["max_err"])
        else:
            verdict = _stat_verdict(dtype, notes, a.numel(), s["sum_rel_w"], int(s["finite"]), int(s["mismatched"]),
                                    s["max_rel_w"])
        return verdict, (metrics.from_sums(dtype, a.numel(), sums) if with_metrics else None)
    if name == "mix_tolerance":
        verdict = _mix_verdict(dtype, notes, a.numel(), row, *_fast_or_masked(_mix_pass, torch, a, g, row, work))
    else:
        verdict = _stat_verdict(dtype, notes, a.numel(), *_fast_or_masked(_stat_pass, torch, a, g, work))
    return verdict, (metrics.compute(a, g, dtype) if with_metrics else None)


def _mix_verdict(dtype, notes, n, row, matched, mismatched, max_err) -> Verdict:
    max_err = math.inf if mismatched else max_err
    ratio = matched / n
    v = Verdict("mix_tolerance", dtype, True, notes=notes, metrics={
        "rtol": row.rtol, "atol": row.atol, "matched_ratio": ratio,
        "required_matched_ratio": row.required_matched_ratio,
        "max_abs_error": None if math.isinf(max_err) else max_err, "max_abs_error_limit": row.max_abs_error_limit})
    if mismatched:
        v.reasons.append(f"NaN/inf mismatch at {mismatched} of {n} elements: the max error is unbounded")
    if ratio < row.required_matched_ratio:
        v.reasons.append(f"matched ratio {ratio:.6f} < {row.required_matched_ratio}: {n - matched} of {n} elements "
                         f"outside atol + rtol*|g| (rtol {row.rtol:.3g}, atol {row.atol:.3g})")
    if not mismatched and max_err > row.max_abs_error_limit:
        v.reasons.append(f"max abs error {max_err:.6g} > the {dtype} cap {row.max_abs_error_limit:g} "
                         f"({max_err / row.max_abs_error_limit:.2f}x)")
    if not v.reasons:
        v.notes.append(f"matched ratio {ratio:.6f}, max abs error {max_err:.6g} (cap {row.max_abs_error_limit:g})")
    return finish(v)


# ---- close ------------------------------------------------------------------------------------

def _close_types(torch, x, y):
    """numpy's dtypes inside np.isclose(x, y) after TTK's bf16 -> float32 normalisation.

    Returns (diff_dtype, bound_dtype): y becomes result_type(y, 1.0) — float64 for a float8 y
    (ml_dtypes) or an integer one, its own dtype otherwise — and |x - y| runs in the promotion of
    x with that.
    """
    def norm(t):
        return torch.float32 if t.dtype == torch.bfloat16 else t.dtype

    xd, yd = norm(x), norm(y)
    widened = (torch.float8_e4m3fn, torch.float8_e5m2)  # and any integer golden: 1.0 makes them float64
    bound = torch.float64 if yd in widened or not yd.is_floating_point else yd
    if xd == bound:
        return bound, bound
    if torch.float64 in (xd, bound):
        return torch.float64, bound
    if torch.float16 in (xd, bound) and xd.itemsize == 1:
        raise ValueError("TTK's isclose cannot promote float8 against float16 (numpy has no common type)")
    return torch.float32, bound


def _rounded(torch, x, dtype):
    """``x`` rounded to ``dtype`` and back: numpy holds each intermediate in ``dtype`` (fp16 math is
    float32 math rounded to fp16 after every op, as numpy's half loops do)."""
    return x if x.dtype == dtype else x.to(dtype).to(x.dtype)


def _scalar(torch, value: float, dtype) -> float:
    """A Python tolerance as numpy holds it next to an array of ``dtype`` (a weak scalar)."""
    return float(torch.tensor(value, dtype=dtype))


def _close_pass(torch, x, y, diff_t, bound_t, rtol: float, atol: float, masked: bool):
    """Elements outside isclose; None from the unmasked pass when it met a non-finite difference."""
    carrier = torch.float64 if torch.float64 in (diff_t, bound_t) else torch.float32
    totals = chunks.Totals(1, 1)
    for lo, hi in chunks.spans(x.numel(), chunks.step(x)):
        xc, yc = x[lo:hi].to(carrier), y[lo:hi].to(carrier)
        err = _rounded(torch, xc - yc, diff_t).abs_()
        ok = err <= _rounded(torch, _rounded(torch, yc.abs().mul_(rtol), bound_t).add_(atol), bound_t)
        if masked:
            ok = (ok & torch.isfinite(yc)) | (xc == yc) | (torch.isnan(xc) & torch.isnan(yc))
        totals.add(ok.sum().reshape(1), None if masked else err.amax().reshape(1))
    if not masked and not math.isfinite(totals.maxes[0]):
        return None
    return x.numel() - int(totals.sums[0])


def close(dut, golden, dtype: str | None = None) -> Verdict:
    """np.isclose(dut, golden, rtol, atol=1e-8, equal_nan=True) with TTK's rtol; FAIL when
    (1 - precision) > ptol, precision = (n - mismatches) / n, ptol = rtol (is_close.py)."""
    import torch

    (x, y), notes = chunks.flat_legs(dut, golden)
    dtype = dtype or dtype_name(dut)
    rtol = ptol = tol.close_rtol(dtype_name(dut))  # TTK reads the output's own dtype here
    n = x.numel()
    if n == 0:
        return empty("close", dtype, notes)
    diff_t, bound_t = _close_types(torch, x, y)
    r, at = _scalar(torch, rtol, bound_t), _scalar(torch, tol.CLOSE_ATOL, bound_t)
    mismatched = _close_pass(torch, x, y, diff_t, bound_t, r, at, masked=False)
    if mismatched is None:  # a NaN/inf somewhere: isfinite(y), x == y and equal_nan decide there
        mismatched = _close_pass(torch, x, y, diff_t, bound_t, r, at, masked=True)
    precision = (n - mismatched) / n
    v = Verdict("close", dtype, True, notes=notes, metrics={
        "rtol": rtol, "atol": tol.CLOSE_ATOL, "ptol": ptol, "precision": precision, "mismatched": mismatched})
    what = f"{mismatched} of {n} elements outside isclose(rtol={rtol:g}, atol={tol.CLOSE_ATOL:g})"
    if (1 - precision) > ptol:
        v.reasons.append(f"1 - precision = {1 - precision!r} > ptol {ptol:g}: {what}")
    else:
        v.notes.append(what)
    return finish(v)


# ---- stat_rel_err -----------------------------------------------------------------------------

def _stat_pass(torch, a, g, work, masked: bool):
    """(sum of relative errors, finite pairs, NaN/inf mismatches, max relative error), finite pairs only."""
    totals = chunks.Totals(3, 1)
    for lo, hi in chunks.spans(a.numel(), chunks.step(a)):
        af, gf = a[lo:hi].to(work), g[lo:hi].to(work)
        rel = (af - gf).abs_().div_(gf.abs().add_(tol.REL_EPS))
        if masked:
            both, same = _finite_and_agreeing(torch, af, gf)
            rel.masked_fill_(~both, 0)
            totals.add(torch.stack([rel.sum().double(), both.sum().double(), (~both & ~same).sum().double()]),
                       rel.amax().reshape(1))
        else:
            totals.add(torch.stack([rel.sum().double(), torch.tensor(float(hi - lo), dtype=torch.float64,
                                                                     device=rel.device),
                                    torch.zeros((), dtype=torch.float64, device=rel.device)]), rel.amax().reshape(1))
    total, n_finite, mismatched = totals.sums
    return total, int(n_finite), int(mismatched), totals.maxes[0]


def stat_rel_err(dut, golden, dtype: str | None = None) -> Verdict:
    """MERE < threshold and MARE < 10·threshold over finite pairs, rel = |a-g| / (|g| + 1e-7);
    a NaN/inf disagreement fails outright, all-matching non-finite data passes (stat_rel_err.py)."""
    return _pair_criterion("stat_rel_err", dut, golden, dtype, with_metrics=False)[0]


def _stat_verdict(dtype, notes, n, total, n_finite, mismatched, mare) -> Verdict:
    th = tol.stat_threshold(dtype)
    v = Verdict("stat_rel_err", dtype, True, notes=notes, metrics={"threshold": th, "mere": None, "mare": None})
    if mismatched:
        v.reasons.append(f"NaN/inf mismatch at {int(mismatched)} of {n} elements (MERE and MARE not computed)")
        return finish(v)
    if n_finite == 0:
        v.notes.append("no finite element pair, and every NaN/inf matches: MERE and MARE are undefined")
        return finish(v)
    mere = total / n_finite
    v.metrics.update(mere=mere, mare=mare)
    if mere >= th:
        v.reasons.append(f"MERE {mere:.6g} >= threshold {th:.6g} ({mere / th:.2f}x)")
    if mare >= tol.STAT_MARE_FACTOR * th:
        v.reasons.append(f"MARE {mare:.6g} >= {tol.STAT_MARE_FACTOR}*threshold {tol.STAT_MARE_FACTOR * th:.6g} "
                         f"({mare / (tol.STAT_MARE_FACTOR * th):.2f}x)")
    return finish(v)


# ---- the entry point ----------------------------------------------------------------------------

def judge(criterion: str, dut, golden, third_party=None, dtype: str | None = None,
          level: str | None = None) -> Verdict:
    """Apply ``criterion`` as TTK would to an output of ``dtype`` (default: the DUT's).

    TTK's routing comes first (integers and bool -> binary_equal, float8_e8m0/float4 -> bit
    comparison; ``mixed``/``isclose``/``binary`` are aliases); the verdict says when it switched.
    ValueError for input TTK refuses or that cannot be compared (different sizes).
    """
    return _apply(criterion, dut, golden, third_party, dtype, level, with_metrics=False)[0]


def compare(criterion: str, dut, golden, third_party=None, dtype: str | None = None,
            level: str | None = None) -> tuple[Verdict, dict]:
    """:func:`judge`'s verdict and the metrics of each leg that was judged against the golden
    ({"dut": Metrics, "third_party": Metrics}; none for the bit-for-bit criteria), from one pass
    over the legs where the compiled pass takes them (close: its own pass, then the metrics')."""
    return _apply(criterion, dut, golden, third_party, dtype, level, with_metrics=True)


def _apply(criterion, dut, golden, third_party, dtype, level, with_metrics: bool):
    dtype = dtype or dtype_name(dut)
    chosen = routing.route(criterion, dtype)
    legs = {}
    if chosen.applied == "binary_equal":
        v = binary_equal(dut, golden)
    elif chosen.applied == "quant":
        v = quant(dut, golden)
    elif chosen.applied == "cross_check":
        v, legs = cross_check_with_metrics(dut, golden, third_party, dtype, level or tol.DEFAULT_LEVEL, with_metrics)
    elif chosen.applied == "close":
        v = close(dut, golden, dtype)
        legs = {"dut": metrics.compute(dut, golden, dtype)} if with_metrics else {}
    elif chosen.applied == "gym_gate":  # the PyPTO-Pro samples' check, not TTK's
        v = gym_gate(dut, golden, dtype)
        legs = {"dut": metrics.compute(dut, golden, dtype)} if with_metrics else {}
    else:
        v, dut_metrics = _pair_criterion(chosen.applied, dut, golden, dtype, with_metrics)
        legs = {"dut": dut_metrics} if with_metrics else {}
    if chosen.reason:
        v.requested = routing.criterion_name(criterion)
        v.notes.insert(0, chosen.reason)
    return v, legs
