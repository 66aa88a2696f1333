"""Every statistic of one comparison in one pass over the legs on the CPU, compiled by numba.

Why compiled: the torch passes (``criteria``, ``cross_check``, ``metrics``) build a chunk-sized
temporary per operation — a cast, a difference, a mask, a quotient — and read each leg again
for the metrics, 5–12x one plain read of the inputs. Here each block of elements is loaded from
memory once and, while it sits in L1, feeds every count, sum and maximum of the criterion and of
the metrics (when asked), in one loop: it assumes every element finite and has no masks, so
that LLVM vectorises it tightly; its maximum difference shows whether a NaN, an inf or an
overflow was there, and only such a block is done again by the loop with TTK's masks. |a-g| and
the relative error are computed once, in TTK's working precision, for the criterion and the
metrics. A verdict alone computes only what it reads: mix_tolerance's loop has no division,
stat_rel_err's no tolerance test, and a verdict's sums are added as TTK adds them, in the working
precision (over short runs, the runs in float64; see the passes' notes below). The extra memory
is one row of partial results per 2^16 elements (``benchmarks/bench_compare.py``).

Decoding: float32 and float64 are read as they are, fp16 through the CPU's half conversion (its
int16 bits), bf16 as the top half of a float32 (its uint16 bits), fp8 through a 256-entry table
of float32 values that torch builds. Values narrow floats hold are exact in float32, so the
working-precision value (float32, or float64 when a leg is float64) and the metrics' float64
value come from one load. The arithmetic is TTK's, operation by operation in the working dtype
(no fused multiply-add); the only fast-math licence is reassociation, so float sums may be added
in another order than numpy's (the metrics' float64 sums may also fuse a product into its sum).
Maxima of non-negative floats are kept as their bits, whose integer order is the floats' order
(an integer maximum vectorises; a float one would need licences that also change NaN tests).

Threads: the parts (2^16 elements each) are split among torch's thread count in contiguous runs,
run without the GIL by the calling thread and a pool of Python threads (as ``kb_tools.memory.kernels``
does: numba's own parallel loop spins beside torch's OpenMP pool); each part has its own row and the rows are
added in order, so every figure is the same whatever the number of threads. Legs of other dtypes
(integers, the float8 formats without arithmetic), devices other than the CPU and
non-contiguous legs take the torch passes instead.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numba
import numpy as np
from numba import types
from llvmlite import ir
from numba.extending import intrinsic, overload

from kb_tools.numerics import tolerances as tol

# Smaller passes run on the calling thread alone: waking the second core costs 0.05-0.2 ms here (an
# idle virtual CPU wakes slowly), more than half of a 2^20-element verdict's pair pass saves; a pass
# with the metrics, or cross_check's (three legs, two divisions an element), does about three times
# the work and gains from 2^20.
POOL_MIN_ELEMENTS = {"pair": 1 << 21, "pair with metrics": 1 << 20, "cross": 1 << 20}
BITS_DTYPES = ("float16", "bfloat16", "float8_e4m3fn", "float8_e5m2")  # read through their bits
DIRECT_DTYPES = ("float32", "float64")
ULP_DTYPES = ("float64", "float32", "bfloat16", "float16")  # fp8 has no ULP metric

# Slots of one part's result row.
PAIR_SLOTS = ("matched", "mismatched", "max_err", "sum_rel_w", "max_rel_w", "finite")
METRIC_SLOTS = ("special_match", "sum_sq", "sum_rel", "dot", "dut_sq", "golden_sq", "within_1e-3", "within_5e-3",
                "max_abs", "max_rel", "max_ulp")
CROSS_SLOTS = ("large", "small", "small_err_dut", "small_err_tp", "special_fail", "tp_rel_inf",
               "sum_rel_dut", "sum_rel_tp", "sum_sq_dut", "sum_sq_tp", "max_rel_dut", "max_rel_tp")
MAX_SLOTS = frozenset({"max_err", "max_rel_w", "max_abs", "max_rel", "max_ulp", "max_rel_dut", "max_rel_tp"})
_N_METRIC = len(METRIC_SLOTS)
_DUT_AT = len(CROSS_SLOTS)  # where the DUT's (finite, mismatched) and metrics start in a cross_check row
_THIRD_AT = _DUT_AT + 2 + _N_METRIC  # and the third party's

_pools: dict[int, ThreadPoolExecutor] = {}
os.register_at_fork(after_in_child=_pools.clear)


# ---- element helpers (compiled) -----------------------------------------------------------------

@intrinsic
def _f32_bits(typingctx, x):
    """The int32 bit pattern of a float32."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.int32(types.float32), codegen


@intrinsic
def _f64_bits(typingctx, x):
    """The int64 bit pattern of a float64."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))
    return types.int64(types.float64), codegen


@intrinsic
def _f32_of_bits(typingctx, x):
    """The float32 whose bit pattern is the int32 ``x``."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.int32), codegen


@intrinsic
def _half_to_f32(typingctx, x):
    """float16 bits (int16) widened to float32, exactly (the CPU's F16C conversion where it has one)."""
    def codegen(context, builder, signature, args):
        return builder.fpext(builder.bitcast(args[0], ir.HalfType()), ir.FloatType())
    return types.float32(types.int16), codegen


