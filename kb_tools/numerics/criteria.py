"""TTK's criteria, decision for decision, each returning a verdict that says why it failed.

The reference is hicann/ops-test-kit, ``ttk/core_modules/comparison/`` (mix_tolerance.py,
is_close.py, stat_rel_err.py, cross_check.py, binary_equal.py, quant.py; routing in resolve.py).
Each criterion makes one chunked pass in TTK's working precision (float32 unless a leg is float64)
and computes only the statistics its decision needs. :func:`judge` is the one entry point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from kb_tools.numerics import chunks, routing
from kb_tools.numerics import tolerances as tol

FLOAT32_MAX = 3.4028234663852886e38


@dataclass
class Verdict:
    criterion: str  # the criterion applied (after TTK's routing)
    dtype: str
    passed: bool
    reasons: list[str] = field(default_factory=list)  # why it failed; empty when it passed
    notes: list[str] = field(default_factory=list)  # facts worth knowing either way
    metrics: dict = field(default_factory=dict)  # the criterion's own numbers, TTK's names
    ratios: dict = field(default_factory=dict)  # cross_check: DUT error / third-party error
    level: str | None = None
    requested: str | None = None  # the criterion asked for, when routing changed it

    def as_dict(self) -> dict:
        return {"criterion": self.criterion, "requested": self.requested, "dtype": self.dtype,
                "level": self.level, "verdict": "pass" if self.passed else "fail", "reasons": self.reasons,
                "notes": self.notes, "ratios": self.ratios, "metrics": self.metrics}


def _name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


def _finish(v: Verdict) -> Verdict:
    v.passed = not v.reasons
    return v


def _empty(criterion: str, dtype: str, notes: list[str]) -> Verdict:
    """TTK's _check_empty: two empty outputs pass (sizes are equal by now)."""
    return Verdict(criterion, dtype, True, notes=notes + ["no elements to compare"])


# ---- binary_equal and quant -------------------------------------------------------------------

_INT_VIEW = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


def _nan_mask(torch, t):
    """NaN positions; float8_e8m0fnu's only NaN is the byte 0xFF, the 4-bit floats have none."""
    if t.dtype == getattr(torch, "float8_e8m0fnu", None):
        return t.view(torch.uint8) == 0xFF
    if t.dtype == getattr(torch, "float4_e2m1fn_x2", None):
        return torch.zeros(t.shape, dtype=torch.bool, device=t.device)
    return torch.isnan(t.float() if t.element_size() == 1 else t)


def _bit_differences(torch, a, g):
    """Per-element 'differs bitwise and is not NaN on both sides'; float4 pairs split per value."""
    if a.dtype == getattr(torch, "float4_e2m1fn_x2", None):
        ab, gb = a.view(torch.uint8), g.view(torch.uint8)
        return torch.stack([(ab & 0xF) != (gb & 0xF), (ab >> 4) != (gb >> 4)], -1).reshape(-1)
    if not a.dtype.is_floating_point:
        return a != g
    view = getattr(torch, _INT_VIEW[a.element_size()])
    return (a.view(view) != g.view(view)) & ~(_nan_mask(torch, a) & _nan_mask(torch, g))


def _integer_like(torch, t) -> bool:
    return not t.dtype.is_floating_point and not t.dtype.is_complex


def binary_equal(dut, golden) -> Verdict:
    """Bit-for-bit equality; NaN against NaN counts as equal (binary_equal.py).

    Legs of two dtypes are compared only when both are integers (or bool) whose numpy promotion
    is an integer type; any other pair is a FAIL, "not bitwise comparable", as in TTK.
    """
    import numpy as np
    import torch

    (a, g), notes = chunks.flat_legs(dut, golden)
    v = Verdict("binary_equal", _name(dut), True, notes=notes)
    if a.numel() == 0:
        return _empty("binary_equal", _name(dut), notes)
    if a.dtype != g.dtype:
        common = None
        if _integer_like(torch, a) and _integer_like(torch, g):
            promoted = np.promote_types(np.dtype(_name(a)), np.dtype(_name(g)))
            if np.issubdtype(promoted, np.integer):
                common = getattr(torch, promoted.name)
        if common is None:
            v.reasons.append(f"{_name(a)} against {_name(g)} is not bitwise comparable (TTK fails it: only "
                             f"integers promote to a common integer type)")
            v.metrics = {"differing": None, "n": a.numel()}
            return _finish(v)
        a, g = a.to(common), g.to(common)
        v.notes.append(f"compared as {promoted.name}, the two integer dtypes' common type")
    differ = _bit_differences(torch, a, g)
    count = int(differ.sum())
    v.metrics = {"differing": count, "n": differ.numel(), "precision": (differ.numel() - count) / differ.numel()}
    if count:
        first = int(differ.nonzero()[0, 0])
        where = _index(torch, dut, first) if differ.numel() == a.numel() else (first,)
        v.reasons.append(f"{count} of {differ.numel()} elements differ bitwise; first at index {where}"
                         + _values_at(a, g, first, differ.numel() == a.numel()))
    return _finish(v)


