"""The engine against an independent numpy restatement of TTK's rules (tests/ttk_reference.py), on
generated tensors whose errors sit around each criterion's thresholds: every dtype TTK and torch
share, sizes from empty to a few thousand, zeros, denormals, small-value regions, NaN/inf in any
leg, exact and noisy third-party legs, goldens in the output dtype or promoted."""

from __future__ import annotations

import numpy as np
import torch
import ttk_reference as ref
from hypothesis import event, given, settings
from hypothesis import strategies as st

from kb_tools.numerics import chunks, criteria

TORCH = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
         "float8_e4m3fn": torch.float8_e4m3fn, "float8_e5m2": torch.float8_e5m2}
PROMOTED = {"float16": "float32", "bfloat16": "float32", "float32": "float64",
            "float8_e4m3fn": "float32", "float8_e5m2": "float32"}
NP_DTYPES = {"float16": np.float16, "float32": np.float32, "float64": np.float64}
SETTINGS = settings(max_examples=300, deadline=None, derandomize=True)
CHUNK_SIZES = st.sampled_from([37, 256, chunks.CPU_CHUNK])  # many chunks, a ragged last one, one chunk


def judged(criterion, chunk, *legs, **kw):
    """The engine's verdict with chunks of ``chunk`` elements (restored afterwards)."""
    saved, chunks.CPU_CHUNK = chunks.CPU_CHUNK, chunk
    try:
        return criteria.judge(criterion, *legs, **kw).passed
    finally:
        chunks.CPU_CHUNK = saved


def leg(values: np.ndarray, name: str):
    """A torch tensor of dtype ``name`` and the numpy array the reference reads for it."""
    t = torch.from_numpy(values.astype(np.float64)).to(TORCH.get(name) or getattr(torch, name))
    held = t.to(torch.float64).numpy().astype(NP_DTYPES.get(name, np.float32))
    return t, held


def golden_values(rng, n, scale, zero_share, tiny_share):
    g = rng.standard_normal(n) * scale
    g[rng.random(n) < zero_share] = 0.0
    tiny = rng.random(n) < tiny_share
    g[tiny] = rng.standard_normal(int(tiny.sum())) * 1e-6 * scale  # small-value region, denormals in fp16
    return g


def sprinkle(rng, arrays, rate):
    """NaN/+inf/-inf at a few positions of some legs, sometimes at the same place in several."""
    if rate == 0:
        return
    n = arrays[0].size
    for where in (rng.random(n) < rate, rng.random(n) < rate / 2):
        value = rng.choice([np.nan, np.inf, -np.inf])
        for a in arrays:
            if rng.random() < 0.6:
                a[where] = value


dtypes = st.sampled_from(sorted(TORCH))
sizes = st.sampled_from([0, 1, 2, 7, 100, 999, 1000, 1001, 2500])
seeds = st.integers(0, 2**32 - 1)


@SETTINGS
@given(seed=seeds, dtype=dtypes, n=sizes, promote=st.booleans(), noise=st.floats(0.05, 4.0),
       outlier=st.floats(0.0, 3.0), zeros=st.sampled_from([0.0, 0.05]), tiny=st.sampled_from([0.0, 0.02]),
       special=st.sampled_from([0.0, 0.0, 0.003]), scale=st.sampled_from([1e-3, 1.0, 30.0]), chunk=CHUNK_SIZES)
def test_mix_tolerance_and_stat_rel_err_agree(seed, dtype, n, promote, noise, outlier, zeros, tiny, special, scale,
                                              chunk):
    rng = np.random.default_rng(seed)
    g = golden_values(rng, n, scale, zeros, tiny)
    rtol, atol, cap = ref.MIX[dtype]
    a = g + (rtol * np.abs(g) + atol) * noise * rng.standard_normal(n)
    if n:
        a[rng.integers(n)] += cap * outlier * rng.choice([-1, 1])  # one element around the hard cap
    sprinkle(rng, [a, g], special)
    gname = PROMOTED[dtype] if promote else dtype
    (ta, na), (tg, ng) = leg(a, dtype), leg(g, gname)
    names = (dtype, gname)
    for name, rule in (("mix_tolerance", ref.mix_tolerance), ("stat_rel_err", ref.stat_rel_err)):
        expected = rule(na, ng, names)
        event(f"{name} {'PASS' if expected else 'FAIL'}")
        assert judged(name, chunk, ta, tg) == expected