@intrinsic
def _f32_to_half_bits(typingctx, x):
    """float32 rounded to float16 (IEEE round to nearest even, overflow to inf), as int16 bits."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(builder.fptrunc(args[0], ir.HalfType()), ir.IntType(16))
    return types.int16(types.float32), codegen


def _decode(values, table, i):
    """The float value of element ``i`` of a leg held as: float32/float64 itself, float16 bits
    (int16), bfloat16 bits (uint16, the top half of a float32), or 1-byte float bits (uint8)
    through ``table``."""


@overload(_decode)
def _decode_impl(values, table, i):
    if values.dtype == types.int16:
        return lambda values, table, i: _half_to_f32(values[i])
    if values.dtype == types.uint16:
        return lambda values, table, i: _f32_of_bits(np.int32(values[i]) << 16)
    if values.dtype == types.uint8:
        return lambda values, table, i: table[values[i]]
    return lambda values, table, i: values[i]


def _like(value, like):
    """``value`` cast to the scalar type of ``like`` (the working precision)."""


@overload(_like)
def _like_impl(value, like):
    target = like
    return lambda value, like: target(value)


def _bits(value):
    """A non-negative float's bits as an integer of its width: they order as the floats do
    (+inf is the largest), so a running maximum over them vectorises."""


@overload(_bits)
def _bits_impl(value):
    if value == types.float32:
        return lambda value: _f32_bits(value)
    return lambda value: _f64_bits(value)


def _from_bits(bits):
    """The float (as float64) whose bits :func:`_bits` gave."""


@overload(_from_bits)
def _from_bits_impl(bits):
    if bits == types.int32:
        return lambda bits: np.float64(_f32_of_bits(bits))
    return lambda bits: _f64_of_bits(bits)


@intrinsic
def _f64_of_bits(typingctx, x):
    """The float64 whose bit pattern is the int64 ``x``."""
    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.int64), codegen


@numba.njit
def _key(bits, minimum):
    """Signed bits as an ordered key (sign-magnitude to two's complement: a negative float's key
    is INT_MIN - bits of its width, so ±0 share key 0)."""
    return minimum - bits if bits < 0 else bits


@numba.njit
def _bf16_bits(bits32):
    """float32 bits rounded to bfloat16's (round to nearest even, torch's rule), as int64; finite input."""
    return ((bits32 + 0x7FFF + ((bits32 >> 16) & 1)) >> 16) & 0xFFFF


def _ulp_max(current, dut, i, g0, fin):
    """The running maximum of |key(DUT element i) - key(golden rounded to the DUT's dtype)|, the
    distance in the DUT's ULPs (0 where the pair is not finite; a 1-byte DUT has no ULP metric).
    torch rounds float64 to a 2-byte float through float32. Below float64 the keys' difference is
    an exact integer (kept as one, so the maximum vectorises); for float64 the keys are subtracted
    as float64, as the torch pass does, and the maximum kept as the float's bits."""


@overload(_ulp_max)
def _ulp_max_impl(current, dut, i, g0, fin):
    if dut.dtype == types.float64:
        def f64(current, dut, i, g0, fin):
            distance = abs(np.float64(_key(_f64_bits(dut[i]), _MIN64)) - np.float64(_key(_f64_bits(g0), _MIN64)))
            return max(current, _f64_bits(distance if fin else 0.0))
        return f64
    if dut.dtype == types.float32:
        return lambda current, dut, i, g0, fin: max(current, abs(
            _key(np.int64(_f32_bits(dut[i])), _MIN32) - _key(np.int64(_f32_bits(np.float32(g0))), _MIN32)) if fin else 0)
    if dut.dtype == types.int16:  # float16 bits
        return lambda current, dut, i, g0, fin: max(current, abs(
            _key(np.int64(dut[i]), _MIN16) - _key(np.int64(_f32_to_half_bits(np.float32(g0))), _MIN16)) if fin else 0)
    if dut.dtype == types.uint16:  # bfloat16 bits
        return lambda current, dut, i, g0, fin: max(current, abs(
            _key(np.int64(np.int16(dut[i])), _MIN16)
            - _key(_signed16(_bf16_bits(np.int64(_f32_bits(np.float32(g0))))), _MIN16)) if fin else 0)
    return lambda current, dut, i, g0, fin: current


def _ulp_value(kept, dut):
    """The maximum :func:`_ulp_max` kept, as float64."""


@overload(_ulp_value)
def _ulp_value_impl(kept, dut):
    if dut.dtype == types.float64:
        return lambda kept, dut: _f64_of_bits(kept)
    return lambda kept, dut: np.float64(kept)


_SHARE_1, _SHARE_2 = tol.SHARE_BOUNDS
_MIN64, _MIN32, _MIN16 = np.int64(-(2**63)), np.int64(-(2**31)), np.int64(-(2**15))


@numba.njit
def _signed16(bits):
    return bits - 65536 if bits >= 32768 else bits


@numba.njit
def _agree(a, g):
    """TTK's agreeing pair outside the finite one: NaN with NaN, or an infinity with itself."""
    return ((a != a) & (g != g)) | (a == g)


@numba.njit
def _finite(x, limit):
    return abs(x) <= limit


@numba.njit
def _metric_step(m, a64, g64, fin, dut, i, e, rel):
    """One pair's contribution to the metrics' float64 sums, counts and maxima (as bits); ``e`` and
    ``rel`` are the pair's |a-g| and relative error in the working precision (TTK's, 0 where the
    pair is not finite). A pair that is not finite adds zeros, as torch.where(fin, ..., 0) does."""
    a0 = a64 if fin else 0.0
    g0 = g64 if fin else 0.0
    d = np.float64(e)
    r = np.float64(rel)
    return (m[0] + (~fin & _agree(a64, g64)), m[1] + d * d, m[2] + r, m[3] + a0 * g0, m[4] + a0 * a0, m[5] + g0 * g0,
            m[6] + (fin & (r <= _SHARE_1)), m[7] + (fin & (r <= _SHARE_2)), max(m[8], _bits(d)), max(m[9], _bits(r)),
            _ulp_max(m[10], dut, i, g0, fin))


_M0 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0, 0, np.int64(0), np.int64(0), np.int64(0))