def _index(torch, t, flat: int) -> tuple:
    if t.dim() == 0:
        return ()
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), tuple(t.shape)))


def _values_at(a, g, i: int, readable: bool) -> str:
    if not readable or a.element_size() == 1 and a.dtype.is_floating_point:
        return ""
    return f": {a[i].item()!r} vs golden {g[i].item()!r}"


def quant(dut, golden, ptol: float = 0.0) -> Verdict:
    """TTK's quant: |a - g| <= 1 on an int4/int8 output declared quantised; share over it <= ptol."""
    import torch

    (a, g), notes = chunks.flat_legs(dut, golden)
    if a.numel() == 0:
        return _empty("quant", _name(dut), notes)
    over = int(((a.to(torch.int32) - g.to(torch.int32)).abs() > tol.QUANT_ABS_LIMIT).sum())
    precision = (a.numel() - over) / a.numel()
    v = Verdict("quant", _name(dut), True, notes=notes,
                metrics={"exceed_count": over, "precision": precision, "ptol": ptol})
    if (1 - precision) > ptol:
        v.reasons.append(f"{over} of {a.numel()} elements off by more than {tol.QUANT_ABS_LIMIT} "
                         f"(share {1 - precision:.6g} > ptol {ptol:g})")
    return _finish(v)


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
        both = torch.isfinite(af) & torch.isfinite(gf)
        same = (torch.isnan(af) & torch.isnan(gf)) | (torch.isinf(af) & (af == gf))
        totals.add(torch.stack([(same | (both & within)).sum(), (~both & ~same).sum()]),
                   err.masked_fill_(~both, 0).amax().reshape(1))
    return int(totals.sums[0]), int(totals.sums[1]), totals.maxes[0]


def mix_tolerance(dut, golden, dtype: str | None = None) -> Verdict:
    """|a-g| <= atol + rtol·|g| on at least 99 % of elements, and max |a-g| <= the dtype's cap.

    NaN against NaN and same-sign infinities match; any other non-finite disagreement makes the
    max error unbounded, so it fails the cap (mix_tolerance.py).
    """
    import torch

    (a, g), notes = chunks.flat_legs(dut, golden)
    dtype = dtype or _name(dut)
    row = tol.mix_row(dtype)
    n = a.numel()
    if n == 0:
        return _empty("mix_tolerance", dtype, notes)
    work = chunks.work_dtype(torch, a, g)
    matched, mismatched, max_err = _mix_pass(torch, a, g, row, work, masked=False)
    if not math.isfinite(max_err):  # a NaN/inf somewhere (or an overflowing difference): TTK's masks
        matched, mismatched, max_err = _mix_pass(torch, a, g, row, work, masked=True)
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
    return _finish(v)


# ---- close ------------------------------------------------------------------------------------

def _close_types(torch, x, y):
    """numpy's dtypes inside np.isclose(x, y) after TTK's bf16 -> float32 normalisation.

    Returns (diff_dtype, bound_dtype): y becomes result_type(y, 1.0) — float64 for a float8 y
    (ml_dtypes), its own dtype otherwise — and |x - y| runs in the promotion of x with that.
    """
    def norm(t):
        return torch.float32 if t.dtype == torch.bfloat16 else t.dtype

    xd, yd = norm(x), norm(y)
    bound = torch.float64 if yd in (torch.float8_e4m3fn, torch.float8_e5m2) else yd
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
    dtype = dtype or _name(dut)
    rtol = ptol = tol.close_rtol(_name(dut))  # TTK reads the output's own dtype here
    n = x.numel()
    if n == 0:
        return _empty("close", dtype, notes)
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
    return _finish(v)


# ---- stat_rel_err -----------------------------------------------------------------------------