@SETTINGS
@given(seed=seeds, dtype=dtypes, n=sizes, promote=st.booleans(), wrong=st.integers(0, 4),
       noise=st.floats(0.0, 3.0), special=st.sampled_from([0.0, 0.002]), scale=st.sampled_from([1e-4, 1.0, 100.0]),
       chunk=CHUNK_SIZES)
def test_close_agrees(seed, dtype, n, promote, wrong, noise, special, scale, chunk):
    rng = np.random.default_rng(seed)
    g = golden_values(rng, n, scale, 0.02, 0.01)
    rtol = 1e-3 if dtype in ("float16", "bfloat16") else 1e-4
    a = g + rtol * np.abs(g) * noise * rng.standard_normal(n)
    if n:
        a[rng.integers(0, n, wrong)] += scale  # a few plainly wrong elements around ptol·n
    sprinkle(rng, [a, g], special)
    gname = PROMOTED[dtype] if promote else dtype
    (ta, na), (tg, ng) = leg(a, dtype), leg(g, gname)
    if {dtype, gname} == {"float8_e4m3fn", "float16"}:
        return
    expected = ref.close(na, ng, (dtype, gname))
    event(f"close {'PASS' if expected else 'FAIL'}")
    assert judged("close", chunk, ta, tg) == expected


CROSS = ("float16", "bfloat16", "float32")


@SETTINGS
@given(seed=seeds, dtype=st.sampled_from(CROSS), n=sizes, level=st.sampled_from(["L0", "L1", "L2"]),
       tp_error=st.sampled_from([0.0, 1e-9, 1e-7, 1e-4, 1e-2]), ratio=st.floats(0.2, 12.0),
       small_share=st.sampled_from([0.0, 0.05, 0.5]), gross=st.integers(0, 4), tp_gross=st.integers(0, 2),
       special=st.sampled_from([0.0, 0.0, 0.004]), tp_is_dut=st.booleans(), chunk=CHUNK_SIZES)
def test_cross_check_agrees(seed, dtype, n, level, tp_error, ratio, small_share, gross, tp_gross, special, tp_is_dut,
                            chunk):
    rng = np.random.default_rng(seed)
    small_value, small_atol = ref.SMALL[dtype]
    g = golden_values(rng, n, 1.0, 0.0, small_share)
    g[rng.random(n) < small_share / 2] *= small_value  # right around the small-value boundary
    b = g * (1 + tp_error * rng.standard_normal(n))
    a = g * (1 + tp_error * ratio * rng.standard_normal(n)) + 0.0
    if n:
        small = np.flatnonzero(np.abs(g) < small_value)
        if small.size:
            a[rng.choice(small, min(gross, small.size))] += 64 * small_atol  # gross small-region errors
            b[rng.choice(small, min(tp_gross, small.size))] += 64 * small_atol
    if tp_is_dut:
        b = a.copy()
    sprinkle(rng, [a, g, b], special)
    gname = PROMOTED[dtype]
    (ta, na), (tg, ng), (tb, nb) = leg(a, dtype), leg(g, gname), leg(b, dtype)
    expected = ref.cross_check(na, ng, nb, (dtype, gname, dtype), level)
    event(f"cross_check {'PASS' if expected else 'FAIL'}")
    assert judged("cross_check", chunk, ta, tg, tb, level=level) == expected


@SETTINGS
@given(seed=seeds, kind=st.sampled_from(["int8", "uint8", "int32", "int64", "bool", "float16", "float32"]),
       other=st.sampled_from(["same", "int16", "int64", "float32"]), n=sizes, flips=st.integers(0, 2))
def test_binary_equal_agrees(seed, kind, other, n, flips):
    rng = np.random.default_rng(seed)
    a = (rng.integers(-50, 50, n) if kind != "bool" else rng.integers(0, 2, n)).astype(kind)
    if kind.startswith("float"):
        a = rng.standard_normal(n).astype(kind)
        a[rng.random(n) < 0.05] = np.nan
    g = a.copy()
    if n and flips:
        g[rng.integers(0, n, flips)] = a[0] if kind == "bool" else 7
    if other != "same":
        with np.errstate(invalid="ignore"):
            g = g.astype(other)
    expected = ref.binary_equal(a, g)
    event(f"binary_equal {'PASS' if expected else 'FAIL'}")
    assert criteria.judge("binary_equal", torch.from_numpy(a), torch.from_numpy(g)).passed == expected