@numba.njit
def _metric_row(m, dut):
    return (float(m[0]), m[1], m[2], m[3], m[4], m[5], float(m[6]), float(m[7]), _from_bits(m[8]), _from_bits(m[9]),
            _ulp_value(m[10], dut))


@numba.njit
def _store(out, row, offset, values):
    for k in range(len(values)):
        out[row, offset + k] = values[k]


@numba.njit
def _zero_bits(like):
    return _bits(_like(0.0, like))


@numba.njit
def _pair_step(s, a, g, rtol, atol, eps, limit):
    """One pair's contribution to (matched, mismatched, finite, sum of relative errors, max error
    bits, max relative error bits), in the working precision of ``a`` and ``g``; whether the pair
    is finite, its |a-g| and its relative error (0 where it is not)."""
    zero = _like(0.0, rtol)
    ag = abs(g)
    fin = _finite(a, limit) & _finite(g, limit)
    e = abs(a - g) if fin else zero
    agree = _agree(a, g)
    rel = e / (ag + eps) if fin else zero
    return (s[0] + ((fin & (e <= ag * rtol + atol)) | (~fin & agree)), s[1] + (~fin & ~agree), s[2] + fin,
            s[3] + np.float64(rel), max(s[4], _bits(e)), max(s[5], _bits(rel))), fin, e, rel


@numba.njit
def _cross_step(s, t, g, b, small_value, small_atol, eps, limit):
    """One triple's contribution to cross_check's statistics (see CROSS_SLOTS; maxima as bits)."""
    zero = _like(0.0, eps)
    ft, fg, fb = _finite(t, limit), _finite(g, limit), _finite(b, limit)
    fin = ft & fg & fb
    ag = abs(g)
    dt, db = abs(t - g), abs(b - g)
    in_small = fin & (ag < small_value)
    in_large = fin & ~(ag < small_value)
    den = ag + eps
    rt = dt / den if in_large else zero
    rb = db / den if in_large else zero
    return (s[0] + in_large, s[1] + in_small, s[2] + (in_small & (dt > small_atol)),
            s[3] + (in_small & (db > small_atol)), s[4] + (~fin & ~(_agree(t, b) | (~fg & _agree(t, g)))),
            s[5] + (in_large & ~_finite(rb, limit)), s[6] + np.float64(rt), s[7] + np.float64(rb),
            s[8] + (np.float64(dt) * np.float64(dt) if in_large else 0.0),
            s[9] + (np.float64(db) * np.float64(db) if in_large else 0.0), max(s[10], _bits(rt)), max(s[11], _bits(rb)))


# ---- the passes (compiled) ---------------------------------------------------------------------
# error_model="numpy": a division by zero gives inf/NaN instead of a branch that raises;
# fastmath reassoc only: float sums may be added in any order (vectorised), nothing else changes.
# The metrics' float64 sums may fuse each product into its sum (``_mul_add``: the metrics
# describe; TTK's own arithmetic, in the criteria's loops, is never fused). A part of the pass goes
# block by block: a loop that assumes every element finite (no masks, so it vectorises tightly)
# tells from its maximum difference whether that was so; the few blocks that hold a NaN, an inf or
# an overflow are done again, still in L1, by the loop with TTK's masks. The relative error and
# |a-g| are computed once per leg, in TTK's working precision: the criterion and the metrics (MERE,
# MARE, the shares, the largest and the squared differences) read the same values. ``shares`` is
# () for a verdict alone, or the share bounds as working-precision thresholds: the loops with
# metrics are then compiled apart and fused with the criterion's (one load and decode an element).
# A verdict alone adds its sums (stat_rel_err's relative errors; cross_check's relative errors and
# squared differences) in the working precision, as TTK's float32 means and the torch passes add
# them, over runs of RUN elements: split among the vector lanes (8 or 16 here), a float32 partial of
# a run holds at most 64 terms, an error within about 70 units in the last place of the run's sum
# (numpy's pairwise float32 sum behind TTK's np.mean is within about 30 at 2^20 elements, 37 at
# 2^28); the runs' sums are added in float64, so the error does not grow with the length. Runs of
# 256 cost cross_check 12 % more at 2^20 (each run ends in a reduction of every lane).
# A block where such a sum overflowed is done again by the masked loop, which adds in float64 (TTK
# too redoes an overflowing sum of squares in float64). With the metrics every sum, the verdict's
# too, is float64, as in the torch pass of ``metrics``. Float64 sums are the vector loops' dearest
# work: a conversion and twice the vector passes of a float32 one.
_FLAGS = {"nogil": True, "cache": True, "error_model": "numpy", "fastmath": {"reassoc"}}
BLOCK = 1 << 11  # elements: three float32 legs' blocks (24 KiB) stay in L1 while a masked loop redoes one
RUN = 1 << 9  # elements whose working-precision sums one fast loop adds (see above)
PART = 1 << 16  # elements per row of partial results: the rows, added in order, fix the sums' order


@numba.njit
def _inf_bits(like):
    return _bits(_like(np.inf, like))


def _rel_step(acc, rel, shares):
    """(sum, max bits, share counts) of relative errors, when ``shares`` holds the share thresholds."""