def _stat_pass(torch, a, g, work, masked: bool):
    """(sum of relative errors, finite pairs, NaN/inf mismatches, max relative error), finite pairs only."""
    totals = chunks.Totals(3, 1)
    for lo, hi in chunks.spans(a.numel(), chunks.step(a)):
        af, gf = a[lo:hi].to(work), g[lo:hi].to(work)
        rel = (af - gf).abs_().div_(gf.abs().add_(tol.REL_EPS))
        if masked:
            both = torch.isfinite(af) & torch.isfinite(gf)
            same = (torch.isnan(af) & torch.isnan(gf)) | (torch.isinf(af) & (af == gf))
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
    import torch

    (a, g), notes = chunks.flat_legs(dut, golden)
    dtype = dtype or _name(dut)
    th = tol.stat_threshold(dtype)
    n = a.numel()
    if n == 0:
        return _empty("stat_rel_err", dtype, notes)
    work = chunks.work_dtype(torch, a, g)
    total, n_finite, mismatched, mare = _stat_pass(torch, a, g, work, masked=False)
    if not math.isfinite(mare):  # a NaN/inf somewhere (or an overflowing error): TTK's masks
        total, n_finite, mismatched, mare = _stat_pass(torch, a, g, work, masked=True)
    v = Verdict("stat_rel_err", dtype, True, notes=notes, metrics={"threshold": th, "mere": None, "mare": None})
    if mismatched:
        v.reasons.append(f"NaN/inf mismatch at {int(mismatched)} of {n} elements (MERE and MARE not computed)")
        return _finish(v)
    if n_finite == 0:
        v.notes.append("no finite element pair, and every NaN/inf matches: MERE and MARE are undefined")
        return _finish(v)
    mere = total / n_finite
    v.metrics.update(mere=mere, mare=mare)
    if mere >= th:
        v.reasons.append(f"MERE {mere:.6g} >= threshold {th:.6g} ({mere / th:.2f}x)")
    if mare >= tol.STAT_MARE_FACTOR * th:
        v.reasons.append(f"MARE {mare:.6g} >= {tol.STAT_MARE_FACTOR}*threshold {tol.STAT_MARE_FACTOR * th:.6g} "
                         f"({mare / (tol.STAT_MARE_FACTOR * th):.2f}x)")
    return _finish(v)


# ---- cross_check ------------------------------------------------------------------------------

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
        dt.masked_fill_(~fin, 0), db.masked_fill_(~fin, 0)
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
        rel_t.masked_fill_(outside, 0), rel_b.masked_fill_(outside, 0), dt.masked_fill_(outside, 0)
        db.masked_fill_(outside, 0)
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
    DUT errors / max(third-party errors, 1) <= 2.
    """
    import torch

    if third_party is None:
        raise ValueError("cross_check needs the third-party leg")
    if level not in tol.LEVELS:
        raise ValueError(f"unknown level {level!r}; choose one of {', '.join(tol.LEVELS)}")
    dtype = dtype or _name(dut)
    if dtype not in tol.SMALL_VALUE:
        raise ValueError(f"cross_check supports {', '.join(tol.SMALL_VALUE)} only (TTK), not {dtype}")
    (t, g, b), notes = chunks.flat_legs(dut, golden, third_party)
    sv, limits = tol.SMALL_VALUE[dtype], tol.LEVELS[level]
    v = Verdict("cross_check", dtype, True, notes=notes, level=level)
    n = t.numel()
    if n == 0:
        v.notes.append("no elements to compare")
        return v
    work = chunks.work_dtype(torch, t, g, b)
    s, max_rel_dut, max_rel_tp = _cross_pass(torch, t, g, b, sv, work, masked=False)
    if s is None:  # a NaN/inf in some leg (or an overflowing difference): TTK's three-way masks
        s, max_rel_dut, max_rel_tp = _cross_pass(torch, t, g, b, sv, work, masked=True)
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
    return _finish(v)


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


# ---- the entry point ----------------------------------------------------------------------------

def judge(criterion: str, dut, golden, third_party=None, dtype: str | None = None,
          level: str | None = None) -> Verdict:
    """Apply ``criterion`` as TTK would to an output of ``dtype`` (default: the DUT's).

    TTK's routing comes first (integers and bool -> binary_equal, float8_e8m0/float4 -> bit
    comparison; ``mixed``/``isclose``/``binary`` are aliases); the verdict says when it switched.
    ValueError for input TTK refuses or that cannot be compared (different sizes).
    """
    dtype = dtype or _name(dut)
    chosen = routing.route(criterion, dtype)
    if chosen.applied == "binary_equal":
        v = binary_equal(dut, golden)
    elif chosen.applied == "quant":
        v = quant(dut, golden)
    elif chosen.applied == "cross_check":
        v = cross_check(dut, golden, third_party, dtype, level or tol.DEFAULT_LEVEL)
    else:
        v = {"close": close, "mix_tolerance": mix_tolerance, "stat_rel_err": stat_rel_err}[chosen.applied](
            dut, golden, dtype)
    if chosen.reason:
        v.requested = routing.criterion_name(criterion)
        v.notes.insert(0, chosen.reason)
    return v
