"""The public TTK thresholds, one table per criterion, keyed by the operator's declared dtype.

Numbers: DESIGN §5 "numerics", confirmed against hicann/ops-test-kit docs/Precision_Comparison.md
(sections "混合容差", "统计相对误差", "数值近似", "三方交叉校验"). Where TTK gives a number that
DESIGN leaves out (mix_tolerance's hard cap, cross_check's small-value atol, the ε of the relative
error, close's allowed mismatch share) the TTK value is used and marked as such.
"""

from __future__ import annotations

from dataclasses import dataclass

CRITERIA = ("binary_equal", "close", "mix_tolerance", "stat_rel_err", "cross_check")

# TTK's relative error is |a - g| / (|g| + 1e-7) (Precision_Comparison.md §2 and §8): the ε keeps a
# zero golden from dividing by zero element-wise. Ratios *between* errors are never ε-guarded.
REL_EPS = 1e-7

# The "double thousandths" shares: elements within 1/1000 and 5/1000 relative error.
SHARE_BOUNDS = (1e-3, 5e-3)


@dataclass(frozen=True)
class MixTolerance:
    rtol: float
    atol: float
    max_abs_limit: float  # TTK: hard cap on |a - g|, unless the element is within MAX_ULP ULPs
    matched_ratio: float = 0.99


# DESIGN §5: rtol/atol fp16 2^-9/2^-9, bf16 2^-6/2^-6, fp32 2^-10/2^-16; matched ratio >= 0.99.
# TTK: max_abs_error_limit 1e-1 fp16, 1e0 bf16, 1e-2 fp32, "or 32 ULP" (either one suffices).
MIX_TOLERANCE = {
    "float16": MixTolerance(2**-9, 2**-9, 1e-1),
    "bfloat16": MixTolerance(2**-6, 2**-6, 1.0),
    "float32": MixTolerance(2**-10, 2**-16, 1e-2),
}
MIX_MAX_ULP = 32

# DESIGN §5: close is isclose with rtol 1e-3 fp16/bf16, 1e-4 fp32. TTK adds atol 1e-8 and a
# permitted mismatch share ptol equal to rtol (Precision_Comparison.md §3).
CLOSE_RTOL = {"float16": 1e-3, "bfloat16": 1e-3, "float32": 1e-4}
CLOSE_ATOL = 1e-8

# DESIGN §5: stat_rel_err passes when MERE < thr and MARE < 10·thr.
STAT_REL_ERR = {"float16": 2**-10, "bfloat16": 2**-7, "float32": 2**-13}
STAT_MARE_FACTOR = 10


@dataclass(frozen=True)
class Level:
    mare: float  # max relative error ratio
    mere: float  # mean relative error ratio
    rmse: float


# DESIGN §5 lists the ratios as (mean abs rel error, max rel error, RMSE) with L0 (10, 2, 2); TTK's
# table pairs the 10 with mare_ratio = max(rel_dut)/max(rel_tp). DESIGN's own stat_rel_err makes
# MARE the max (MARE < 10·thr), so both say the loose limit belongs to the max ratio; we follow that.
LEVELS = {"L0": Level(10.0, 2.0, 2.0), "L1": Level(5.0, 1.5, 1.5), "L2": Level(2.0, 1.2, 1.2)}
DEFAULT_LEVEL = "L1"

# DESIGN §5: |golden| below 2^-11 fp16, 2^-8 bf16, 2^-14 fp32 is the small-value region, judged by
# the ratio of error counts <= 2. What counts as an error there is TTK's small_value_atol.
SMALL_VALUE = {"float16": 2**-11, "bfloat16": 2**-8, "float32": 2**-14}
SMALL_VALUE_ATOL = {"float16": 2**-16, "bfloat16": 2**-16, "float32": 2**-30}
SMALL_COUNT_RATIO = 2.0

# TTK: cross_check supports only these three dtypes.
CROSS_CHECK_DTYPES = ("float16", "bfloat16", "float32")


def table_key(dtype: str) -> str:
    """The row a float dtype reads; TTK falls back to the float32 row for other floats."""
    return dtype if dtype in MIX_TOLERANCE else "float32"