@overload(_rel_step)
def _rel_step_impl(acc, rel, shares):
    if len(shares) == 0:
        return lambda acc, rel, shares: acc
    return lambda acc, rel, shares: (acc[0] + rel, max(acc[1], _bits(rel)),
                                     np.int32(acc[2] + (rel <= shares[0])), np.int32(acc[3] + (rel <= shares[1])))


@numba.njit
def _wide_bits(bits):
    """Working-precision bits of a non-negative float as float64 bits (the metrics' maxima)."""
    return _f64_bits(_from_bits(bits))


def _within(e, ag, rtol, atol):
    """1 where |a-g| <= atol + rtol·|g| (mix_tolerance's test), as int32; 0 when ``rtol`` is None
    (mix_tolerance not asked: the loop then carries no test and no count)."""


@overload(_within)
def _within_impl(e, ag, rtol, atol):
    if isinstance(rtol, types.NoneType):
        return lambda e, ag, rtol, atol: np.int32(0)
    return lambda e, ag, rtol, atol: np.int32(e <= ag * rtol + atol)


def _rel_acc(acc, e, ag, eps, shares):
    """(sum, max bits, share counts) of relative errors e / (|g| + eps), the share counts only when
    ``shares`` holds their thresholds; ``acc`` unchanged when ``eps`` is None (no relative error
    asked: the loop then has no division, the dearest operation in it)."""


@overload(_rel_acc)
def _rel_acc_impl(acc, e, ag, eps, shares):
    if isinstance(eps, types.NoneType):
        return lambda acc, e, ag, eps, shares: acc
    if len(shares) == 0:
        def plain(acc, e, ag, eps, shares):
            rel = e / (ag + eps)
            return acc[0] + rel, max(acc[1], _bits(rel)), acc[2], acc[3]
        return plain
    return lambda acc, e, ag, eps, shares: _rel_step(acc, e / (ag + eps), shares)


@intrinsic
def _mul_add(typingctx, x, y, z):
    """x·y + z in float64, licensed to be fused into one multiply-add and reordered among a loop's
    sums (``_FLAGS`` licenses reordering only): the metrics' sums use it, TTK's arithmetic never."""
    def codegen(context, builder, signature, args):
        flags = ("reassoc", "contract")  # the sum may be reordered (vectorised) and fused with the product
        return builder.fadd(builder.fmul(args[0], args[1], flags=flags), args[2], flags=flags)
    return types.float64(types.float64, types.float64, types.float64), codegen


def _metric_acc(acc, a, g, e, dut, i, shares):
    """A finite pair's share of a leg's metric sums (float64: |a-g|² of the working-precision
    difference ``e``, a·g, a²; the ULP maximum) when ``shares`` holds the share bounds; ``acc``
    unchanged otherwise."""


@overload(_metric_acc)
def _metric_acc_impl(acc, a, g, e, dut, i, shares):
    if len(shares) == 0:
        return lambda acc, a, g, e, dut, i, shares: acc

    def step(acc, a, g, e, dut, i, shares):
        a64, g64 = np.float64(a), np.float64(g)
        d = np.float64(e)
        return (_mul_add(d, d, acc[0]), _mul_add(a64, g64, acc[1]), _mul_add(a64, a64, acc[2]),
                _ulp_fast(acc[3], dut, i, g64))
    return step


def _sum_zero(like, shares):
    """The start of a fast loop's sums of relative errors and squared differences: 0 in the
    working precision for a verdict alone (TTK's float32 means), a float64 0 with the metrics
    (their sums are float64, and the verdict reads the same sums)."""


@overload(_sum_zero)
def _sum_zero_impl(like, shares):
    if len(shares) == 0:
        return lambda like, shares: _like(0.0, like)
    return lambda like, shares: 0.0


def _golden_acc(total, g, shares):
    """The golden's sum of squares (float64) when ``shares`` holds the share bounds."""


@overload(_golden_acc)
def _golden_acc_impl(total, g, shares):
    if len(shares) == 0:
        return lambda total, g, shares: total
    return lambda total, g, shares: _mul_add(np.float64(g), np.float64(g), total)


def _run_length(eps, shares):
    """Elements per call of a fast loop inside a block: RUN when it adds in the working precision
    (``eps`` given, no metrics: see :func:`_sum_zero`), so that those sums stay short; the whole
    block when it adds nothing, or adds in float64."""


@overload(_run_length)
def _run_length_impl(eps, shares):
    if isinstance(eps, types.NoneType) or len(shares) > 0:
        return lambda eps, shares: BLOCK
    return lambda eps, shares: RUN


@numba.njit
def _add_rel(acc, r):
    """A run's relative-error (sum, max bits, share counts) added to a block's (sum in float64)."""
    return acc[0] + np.float64(r[0]), max(acc[1], r[1]), acc[2] + r[2], acc[3] + r[3]


@numba.njit
def _add_metric(acc, m):
    """A run's metric sums (see :func:`_metric_acc`) added to a block's (in float64)."""
    return acc[0] + np.float64(m[0]), acc[1] + m[1], acc[2] + m[2], max(acc[3], np.int64(m[3]))


@numba.njit
def _with_fast(m, r, f, g_sq, max_e):
    """Metrics ``m`` with a finite block's relative errors ``r``, its metric sums ``f``, the golden's
    sum of squares and the leg's max |a-g| bits (working precision)."""
    return (m[0], m[1] + f[0], m[2] + r[0], m[3] + f[1], m[4] + f[2], m[5] + g_sq, m[6] + r[2], m[7] + r[3],
            max(m[8], _wide_bits(max_e)), max(m[9], _wide_bits(r[1])), max(m[10], f[3]))


