"""Every error metric of one output against its golden, in one pass over the data.

The pass runs on the tensors' own device in chunks: each chunk contributes partial sums, maxima
and counts, which are kept on the device and brought to the host once at the end, so memory stays
bounded by the chunk and there is no host round trip per metric. A min/max sweep before it (one
sync) tells whether the NaN/inf masks are needed at all. Special values follow TTK
(Precision_Comparison.md "特殊处理"): NaN against NaN and same-sign infinities match; any other
non-finite disagreement is a mismatch. A quantity whose denominator is zero is ``None``
(undefined), never 0 and never a division by zero.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from kb_tools.numerics import tolerances as tol

CHUNK = 1 << 16  # elements per chunk: temporaries stay in cache and bounded (measured: benchmarks/bench_compare.py)

# Partial results, in the order each chunk produces them.
_SUMS = ("finite", "special_match", "special_mismatch", "sum_abs", "sum_sq", "sum_rel", "dot", "dut_sq",
         "golden_sq", "within_1e-3", "within_5e-3", "mix_ok", "close_ok", "cap_violations",
         "large", "large_sum_rel", "large_sum_sq", "small", "small_errors")
_MAXES = ("max_abs", "max_rel", "max_ulp", "large_max_rel")


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
    # What the criteria need, already counted in the same pass.
    mix_ok: int
    close_ok: int
    cap_violations: int  # elements over mix_tolerance's hard cap and over its ULP allowance
    large: int  # |golden| >= small value
    large_mere: float | None
    large_mare: float | None
    large_rmse: float | None
    small: int
    small_errors: int  # small-region elements with |a-g| > small_value_atol

    def as_dict(self) -> dict:
        return asdict(self)


def _work_dtype(torch, *tensors):
    """float32 for 16-bit inputs, float64 as soon as one side is 32 or 64 bits wide."""
    wide = any(t.dtype in (torch.float32, torch.float64, torch.int32, torch.int64) for t in tensors)
    return torch.float64 if wide else torch.float32


_INT_VIEW = {2: "int16", 4: "int32", 8: "int64"}


def _ordered_bits(torch, x):
    """An integer key whose differences count representable values (ULPs) between floats.

    Sign-magnitude bits become two's complement: a negative float's key is INT_MIN - bits, which
    stays inside the view's own width (so ±0 share key 0).
    """
    view = getattr(torch, _INT_VIEW[x.element_size()])
    bits = x.view(view)
    return torch.where(bits < 0, torch.iinfo(view).min - bits, bits)


def _chunk(torch, a, g, ulp_dtype, key, work, all_finite):
    """Partial sums and maxima of one chunk, as two float64 vectors on the chunk's device.

    With ``all_finite`` (known for the whole tensor up front) the masks are skipped.
    """
    af, gf = a.to(work), g.to(work)
    zero = torch.zeros((), dtype=work, device=af.device)
    if all_finite:
        fin = None
        special_match = special_mismatch = torch.zeros((), dtype=torch.int64, device=af.device)
        keep = lambda x: x  # noqa: E731
        d = (af - gf).abs_()
        ag = gf.abs()
        a0, g0 = af, gf
    else:
        fin = torch.isfinite(af) & torch.isfinite(gf)
        both_nan = torch.isnan(af) & torch.isnan(gf)
        special_match = ~fin & (both_nan | (af == gf))
        special_mismatch = ~fin & ~special_match
        keep = lambda x: fin & x  # noqa: E731
        d = torch.where(fin, af - gf, zero).abs_()
        ag = torch.where(fin, gf, zero).abs_()
        a0, g0 = torch.where(fin, af, zero), torch.where(fin, gf, zero)
    rel = d / (ag + tol.REL_EPS)
    mix = tol.MIX_TOLERANCE[key]
    if ulp_dtype is not None:
        wide = torch.float64
        ulp = (_ordered_bits(torch, a.to(ulp_dtype)).to(wide) - _ordered_bits(torch, g.to(ulp_dtype)).to(wide)).abs_()
        if fin is not None:
            ulp = torch.where(fin, ulp, torch.zeros((), dtype=wide, device=af.device))
        capped = (d > mix.max_abs_limit) & (ulp > tol.MIX_MAX_ULP)
        max_ulp = ulp.amax()
    else:
        capped = keep(d > mix.max_abs_limit)
        max_ulp = torch.zeros((), dtype=torch.float64, device=af.device)
    small = keep(ag < tol.SMALL_VALUE[key])
    large_rel = torch.where(small, zero, rel)
    large_sq_sum = torch.where(small, zero, d).square_().sum(dtype=torch.float64)
    n_small = small.sum()
    n_fin = fin.sum() if fin is not None else torch.tensor(a.numel(), device=af.device)
    sums = [n_fin, special_match.sum(), special_mismatch.sum(), d.sum(dtype=torch.float64),
            torch.dot(d, d), rel.sum(dtype=torch.float64), torch.dot(a0, g0), torch.dot(a0, a0), torch.dot(g0, g0),
            keep(rel <= tol.SHARE_BOUNDS[0]).sum(), keep(rel <= tol.SHARE_BOUNDS[1]).sum(),
            keep(d <= mix.atol + mix.rtol * ag).sum(),
            keep(d <= tol.CLOSE_ATOL + tol.CLOSE_RTOL[key] * ag).sum(),
            capped.sum(), n_fin - n_small, large_rel.sum(dtype=torch.float64), large_sq_sum,
            n_small, (small & (d > tol.SMALL_VALUE_ATOL[key])).sum()]
    maxes = [d.amax(), rel.amax(), max_ulp, large_rel.amax()]
    return torch.stack(sums).to(torch.float64), torch.stack(maxes).to(torch.float64)


def _all_finite(torch, a, g, n) -> bool:
    """Whether both tensors are finite everywhere, with one host sync.

    Chunked min/max reductions: NaN propagates through them and ±inf shows as an extreme, so
    both extremes being finite means every element is; torch.isfinite over a whole tensor
    would allocate several copies of it.
    """
    if n == 0 or not (a.dtype.is_floating_point or g.dtype.is_floating_point):
        return True
    extremes = [torch.stack([*torch.aminmax(t[i:i + CHUNK])]).to(torch.float64)
                for t in (a, g) if t.dtype.is_floating_point for i in range(0, n, CHUNK)]
    return bool(torch.isfinite(torch.cat(extremes)).all())


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def compute(actual, golden, dtype: str | None = None) -> Metrics:
    """Metrics of ``actual`` (the DUT or the third-party leg) against ``golden``.

    ``dtype`` is the operator's declared dtype, which picks the thresholds' row; it defaults to
    ``actual``'s. The golden may be wider (Promote); it moves to ``actual``'s device if needed.
    Shapes must match exactly (ValueError otherwise).
    """
    import torch

    if tuple(actual.shape) != tuple(golden.shape):
        raise ValueError(f"shape {tuple(actual.shape)} does not match the golden's {tuple(golden.shape)}")
    dtype = dtype or str(actual.dtype).removeprefix("torch.")
    key = tol.table_key(dtype)
    golden = golden.to(actual.device)
    a, g = actual.reshape(-1), golden.reshape(-1)
    work = _work_dtype(torch, a, g)
    ulp_dtype = a.dtype if a.dtype.is_floating_point and a.element_size() in _INT_VIEW else None
    n = a.numel()
    all_finite = _all_finite(torch, a, g, n)
    parts = [_chunk(torch, a[i:i + CHUNK], g[i:i + CHUNK], ulp_dtype, key, work, all_finite)
             for i in range(0, n, CHUNK)]
    if parts:
        sums = torch.stack([p[0] for p in parts]).sum(0).tolist()
        maxes = torch.stack([p[1] for p in parts]).amax(0).tolist()
    else:
        sums, maxes = [0.0] * len(_SUMS), [None] * len(_MAXES)
    s = dict(zip(_SUMS, sums))
    m = dict(zip(_MAXES, maxes))
    fin = int(s["finite"])
    large = int(s["large"])
    norm = math.sqrt(s["dut_sq"]) * math.sqrt(s["golden_sq"])
    return Metrics(
        dtype=dtype, n=n, finite=fin, special_match=int(s["special_match"]),
        special_mismatch=int(s["special_mismatch"]),
        max_abs=m["max_abs"] if fin else None,
        max_rel=m["max_rel"] if fin else None,
        mere=_ratio(s["sum_rel"], fin),
        rmse=math.sqrt(s["sum_sq"] / fin) if fin else None,
        cosine=_ratio(s["dot"], norm),
        max_ulp=m["max_ulp"] if fin and ulp_dtype is not None else None,
        share_rel_1e3=_ratio(s["within_1e-3"], fin),
        share_rel_5e3=_ratio(s["within_5e-3"], fin),
        mix_ok=int(s["mix_ok"]), close_ok=int(s["close_ok"]), cap_violations=int(s["cap_violations"]),
        large=large,
        large_mere=_ratio(s["large_sum_rel"], large),
        large_mare=m["large_max_rel"] if large else None,
        large_rmse=math.sqrt(s["large_sum_sq"] / large) if large else None,
        small=int(s["small"]), small_errors=int(s["small_errors"]),
    )
