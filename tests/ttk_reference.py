"""An independent restatement of TTK's comparison rules in plain numpy, for the property tests.

Written from hicann/ops-test-kit (ttk/core_modules/comparison/*.py, resolve.py at 3675093,
docs/Precision_Comparison.md), whole-array and unchunked, with its own copy of the tables: it
shares no code with kb_tools.numerics, so a slip in the engine cannot hide in both.

Every leg is a numpy array plus the name of the dtype it stands for. numpy has no bfloat16 or
float8, so those legs arrive as float32 arrays holding exactly representable values; only the
arithmetic of TTK's working precision matters, and that is float32 for them (or numpy's float16,
or float64 for a float8 golden inside isclose).
"""

from __future__ import annotations

import numpy as np

MIX = {  # dtype: (rtol, atol, cap)
    "float16": (2**-9, 2**-9, 0.1), "bfloat16": (2**-6, 2**-6, 1.0), "float32": (2**-10, 2**-16, 0.01),
    "float8_e4m3fn": (2**-2, 2**-4, 4.0), "float8_e5m2": (2**-1, 2**-3, 8.0),
}
STAT = {"float16": 2**-10, "bfloat16": 2**-7, "float32": 2**-13, "float8_e4m3fn": 2**-3, "float8_e5m2": 2**-2}
SMALL = {"float16": (2**-11, 2**-16), "bfloat16": (2**-8, 2**-16), "float32": (2**-14, 2**-30)}
LEVEL = {"L0": (10.0, 2.0, 2.0), "L1": (5.0, 1.5, 1.5), "L2": (2.0, 1.2, 1.2)}
FLOAT8 = ("float8_e4m3fn", "float8_e5m2")


def _empty_passes(rule):
    """TTK's compare() entry: two empty legs pass before any rule runs."""
    def checked(first, *rest, **kw):
        return True if first.size == 0 else rule(first, *rest, **kw)
    return checked


def _working(*names) -> type:
    """numpy.promote_types(float32, every leg); bf16 and float8 (not numpy dtypes) promote to float32."""
    known = [np.dtype(n) for n in names if n not in ("bfloat16",) + FLOAT8]
    return np.result_type(np.float32, *known).type


def _specials_agree(a, g):
    return (np.isnan(a) & np.isnan(g)) | (np.isinf(a) & np.isinf(g) & (np.sign(a) == np.sign(g)))


@_empty_passes
def mix_tolerance(a, g, names) -> bool:
    rtol, atol, cap = MIX.get(names[0], MIX["float32"])
    t = _working(*names)
    a, g = a.astype(t), g.astype(t)
    with np.errstate(all="ignore"):
        diff = np.abs(a - g)
        agree = _specials_agree(a, g)
        finite = np.isfinite(a) & np.isfinite(g)
        bad_special = (~np.isfinite(a) | ~np.isfinite(g)) & ~agree
        good = agree | (finite & (diff <= atol + rtol * np.abs(g)))
        share = float(good.sum()) / a.size
        if bad_special.any():
            worst = np.inf
        else:
            worst = float(diff[finite].max()) if finite.any() else 0.0
    return share >= 0.99 and worst <= cap


@_empty_passes
def stat_rel_err(a, g, names) -> bool:
    th = STAT.get(names[0], 2**-13)
    t = _working(*names)
    a, g = a.astype(t), g.astype(t)
    with np.errstate(all="ignore"):
        rel = np.abs(a - g) / (np.abs(g) + 1e-7)
        finite = np.isfinite(a) & np.isfinite(g)
        if ((~np.isfinite(a) | ~np.isfinite(g)) & ~_specials_agree(a, g)).any():
            return False
        if not finite.any():
            return True
        return float(np.mean(rel[finite])) < th and float(np.max(rel[finite])) < 10 * th