@numba.njit(**_FLAGS)
def _pair_fast(xb, yb, xt, yt, rtol, atol, eps, shares, like):
    """(matched, max error bits, relative errors (sum, max bits, share counts), metric sums, golden
    sum of squares) of a run whose pairs are all finite, in the working precision of ``like``; the
    max error bits reach inf's where one was not (or a difference overflowed). Only what is asked
    is computed: ``rtol`` None leaves matched 0, ``eps`` None the relative errors (and with them the
    division), ``shares`` () the metrics."""
    z = _zero_bits(like)
    matched, max_e = np.int32(0), z  # a block's count fits in int32 (half the lanes of int64)
    r = (_sum_zero(like, shares), z, np.int32(0), np.int32(0))
    m = (0.0, 0.0, 0.0, _ulp_zero(xb))
    g_sq = 0.0
    for i in range(xb.size):
        a, g = _like(_decode(xb, xt, i), like), _like(_decode(yb, yt, i), like)
        e, ag = abs(a - g), abs(g)
        matched = np.int32(matched + _within(e, ag, rtol, atol))
        max_e = max(max_e, _bits(e))
        r = _rel_acc(r, e, ag, eps, shares)
        m = _metric_acc(m, a, g, e, xb, i, shares)
        g_sq = _golden_acc(g_sq, g, shares)
    return matched, max_e, r, m, g_sq


@numba.njit(**_FLAGS)
def _pair_block(xb, yb, xt, yt, rtol, atol, eps, shares, like):
    """:func:`_pair_fast` over a block, run by run where it adds (see :func:`_run_length`); the
    runs' sums added in float64."""
    step = _run_length(eps, shares)
    z = _zero_bits(like)
    matched, max_e = 0, z
    r = (0.0, z, 0, 0)
    m = (0.0, 0.0, 0.0, np.int64(0))
    g_sq = 0.0
    for lo in range(0, xb.size, step):
        k, e, rr, mm, gg = _pair_fast(xb[lo:lo + step], yb[lo:lo + step], xt, yt, rtol, atol, eps, shares, like)
        matched, max_e = matched + k, max(max_e, e)
        r, m, g_sq = _add_rel(r, rr), _add_metric(m, mm), g_sq + gg
    return matched, max_e, r, m, g_sq


@numba.njit(**_FLAGS)
def _pair_masked(s, xb, yb, xt, yt, rtol, atol, eps, limit, metrics, m):
    """A block's criterion statistics (and metrics when asked) with TTK's NaN/inf masks."""
    for i in range(xb.size):
        av, gv = _decode(xb, xt, i), _decode(yb, yt, i)
        s, fin, e, rel = _pair_step(s, _like(av, rtol), _like(gv, rtol), rtol, atol, eps, limit)
        if metrics:
            m = _metric_step(m, np.float64(av), np.float64(gv), fin, xb, i, e, rel)
    return s, m


def _ulp_zero(dut):
    """The running ULP maximum's start: uint32 for a float32 DUT (see :func:`_ulp_fast`), int64 otherwise."""


@overload(_ulp_zero)
def _ulp_zero_impl(dut):
    if dut.dtype == types.float32:
        return lambda dut: np.uint32(0)
    return lambda dut: np.int64(0)


def _ulp_fast(current, dut, i, g0):
    """:func:`_ulp_max` for a finite pair; for a float32 DUT the keys' distance is below 2^32, so
    it is taken as a wrapping uint32 difference (half the lanes of an int64 one)."""


@overload(_ulp_fast)
def _ulp_fast_impl(current, dut, i, g0):
    if dut.dtype == types.float32:
        def f32(current, dut, i, g0):
            ka, kg = _key32(_f32_bits(dut[i])), _key32(_f32_bits(np.float32(g0)))
            return max(current, np.uint32(ka - kg) if ka >= kg else np.uint32(kg - ka))
        return f32
    return lambda current, dut, i, g0: _ulp_max(current, dut, i, g0, True)


@numba.njit
def _key32(bits):
    """:func:`_key` for float32 bits, kept in int32."""
    return np.int32(np.int32(-(2**31)) - bits) if bits < 0 else bits


@numba.njit
def _sums_finite(*sums):
    """Whether every float64 total of a block's working-precision sums is below inf (not an
    overflow, not a NaN)."""
    ok = True
    for total in sums:
        ok = ok and total < np.inf
    return ok


@numba.njit(**_FLAGS)
def _pair_part(x, y, xt, yt, p0, p1, rtol, atol, eps, limit, shares, fast_rtol, fast_eps, out):
    """mix_tolerance's and stat_rel_err's statistics (working precision of ``rtol``), and the
    metrics when ``shares`` holds their bounds, of DUT ``x`` against golden ``y``: one row of
    ``out`` per part p0..p1-1. ``fast_rtol`` and ``fast_eps`` are ``rtol`` and ``eps``, or None
    for a statistic nobody asked for (see :func:`_pair_fast`); a masked block computes all."""
    inf = _inf_bits(rtol)
    z = _zero_bits(rtol)
    metrics = len(shares) > 0
    for p in range(p0, p1):
        xs, ys = x[p * PART:(p + 1) * PART], y[p * PART:(p + 1) * PART]  # slices from 0: no negative-index checks
        s = (0, 0, 0, 0.0, z, z)
        m = _M0
        for lo in range(0, xs.size, BLOCK):
            xb, yb = xs[lo:lo + BLOCK], ys[lo:lo + BLOCK]
            matched, max_e, r, f, g_sq = _pair_block(xb, yb, xt, yt, fast_rtol, atol, fast_eps, shares, rtol)
            if max_e < inf and _sums_finite(r[0], f[0]):  # all finite, and no working-precision sum overflowed
                s = (s[0] + matched, s[1], s[2] + xb.size, s[3] + r[0], max(s[4], max_e), max(s[5], r[1]))
                if metrics:
                    m = _with_fast(m, r, f, g_sq, max_e)
            else:
                s, m = _pair_masked(s, xb, yb, xt, yt, rtol, atol, eps, limit, metrics, m)
        _store(out, p, 0, (float(s[0]), float(s[1]), _from_bits(s[4]), s[3], _from_bits(s[5]), float(s[2])))
        _store(out, p, 6, _metric_row(m, xs))


