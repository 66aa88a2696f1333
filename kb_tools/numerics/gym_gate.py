"""gym_gate: the precision check of the PyPTO-Pro KB's samples as one criterion — the mixed
tolerance and, on top of it, the mean-relative-error gates of the benchmark's first stage.

Where the two halves are defined (hicann/pypto-gym; no one file there applies both):

- the mixed tolerance: ``.agents/skills/pypto-pro-op-develop/scripts/precision_compare.py`` at
  b35e864f3b7330a5b2aba61aeac52127b769cd67 ("方案A"): |a - g| <= atol + rtol·|g| on at least
  99 % of elements and max |a - g| <= max(1e-k, 32 ULP), TTK's rows for float16, bfloat16 and
  float32 (float64 reads float32's), computed in float64. NaN positions must agree, opposite
  infinities fail, NaN pairs and same-sign infinities match, and an infinity on one side only
  is saturated to the DUT dtype's largest finite value and compared as a number;
- the mean gates: ``cannbot-skills/ops/pypto-pro-op-kb/constraints/precision.md`` at
  9401602ad89d9228fba52d9394230110abc71200, "What the benchmark gate actually measures",
  stage 1 of ``utils/compare.py``: MERE < threshold and MARE < 10·threshold, the relative error
  being |a - g| / (|g| + 1e-7) and the thresholds TTK's stat_rel_err ones. There MARE is the
  *maximum* relative error; the gate has no mean-absolute-error term.

The benchmark's stage 2 (three regions judged against a same-precision reference) is not part
of this criterion; TTK's nearest is cross_check.
"""

from __future__ import annotations

import math

from kb_tools.numerics import chunks
from kb_tools.numerics import tolerances as tol
from kb_tools.numerics.verdict import Verdict, dtype_name, empty, finish

NAME = "gym_gate"
# per chunk: matched (NaN pairs and same-sign infinities included), NaN-position mismatches,
# opposite infinities, compared pairs, sum of relative errors; maxima: |a - g|, relative error
_SUMS, _MAXES = 5, 2


def _chunk(torch, a, g, row, big):
    """One chunk's sums and maxima, in float64 as precision_compare.py computes."""
    a, g = a.to(torch.float64), g.to(torch.float64)
    a_nan, g_nan, a_inf, g_inf = torch.isnan(a), torch.isnan(g), torch.isinf(a), torch.isinf(g)
    opposite = a_inf & g_inf & (a != g)
    special = (a_nan & g_nan) | (a_inf & g_inf & (a == g))
    compared = ~(a_nan | g_nan | (a_inf & g_inf))
    a = torch.where(a_inf & ~g_inf, torch.copysign(torch.tensor(big, dtype=torch.float64), a), a)
    g = torch.where(g_inf & ~a_inf, torch.copysign(torch.tensor(big, dtype=torch.float64), g), g)
    err = (a - g).abs().masked_fill_(~compared, 0)
    within = compared & (err <= g.abs().mul(row.rtol).add_(row.atol))
    rel = err / g.abs().add_(tol.REL_EPS).masked_fill_(~compared, 1)
    sums = torch.stack([(within | special).sum().double(), (a_nan != g_nan).sum().double(), opposite.sum().double(),
                        compared.sum().double(), rel.sum()])
    return sums, torch.stack([err.amax(), rel.amax()])


def gym_gate(dut, golden, dtype: str | None = None) -> Verdict:
    """The samples' check for an output of ``dtype`` (default: the DUT's): mixed tolerance and
    MERE < threshold and MARE < 10·threshold; every failed gate is one reason line.

    ValueError for a dtype the samples' check has no row for (float8 among them).
    """
    import torch

    (a, g), notes = chunks.flat_legs(dut, golden)
    dtype = dtype or dtype_name(dut)
    if dtype not in tol.GYM_GATE_DTYPES:
        raise ValueError(f"{NAME} has rows for {', '.join(tol.GYM_GATE_DTYPES)} only "
                         f"(precision_compare.py's table), not {dtype}")
    if a.numel() == 0:
        return empty(NAME, dtype, notes)
    row, th = tol.mix_row(dtype), tol.stat_threshold(dtype)
    big = float(torch.finfo(a.dtype if a.dtype.is_floating_point else torch.float64).max)  # saturation value
    totals = chunks.Totals(_SUMS, _MAXES)
    for lo, hi in chunks.spans(a.numel(), chunks.step(a)):
        totals.add(*_chunk(torch, a[lo:hi], g[lo:hi], row, big))
    matched, nan_mismatch, opposite, compared = (int(x) for x in totals.sums[:4])
    return _verdict(dtype, notes, a.numel(), row, th, matched, nan_mismatch, opposite, compared, totals.sums[4],
                    *totals.maxes)


def _verdict(dtype, notes, n, row, th, matched, nan_mismatch, opposite, compared, rel_sum, max_err, mare):
    v = Verdict(NAME, dtype, True, notes=notes, metrics={
        "rtol": row.rtol, "atol": row.atol, "matched_ratio": None, "required_matched_ratio": row.required_matched_ratio,
        "max_abs_error": None, "max_abs_error_limit": row.max_abs_error_limit, "threshold": th, "mere": None,
        "mare": None})
    if nan_mismatch:
        v.reasons.append(f"NaN positions differ at {nan_mismatch} of {n} elements (the samples' check fails "
                         f"before any error arithmetic)")
        return finish(v)
    if opposite:
        v.reasons.append(f"opposite infinities at {opposite} of {n} elements")
        return finish(v)
    ratio = matched / n
    v.metrics["matched_ratio"] = ratio
    if compared == 0:
        v.notes.append("every element is a NaN pair or a same-sign infinity: matched, MERE and MARE undefined")
        return finish(v)
    mere = rel_sum / compared
    v.metrics.update(max_abs_error=max_err, mere=mere, mare=mare)
    if ratio < row.required_matched_ratio:
        v.reasons.append(f"matched ratio {ratio:.6f} < {row.required_matched_ratio}: {n - matched} of {n} elements "
                         f"outside atol + rtol*|g| (rtol {row.rtol:.3g}, atol {row.atol:.3g})")
    if max_err > row.max_abs_error_limit:
        v.reasons.append(f"max abs error {max_err:.6g} > the {dtype} cap {row.max_abs_error_limit:g} "
                         f"({max_err / row.max_abs_error_limit:.2f}x)")
    if mere >= th:
        v.reasons.append(f"MERE {mere:.6g} >= threshold {th:.6g} ({mere / th:.2f}x): the mean gate")
    if mare >= tol.STAT_MARE_FACTOR * th:
        v.reasons.append(f"MARE {mare:.6g} >= {tol.STAT_MARE_FACTOR}*threshold {tol.STAT_MARE_FACTOR * th:.6g} "
                         f"({mare / (tol.STAT_MARE_FACTOR * th):.2f}x): the max relative-error gate")
    if not v.reasons:
        v.notes.append(f"matched ratio {ratio:.6f}, max abs error {max_err:.6g} (cap {row.max_abs_error_limit:g}), "
                       f"MERE {mere:.6g} and MARE {mare:.6g} (threshold {th:.6g})")
    return finish(v)
