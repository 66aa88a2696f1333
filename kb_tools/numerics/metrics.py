"""What an output looks like against its golden — every error metric in one chunked pass.

These numbers describe; the verdicts live in :mod:`kb_tools.numerics.criteria`, which computes
what each of TTK's decisions needs in TTK's own precision. The difference |a-g| and the relative
error are TTK's own, in its working precision (so MERE and MARE here are stat_rel_err's, the
largest difference is mix_tolerance's, and the criterion's pass computes them once for both); the
cosine's products and every sum run in float64: on the CPU in the compiled pass (``onepass``,
which a criterion's own pass can carry them in), elsewhere on the tensors' device, brought to the
host chunk by chunk (``chunks.Totals``). Special values follow TTK: NaN against NaN and
same-sign infinities match; any other non-finite disagreement is a mismatch. A quantity whose
denominator is zero is ``None`` (undefined), never 0 and never a division by zero.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from kb_tools.numerics import chunks, onepass
from kb_tools.numerics import tolerances as tol
from kb_tools.numerics.verdict import dtype_name

_SUMS = ("finite", "special_match", "special_mismatch", "sum_sq", "sum_rel", "dot", "dut_sq",
         "golden_sq", "within_1e-3", "within_5e-3")
_MAXES = ("max_abs", "max_rel", "max_ulp")


@dataclass(frozen=True)
class Metrics:
    """What an output looks like against its golden; ``None`` marks an undefined value."""

    dtype: str
    n: int
    finite: int  # elements where both are finite
    special_match: int  # NaN/NaN or same-sign inf/inf
    special_mismatch: int  # NaN or inf on one side only, or opposite infinities
    max_abs: float | None
    max_rel: float | None  # TTK's MARE: max |a-g|/(|g|+ε)
    mere: float | None  # TTK's MERE: mean |a-g|/(|g|+ε)
    rmse: float | None
    cosine: float | None
    max_ulp: float | None  # in units of the compared output's dtype
    share_rel_1e3: float | None
    share_rel_5e3: float | None

    def as_dict(self) -> dict:
        return asdict(self)


_INT_VIEW = {2: "int16", 4: "int32", 8: "int64"}


def _ordered_bits(torch, x):
    """An integer key whose differences count representable values (ULPs) between floats.

    Sign-magnitude bits become two's complement: a negative float's key is INT_MIN - bits, which
    stays inside the view's own width (so ±0 share key 0).
    """
    view = getattr(torch, _INT_VIEW[x.element_size()])
    bits = x.view(view)
    return torch.where(bits < 0, torch.iinfo(view).min - bits, bits)


def _chunk(torch, a, g, ulp_dtype, all_finite, work):
    """Partial sums and maxima of one chunk, as two float64 vectors on the chunk's device; |a-g|
    and the relative error in ``work`` (TTK's working precision), the rest in float64."""
    wide = torch.float64
    af, gf = a.to(wide), g.to(wide)
    zero = torch.zeros((), dtype=wide, device=af.device)
    aw, gw = a.to(work), g.to(work)
    dw = (aw - gw).abs_()
    rel = (dw / gw.abs().add_(tol.REL_EPS)).to(wide)
    if all_finite:
        fin = None
        special_match = special_mismatch = torch.zeros((), dtype=torch.int64, device=af.device)
        d = dw.to(wide)
        a0, g0 = af, gf
    else:
        fin = torch.isfinite(af) & torch.isfinite(gf)
        special_match = ~fin & ((torch.isnan(af) & torch.isnan(gf)) | (af == gf))
        special_mismatch = ~fin & ~special_match
        d = torch.where(fin, dw.to(wide), zero)
        a0, g0 = torch.where(fin, af, zero), torch.where(fin, gf, zero)
        rel = torch.where(fin, rel, zero)
    keep = (lambda x: x) if fin is None else (lambda x: fin & x)  # noqa: E731
    if ulp_dtype is not None:
        ulp = (_ordered_bits(torch, a.to(ulp_dtype)).to(wide) - _ordered_bits(torch, g.to(ulp_dtype)).to(wide)).abs_()
        max_ulp = (ulp if fin is None else torch.where(fin, ulp, zero)).amax()
    else:
        max_ulp = zero
    n_fin = fin.sum() if fin is not None else torch.tensor(a.numel(), device=af.device)
    sums = [n_fin, special_match.sum(), special_mismatch.sum(), torch.dot(d, d), rel.sum(),
            torch.dot(a0, g0), torch.dot(a0, a0), torch.dot(g0, g0),
            keep(rel <= tol.SHARE_BOUNDS[0]).sum(), keep(rel <= tol.SHARE_BOUNDS[1]).sum()]
    return torch.stack(sums).to(wide), torch.stack([d.amax(), rel.amax(), max_ulp]).to(wide)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def compute(actual, golden, dtype: str | None = None) -> Metrics:
    """Metrics of ``actual`` (the DUT or the third-party leg) against ``golden``.

    ``dtype`` names the output (default: ``actual``'s). The golden may be wider (Promote) and
    shaped differently if the sizes agree (compared flattened, as TTK does); ValueError otherwise.
    """
    import torch

    (a, g), _ = chunks.flat_legs(actual, golden)
    dtype = dtype or dtype_name(actual)
    n = a.numel()
    work = chunks.work_dtype(torch, a, g)
    if n and onepass.supports(a, g):
        return from_sums(dtype, n, onepass.pair(a, g, work == torch.float64, 0.0, 0.0, metrics=True, stats=())[1])
    ulp_dtype = a.dtype if a.dtype.is_floating_point and a.element_size() in _INT_VIEW else None
    finite = chunks.all_finite(torch, a, g)
    totals = chunks.Totals(len(_SUMS), len(_MAXES))
    for lo, hi in chunks.spans(n, chunks.step(a)):
        totals.add(*_chunk(torch, a[lo:hi], g[lo:hi], ulp_dtype, finite, work))
    sums = dict(zip(_SUMS, totals.sums)) | dict(zip(_MAXES, totals.maxes))  # maxes are read only when fin > 0
    return from_sums(dtype, n, sums | {"ulp": ulp_dtype is not None})


def from_sums(dtype: str, n: int, s: dict) -> Metrics:
    """Metrics from one pass's totals: the counts and sums of ``_SUMS``, the maxima of ``_MAXES``,
    and ``ulp``, whether the output's dtype has a ULP metric."""
    fin = int(s["finite"])
    norm = math.sqrt(s["dut_sq"]) * math.sqrt(s["golden_sq"])
    return Metrics(
        dtype=dtype, n=n, finite=fin, special_match=int(s["special_match"]),
        special_mismatch=int(s["special_mismatch"]),
        max_abs=s["max_abs"] if fin else None,
        max_rel=s["max_rel"] if fin else None,
        mere=_ratio(s["sum_rel"], fin),
        rmse=math.sqrt(s["sum_sq"] / fin) if fin else None,
        cosine=_ratio(s["dot"], norm),
        max_ulp=s["max_ulp"] if fin and s["ulp"] else None,
        share_rel_1e3=_ratio(s["within_1e-3"], fin),
        share_rel_5e3=_ratio(s["within_5e-3"], fin),
    )