@numba.njit(**_FLAGS)
def _cross_fast(tb, gb, bb, tt, gt, bt, small_value, small_atol, eps, shares):
    """cross_check's statistics of a run whose triples are all finite: (small count, small-region
    errors of DUT and third party, large-region relative-error sums and squared-difference sums in
    the working precision, the relative errors' maxima as bits); each leg's max |leg - golden| bits,
    inf's or above where a leg was not finite or a difference overflowed; and, for the metrics,
    each leg's relative errors over the whole run (see :func:`_rel_step`), its metric sums and the
    golden's sum of squares (see :func:`_metric_acc`)."""
    zero, z = _like(0.0, eps), _zero_bits(eps)
    small = err_t = err_b = np.int32(0)  # a block's counts fit (in half the lanes of int64)
    sum_t = sum_b = sq_t = sq_b = _sum_zero(eps, shares)
    max_t = max_b = e_t = e_b = z
    wt = wb = (_sum_zero(eps, shares), z, np.int32(0), np.int32(0))
    mt, mb = (0.0, 0.0, 0.0, _ulp_zero(tb)), (0.0, 0.0, 0.0, _ulp_zero(bb))
    g_sq = 0.0
    for i in range(tb.size):
        t, g, b = _like(_decode(tb, tt, i), eps), _like(_decode(gb, gt, i), eps), _like(_decode(bb, bt, i), eps)
        ag = abs(g)
        dt, db = abs(t - g), abs(b - g)
        e_t, e_b = max(e_t, _bits(dt)), max(e_b, _bits(db))
        in_small = ag < small_value
        small = np.int32(small + in_small)
        err_t = np.int32(err_t + (in_small & (dt > small_atol)))
        err_b = np.int32(err_b + (in_small & (db > small_atol)))
        den = ag + eps
        ft, fb = dt / den, db / den
        wt, wb = _rel_step(wt, ft, shares), _rel_step(wb, fb, shares)
        rt, rb = zero if in_small else ft, zero if in_small else fb  # the large region's
        sum_t += rt
        sum_b += rb
        lt, lb = zero if in_small else dt, zero if in_small else db
        sq_t += _like(lt, sq_t) * _like(lt, sq_t)
        sq_b += _like(lb, sq_b) * _like(lb, sq_b)
        max_t, max_b = max(max_t, _bits(rt)), max(max_b, _bits(rb))
        mt, mb = _metric_acc(mt, t, g, dt, tb, i, shares), _metric_acc(mb, b, g, db, bb, i, shares)
        g_sq = _golden_acc(g_sq, g, shares)
    return (small, err_t, err_b, sum_t, sum_b, sq_t, sq_b, max_t, max_b), (e_t, e_b), wt, wb, mt, mb, g_sq


@numba.njit(**_FLAGS)
def _cross_block(tb, gb, bb, tt, gt, bt, small_value, small_atol, eps, shares):
    """:func:`_cross_fast` over a block, run by run for a verdict alone (see :func:`_run_length`);
    the runs' sums added in float64."""
    step = _run_length(eps, shares)
    z = _zero_bits(eps)
    c = (0, 0, 0, 0.0, 0.0, 0.0, 0.0, z, z)
    e_t = e_b = z
    wt = wb = (0.0, z, 0, 0)
    mt = mb = (0.0, 0.0, 0.0, np.int64(0))
    g_sq = 0.0
    for lo in range(0, tb.size, step):
        hi = lo + step
        f, e, rt, rb, ft, fb, gg = _cross_fast(tb[lo:hi], gb[lo:hi], bb[lo:hi], tt, gt, bt, small_value, small_atol,
                                               eps, shares)
        c = (c[0] + f[0], c[1] + f[1], c[2] + f[2], c[3] + np.float64(f[3]), c[4] + np.float64(f[4]),
             c[5] + np.float64(f[5]), c[6] + np.float64(f[6]), max(c[7], f[7]), max(c[8], f[8]))
        e_t, e_b = max(e_t, e[0]), max(e_b, e[1])
        wt, wb, mt, mb = _add_rel(wt, rt), _add_rel(wb, rb), _add_metric(mt, ft), _add_metric(mb, fb)
        g_sq += gg
    return c, (e_t, e_b), wt, wb, mt, mb, g_sq


