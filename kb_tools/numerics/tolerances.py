"""TTK's thresholds, one table per criterion, keyed by the output's dtype name.

Every number is TTK's (hicann/ops-test-kit, ``ttk/core_modules/comparison/resolve.py`` at commit
3675093 — MIX_TOLERANCE, THRESHOLDS, LEVEL_PRESETS, SMALL_VALUE — ``is_close.py`` for close,
``stat_rel_err.py`` and ``cross_check.py`` for their constants, and ``docs/Precision_Comparison.md``).
A dtype missing from a table reads TTK's fallback row, as TTK does.
"""

from __future__ import annotations

from dataclasses import dataclass

# The names a verdict can carry (what was applied); aliases live in routing.py.
CRITERIA = ("binary_equal", "close", "mix_tolerance", "stat_rel_err", "cross_check", "quant", "gym_gate")

# Relative error |a - g| / (|g| + REL_EPS): stat_rel_err's FLOOR and cross_check's ε.
REL_EPS = 1e-7
# The metrics' "double thousandths": shares of elements within 1/1000 and 5/1000 relative error.
SHARE_BOUNDS = (1e-3, 5e-3)


@dataclass(frozen=True)
class MixTolerance:
    rtol: float
    atol: float
    max_abs_error_limit: float  # TTK: "1e-k or 32*ULP", stored as max(1e-k, 32 * eps at 1.0)
    required_matched_ratio: float = 0.99


MIX_TOLERANCE = {
    "float16": MixTolerance(2**-9, 2**-9, max(1e-1, 32 * 2**-10)),
    "bfloat16": MixTolerance(2**-6, 2**-6, max(1e-0, 32 * 2**-7)),
    "float32": MixTolerance(2**-10, 2**-16, max(1e-2, 32 * 2**-23)),
    "hifloat32": MixTolerance(2**-9, 2**-10, max(1e-1, 32 * 2**-10)),
    "float8_e4m3fn": MixTolerance(2**-2, 2**-4, max(1e-0, 32 * 2**-3)),
    "float8_e5m2": MixTolerance(2**-1, 2**-3, max(1e-1, 32 * 2**-2)),
}
MIX_FALLBACK = "float32"  # float64 and any other float read the float32 row

# stat_rel_err: MERE < threshold and MARE < 10 * threshold.
STAT_REL_ERR = {"float16": 2**-10, "bfloat16": 2**-7, "float32": 2**-13,
                "float8_e4m3fn": 2**-3, "float8_e5m2": 2**-2}
STAT_FALLBACK = 2**-13
STAT_MARE_FACTOR = 10

# close (is_close.py): rtol and ptol 1e-3 for these, 1e-4 for every other dtype; atol 1e-8.
CLOSE_LOOSE_DTYPES = ("float16", "bfloat16", "complex32")
CLOSE_ATOL = 1e-8


def close_rtol(dtype: str) -> float:
    """TTK's close rtol, which is also its ptol (allowed share of mismatches)."""
    return 1e-3 if dtype in CLOSE_LOOSE_DTYPES else 1e-4


@dataclass(frozen=True)
class Level:
    mare: float  # max relative error ratio
    mere: float  # mean relative error ratio
    rmse: float


LEVELS = {"L0": Level(10.0, 2.0, 2.0), "L1": Level(5.0, 1.5, 1.5), "L2": Level(2.0, 1.2, 1.2)}
DEFAULT_LEVEL = "L1"


@dataclass(frozen=True)
class SmallValue:
    small_value: float  # |golden| below it is the small-value region; also safe_div's floor
    small_value_atol: float  # an error there is |a - g| above this


# cross_check supports exactly these dtypes (resolve.py raises for any other).
SMALL_VALUE = {"float16": SmallValue(2**-11, 2**-16), "bfloat16": SmallValue(2**-8, 2**-16),
               "float32": SmallValue(2**-14, 2**-30)}
SMALL_COUNT_RATIO = 2.0  # DUT error count / max(third-party error count, 1) must not exceed it

# quant: |a - g| <= 1 on int4/int8 outputs declared quantised; ptol 0 by default.
QUANT_DTYPES = ("int8", "int4")
QUANT_ABS_LIMIT = 1


# gym_gate (numerics/gym_gate.py), not TTK's: the PyPTO-Pro samples' check reads MIX_TOLERANCE's
# and STAT_REL_ERR's rows, and its mixed-tolerance table (hicann/pypto-gym precision_compare.py
# at b35e864) has these dtypes only.
GYM_GATE_DTYPES = ("float16", "bfloat16", "float32", "float64")


def mix_row(dtype: str) -> MixTolerance:
    return MIX_TOLERANCE.get(dtype, MIX_TOLERANCE[MIX_FALLBACK])


def stat_threshold(dtype: str) -> float:
    return STAT_REL_ERR.get(dtype, STAT_FALLBACK)