@_empty_passes
def close(x, y, names) -> bool:
    """np.isclose as TTK calls it: bf16 legs as float32, a float8 golden widened to float64 by numpy's
    result_type(y, 1.0), fp16 arithmetic in fp16; then fail when 1 - precision > ptol."""
    loose = names[0] in ("float16", "bfloat16")
    rtol = ptol = 1e-3 if loose else 1e-4
    if names[1] in FLOAT8:
        y = y.astype(np.float64)
    precision = (y.size - int((~np.isclose(x, y, rtol=rtol, atol=1e-8, equal_nan=True)).sum())) / y.size
    return not (1 - precision) > ptol


@_empty_passes
def binary_equal(a, g) -> bool:
    if a.dtype != g.dtype:
        both_int = a.dtype.kind in "biu" and g.dtype.kind in "biu"
        common = np.promote_types(a.dtype, g.dtype)
        if not (both_int and np.issubdtype(common, np.integer)):
            return False
        a, g = a.astype(common), g.astype(common)
    same_bits = a.view(np.uint8).reshape(a.size, -1) == g.view(np.uint8).reshape(g.size, -1)
    differs = ~same_bits.all(axis=1)
    if a.dtype.kind == "f":
        differs &= ~(np.isnan(a) & np.isnan(g))
    return not differs.any()


def _ratio(num, den, floor) -> float:
    """DUT error over third-party error as TTK's cross_check divides them: NaN on either side is the
    worst ratio; two exact legs, or two overflowed ones, agree (1); otherwise the third party's error
    is raised to ``floor`` first, which also makes an overflowed DUT over a finite one inf."""
    pair = np.array([num, den])  # in the working precision the errors were measured in
    if np.isnan(pair).any():
        return np.inf
    if not pair.any() or np.isinf(pair).all():
        return 1.0
    return float(pair[0] / np.maximum(pair[1], floor))


@_empty_passes
def cross_check(t, g, b, names, level="L1") -> bool:
    small_value, small_atol = SMALL[names[0]]
    mare_limit, mere_limit, rmse_limit = LEVEL[level]
    w = _working(*names)
    t, g, b = t.astype(w), g.astype(w), b.astype(w)
    with np.errstate(all="ignore"):
        special = ~(np.isfinite(t) & np.isfinite(g) & np.isfinite(b))
        same_tb = (np.isnan(t) & np.isnan(b)) | (t == b)
        same_tg = (np.isnan(t) & np.isnan(g)) | (t == g)
        special_ok = not (special & ~(same_tb | (~np.isfinite(g) & same_tg))).any()
        large = ~special & (np.abs(g) >= small_value)
        small = ~special & (np.abs(g) < small_value)
        large_ok = True
        if large.any():
            rt = np.abs(t[large] - g[large]) / (np.abs(g[large]) + 1e-7)
            rb = np.abs(b[large] - g[large]) / (np.abs(g[large]) + 1e-7)
            if not np.all(~np.isfinite(rb)):
                rmse_t = np.sqrt(np.mean((t[large] - g[large]) ** 2))
                rmse_b = np.sqrt(np.mean((b[large] - g[large]) ** 2))
                if np.isinf(rmse_t) or np.isinf(rmse_b):  # squares overflowed float32: TTK redoes both in float64
                    rmse_t = np.sqrt(np.mean((t[large] - g[large]).astype(np.float64) ** 2))
                    rmse_b = np.sqrt(np.mean((b[large] - g[large]).astype(np.float64) ** 2))
                large_ok = (_ratio(rt.max(), rb.max(), small_value) <= mare_limit
                            and _ratio(rt.mean(), rb.mean(), small_value) <= mere_limit
                            and _ratio(rmse_t, rmse_b, small_value) <= rmse_limit)
        small_ok = True
        if small.any():
            errs_t = int((small & (np.abs(t - g) > small_atol)).sum())
            errs_b = int((small & (np.abs(b - g) > small_atol)).sum())
            small_ok = errs_t / max(errs_b, 1) <= 2.0
    return special_ok and large_ok and small_ok