@numba.njit(**_FLAGS)
def _cross_masked(s, tb, gb, bb, tt, gt, bt, small_value, small_atol, eps, limit, metrics, mt, mb, ct, cb):
    """A block's cross_check statistics (and both legs' metrics when asked) with TTK's masks."""
    zero = _like(0.0, eps)
    for i in range(tb.size):
        tv, gv, bv = _decode(tb, tt, i), _decode(gb, gt, i), _decode(bb, bt, i)
        tw, gw, bw = _like(tv, eps), _like(gv, eps), _like(bv, eps)
        s = _cross_step(s, tw, gw, bw, small_value, small_atol, eps, limit)
        if metrics:
            fg = _finite(gw, limit)
            fin_t, fin_b = _finite(tw, limit) & fg, _finite(bw, limit) & fg
            ct = (ct[0] + fin_t, ct[1] + (~fin_t & ~_agree(tw, gw)))
            cb = (cb[0] + fin_b, cb[1] + (~fin_b & ~_agree(bw, gw)))
            den = abs(gw) + eps
            e_t = abs(tw - gw) if fin_t else zero
            e_b = abs(bw - gw) if fin_b else zero
            mt = _metric_step(mt, np.float64(tv), np.float64(gv), fin_t, tb, i, e_t, e_t / den if fin_t else zero)
            mb = _metric_step(mb, np.float64(bv), np.float64(gv), fin_b, bb, i, e_b, e_b / den if fin_b else zero)
    return s, mt, mb, ct, cb


@numba.njit(**_FLAGS)
def _cross_part(t, g, b, tt, gt, bt, p0, p1, small_value, small_atol, eps, limit, shares, out):
    """cross_check's region counts, sums and maxima (working precision of ``eps``), and both legs'
    metrics (each with its finite and mismatch counts) when ``shares`` holds their bounds: one row
    of ``out`` per part."""
    inf = _inf_bits(eps)
    z = _zero_bits(eps)
    metrics = len(shares) > 0
    for p in range(p0, p1):
        lo_p, hi_p = p * PART, (p + 1) * PART
        ts, gs, bs = t[lo_p:hi_p], g[lo_p:hi_p], b[lo_p:hi_p]
        s = (0, 0, 0, 0, 0, 0, 0.0, 0.0, 0.0, 0.0, z, z)
        mt = mb = _M0
        ct = cb = (0, 0)  # (finite, mismatched) per leg
        for lo in range(0, ts.size, BLOCK):
            tb, gb, bb = ts[lo:lo + BLOCK], gs[lo:lo + BLOCK], bs[lo:lo + BLOCK]
            f, e, wt, wb, ft, fb, g_sq = _cross_block(tb, gb, bb, tt, gt, bt, small_value, small_atol, eps, shares)
            sums = (f[3], f[4], f[5], f[6], wt[0], wb[0], ft[0], fb[0])
            # all finite, no third-party relative error overflowed, nor any working-precision sum
            if max(e[0], e[1]) < inf and f[8] < inf and _sums_finite(*sums):
                s = (s[0] + tb.size - f[0], s[1] + f[0], s[2] + f[1], s[3] + f[2], s[4], s[5], s[6] + f[3],
                     s[7] + f[4], s[8] + f[5], s[9] + f[6], max(s[10], f[7]), max(s[11], f[8]))
                if metrics:
                    ct, cb = (ct[0] + tb.size, ct[1]), (cb[0] + tb.size, cb[1])
                    mt, mb = _with_fast(mt, wt, ft, g_sq, e[0]), _with_fast(mb, wb, fb, g_sq, e[1])
            else:
                s, mt, mb, ct, cb = _cross_masked(s, tb, gb, bb, tt, gt, bt, small_value, small_atol, eps, limit,
                                                  metrics, mt, mb, ct, cb)
        _store(out, p, 0, (float(s[0]), float(s[1]), float(s[2]), float(s[3]), float(s[4]), float(s[5]), s[6], s[7],
                           s[8], s[9], _from_bits(s[10]), _from_bits(s[11])))
        _store(out, p, _DUT_AT, (float(ct[0]), float(ct[1])) + _metric_row(mt, ts))
        _store(out, p, _THIRD_AT, (float(cb[0]), float(cb[1])) + _metric_row(mb, bs))


# ---- the Python side ---------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _table(name: str) -> np.ndarray:
    """float32 value of every bit pattern of the 1- or 2-byte float ``name``, built by torch."""
    import torch

    dtype = getattr(torch, name)
    width = torch.empty(0, dtype=dtype).element_size()
    bits = torch.from_numpy(np.arange(1 << (8 * width), dtype=np.uint8 if width == 1 else np.uint16))
    table = bits.view(dtype).to(torch.float32).numpy()
    table.flags.writeable = False
    return table


_NO_TABLE = np.zeros(0, np.float32)


def _name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


def supports(*legs) -> bool:
    """Whether the compiled pass takes these flattened legs: contiguous CPU floats it can decode."""
    return all(leg.device.type == "cpu" and leg.is_contiguous() and _name(leg) in BITS_DTYPES + DIRECT_DTYPES
               for leg in legs)


def _int_view(t):
    import torch

    return {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]


_BITS_VIEW = {"float16": np.int16, "bfloat16": np.uint16, "float8_e4m3fn": np.uint8, "float8_e5m2": np.uint8}


def _leg(t):
    """(array the kernel reads, decode table) for a contiguous CPU leg, without a copy: float32
    and float64 as they are, fp16 as int16 bits, bf16 as uint16 bits, fp8 as uint8 bits and a
    table (see :func:`_decode`)."""
    name = _name(t)
    if name in DIRECT_DTYPES:
        return t.numpy(), _NO_TABLE
    bits = t.view(_int_view(t)).numpy().view(_BITS_VIEW[name])
    return bits, (_table(name) if t.element_size() == 1 else _NO_TABLE)


def _pool(threads: int) -> ThreadPoolExecutor:
    if threads not in _pools:
        _pools[threads] = ThreadPoolExecutor(threads, thread_name_prefix="kbt-compare")
    return _pools[threads]


def _run(kernel, n: int, width: int, args, pool_min: int) -> np.ndarray:
    """``kernel(*head, p0, p1, *tail, out)`` over the parts of [0, n) (PART elements each, the
    rows of ``out``), the parts split among the threads in contiguous runs; the rows."""
    import torch

    parts = max(1, -(-n // PART))
    threads = max(1, min(torch.get_num_threads(), parts)) if n >= pool_min else 1
    out = np.zeros((parts, width), np.float64)
    head, tail = args
    cuts = [parts * k // threads for k in range(threads + 1)]

    def run(k):
        kernel(*head, cuts[k], cuts[k + 1], *tail, out)

    others = [_pool(threads - 1).submit(run, k) for k in range(1, threads)] if threads > 1 else []
    run(0)  # the calling thread takes the first run: one hand-off fewer than a pool of all the threads
    for future in others:
        future.result()
    return out


def _combine(rows: np.ndarray, slots) -> dict:
    """Partial rows added (sums, counts) or maximised (maxima) into one dict by slot name."""
    sums, maxes = rows.sum(axis=0).tolist(), rows.max(axis=0).tolist()
    return {name: (maxes if name in MAX_SLOTS else sums)[k] for k, name in enumerate(slots)}


def _work_scalar(work_is_f64: bool, value: float):
    return np.float64(value) if work_is_f64 else np.float32(value)


def _limit(work_is_f64: bool):
    """The largest finite value of the working precision: |x| <= it is isfinite(x)."""
    return np.finfo(np.float64 if work_is_f64 else np.float32).max


def _shares(work_is_f64: bool, metrics: bool) -> tuple:
    """The loops' ``shares``: () without metrics, else each share bound as the largest value of the
    working precision not above it (so ``rel <= it`` there is ``float64(rel) <= bound``)."""
    if not metrics:
        return ()
    if work_is_f64:
        return tuple(np.float64(bound) for bound in tol.SHARE_BOUNDS)
    below = []
    for bound in tol.SHARE_BOUNDS:
        t = np.float32(bound)
        below.append(t if float(t) <= bound else np.nextafter(t, np.float32(0)))
    return tuple(below)


MIX_STATS = ("matched", "mismatched", "max_err")  # what mix_tolerance's verdict reads
STAT_STATS = ("mismatched", "sum_rel_w", "max_rel_w", "finite")  # what stat_rel_err's verdict and the metrics read


def pair(dut, golden, work_is_f64: bool, rtol: float, atol: float, metrics: bool,
         stats: tuple[str, ...] = PAIR_SLOTS):
    """(criterion statistics, metric sums or None) of DUT against golden, in one pass.

    Criterion statistics: ``matched`` (TTK's mix_tolerance elements, specials included),
    ``mismatched`` (NaN/inf disagreements), ``max_err`` over finite pairs, and stat_rel_err's
    ``sum_rel_w``, ``max_rel_w`` and ``finite``, all in the working precision; only ``stats`` are
    returned. Without the metrics the loop computes no more than ``stats`` need: ``MIX_STATS`` has
    no division, ``STAT_STATS`` no tolerance test.
    """
    (x, xt), (y, yt) = _leg(dut), _leg(golden)
    w = lambda v: _work_scalar(work_is_f64, v)  # noqa: E731
    fast_rtol = w(rtol) if metrics or "matched" in stats else None  # with the metrics, one loop for all
    fast_eps = w(tol.REL_EPS) if metrics or {"sum_rel_w", "max_rel_w"} & set(stats) else None
    rows = _run(_pair_part, dut.numel(), len(PAIR_SLOTS) + _N_METRIC,
                ((x, y, xt, yt), (w(rtol), w(atol), w(tol.REL_EPS), _limit(work_is_f64), _shares(work_is_f64, metrics),
                                  fast_rtol, fast_eps)), POOL_MIN_ELEMENTS["pair with metrics" if metrics else "pair"])
    whole = _combine(rows[:, :len(PAIR_SLOTS)], PAIR_SLOTS)
    crit = {name: whole[name] for name in stats}
    if not metrics:
        return crit, None
    m = _combine(rows[:, len(PAIR_SLOTS):], METRIC_SLOTS)
    m.update(finite=whole["finite"], special_mismatch=whole["mismatched"], ulp=_name(dut) in ULP_DTYPES)
    return crit, m


def cross(dut, golden, third, work_is_f64: bool, sv: tol.SmallValue, metrics: bool):
    """(cross_check's region statistics, DUT metric sums or None, third-party metric sums or None)."""
    (t, tt), (g, gt), (b, bt) = _leg(dut), _leg(golden), _leg(third)
    w = lambda v: _work_scalar(work_is_f64, v)  # noqa: E731
    width = _THIRD_AT + 2 + _N_METRIC
    rows = _run(_cross_part, dut.numel(), width, ((t, g, b, tt, gt, bt),
                                                  (w(sv.small_value), w(sv.small_value_atol), w(tol.REL_EPS),
                                                   _limit(work_is_f64), _shares(work_is_f64, metrics))),
                POOL_MIN_ELEMENTS["cross"])
    stats = _combine(rows[:, :len(CROSS_SLOTS)], CROSS_SLOTS)
    if not metrics:
        return stats, None, None
    legs = []
    for start in (_DUT_AT, _THIRD_AT):
        m = _combine(rows[:, start:start + 2 + _N_METRIC], ("finite", "special_mismatch") + METRIC_SLOTS)
        m["ulp"] = _name(dut) in ULP_DTYPES
        legs.append(m)
    return stats, legs[0], legs[1]
