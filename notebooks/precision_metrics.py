# %% [markdown]
# # Precision metrics: alignment levels, thresholds, accumulators and reduction order
#
# **Rule** ([semantic-alignment](../kb/constraints/semantic-alignment.md),
# [accumulator-precision](../kb/constraints/accumulator-precision.md),
# [reduction-order](../kb/constraints/reduction-order.md), seed 004 §2.1, §3.3, §4.2; TTK's
# criteria per DESIGN §5): every output declares how closely it must match — bit for bit
# (exact), within a tolerance (numerical), or in distribution (functional) — and is judged by a
# criterion that fits that level. Half-precision inputs accumulate in fp32; a reduction's order is
# part of its numerics.
#
# 1. the three alignment levels, one example each, judged by the matching criterion;
# 2. seed 004's cosine thresholds (strictly above: > 0.99999 fp32, > 0.999 fp16) beside TTK's
#    criteria on the same data, and the cases where they disagree;
# 3. fp16 accumulation stalling and overflowing to inf/NaN where fp32 accumulation does not;
# 4. reduction order changing fp16 and fp32 sums, measured;
# 5. TTK's decisions that are easy to get wrong, one case each: mix_tolerance's hard cap, close's
#    float test of the mismatch share and its fp16 arithmetic, integer routing, the fp8 rows.

# %%
from kb_tools.outputs.page_facts import rules_shown
from kb_tools.runtime import backends

RUN = backends.announce(backends.KNOWN)  # first output: the backends that run here, and why others do not
rules_shown("precision_metrics")  # the fact box and invariants of the pages this notebook proves

# %%
import math

import matplotlib.pyplot as plt
import numpy as np
import torch

from kb_tools.numerics import criteria, metrics, stats

BACKENDS = backends.torch_paths(RUN)  # torch code: the golden and the references
KERNELS = backends.kernel_backends(RUN)  # the device under test: a Triton kernel
torch.manual_seed(0)
GEN = torch.Generator().manual_seed(0)
COSINE_MIN = {"float32": 0.99999, "float16": 0.999}  # seed 004 §3.3


def verdicts(dut, golden, dtype):
    """TTK's float criteria and seed 004's cosine threshold on one pair."""
    m = metrics.compute(dut, golden, dtype)
    row = {name: criteria.judge(name, dut, golden, dtype=dtype).passed
           for name in ("close", "mix_tolerance", "stat_rel_err")}
    row["cosine"] = m.cosine
    row["cosine ok"] = m.cosine is not None and m.cosine > COSINE_MIN[dtype]
    row["max abs"], row["max rel"] = m.max_abs, m.max_rel
    return row


def show(label, row):
    cells = "  ".join(f"{k} {'PASS' if v is True else 'FAIL' if v is False else f'{v:.8g}'}" for k, v in row.items())
    print(f"{label:34s} {cells}")


# %% [markdown]
# ## 1. Three alignment levels
#
# * **exact** — a copy through a transposed layout: `binary_equal` passes;
# * **numerical** — `mean` as `sum × (1/N)` instead of `sum / N` (seed 004 §2.1's example): the bits
#   differ, so `binary_equal` fails, while `mix_tolerance` passes;
# * **functional** — a Bernoulli draw from two generators: the values differ (every numerical
#   criterion fails) but both pass the distribution test (exact binomial, 99 % Wilson interval).

# %%
X32 = torch.randn(256, 1000, generator=GEN)
for backend in BACKENDS:
    x = X32.to(backend)
    copy = x.t().contiguous().t()
    exact = criteria.binary_equal(copy, x)
    n = x.shape[-1]
    by_division = x.sum(-1) / n
    by_reciprocal = x.sum(-1) * (1.0 / n)
    numeric_bits = criteria.binary_equal(by_reciprocal, by_division)
    numeric_tol = criteria.mix_tolerance(by_reciprocal, by_division, "float32")
    p = 0.3
    draws = [torch.bernoulli(torch.full((50_000,), p), generator=torch.Generator().manual_seed(s)).to(backend)
             for s in (11, 12)]
    functional_values = criteria.mix_tolerance(draws[0], draws[1], "float32")
    tests = [stats.proportion_test(int(d.sum()), d.numel(), p) for d in draws]
    print(f"[{backend}] exact:      binary_equal {'PASS' if exact.passed else 'FAIL'}")
    print(f"[{backend}] numerical:  binary_equal {'PASS' if numeric_bits.passed else 'FAIL'} "
          f"({numeric_bits.reasons[0] if numeric_bits.reasons else ''}); mix_tolerance "
          f"{'PASS' if numeric_tol.passed else 'FAIL'}, max abs error {numeric_tol.metrics['max_abs_error']:.3g}")
    print(f"[{backend}] functional: mix_tolerance {'PASS' if functional_values.passed else 'FAIL'}; "
          + "; ".join(f"ones {t.k}/{t.n}, p-value {t.p_value:.3f}, Wilson [{t.wilson_low:.4f}, {t.wilson_high:.4f}]" for t in tests))
    assert exact.passed
    assert not numeric_bits.passed and numeric_tol.passed
    assert not functional_values.passed
    assert all(t.in_interval and t.p_value > 0.01 for t in tests)

# %% [markdown]
# ## 2. Seed 004's cosine thresholds beside TTK's criteria
#
# Four outputs against their goldens. Cosine measures direction only, so it is blind to a uniform
# scale error and to errors on small elements; TTK's element-wise criteria are not, but their
# absolute tolerance forgives noise on data that is tiny overall, which cosine does not.

# %%
g32 = torch.randn(50_000, generator=GEN)
g16 = torch.randn(50_000, generator=GEN).half().float()
small = torch.argsort(g16.abs())[:1000]  # the 2 % smallest elements
garbled = g16.clone()
garbled[small] = -garbled[small] * 3
CASES = {
    "fp32, correctly rounded": (g32 + g32 * 1e-7 * torch.randn(50_000, generator=GEN), g32, "float32"),
    "fp32, uniformly 1 % too large": (g32 * 1.01, g32, "float32"),
    "fp16, 2 % smallest elements wrong": (garbled.half(), g16, "float16"),
    "fp32, tiny data, noise 5e-6": (g32 * 1e-5 + 5e-6 * torch.randn(50_000, generator=GEN), g32 * 1e-5, "float32"),
}
table = {}
for backend in BACKENDS:
    for label, (dut, golden, dtype) in CASES.items():
        table[backend, label] = row = verdicts(dut.to(backend), golden.to(backend), dtype)
        show(f"[{backend}] {label}", row)

for backend in BACKENDS:
    assert all(table[backend, "fp32, correctly rounded"][k] for k in ("mix_tolerance", "stat_rel_err", "cosine ok"))
    scaled = table[backend, "fp32, uniformly 1 % too large"]
    assert scaled["cosine ok"] and scaled["cosine"] > 0.9999999 and not scaled["mix_tolerance"]
    garbled_row = table[backend, "fp16, 2 % smallest elements wrong"]
    assert garbled_row["cosine ok"] and not garbled_row["mix_tolerance"] and not garbled_row["stat_rel_err"]
    tiny = table[backend, "fp32, tiny data, noise 5e-6"]
    assert tiny["mix_tolerance"] and not tiny["cosine ok"]

# %%
labels = list(CASES)
fig, ax = plt.subplots(figsize=(9, 3.5))
one_minus = [max(1 - table[BACKENDS[0], k]["cosine"], 1e-12) for k in labels]
colors = ["tab:green" if table[BACKENDS[0], k]["mix_tolerance"] else "tab:red" for k in labels]
ax.barh(labels, one_minus, color=colors)
for dtype, bound in COSINE_MIN.items():
    ax.axvline(1 - bound, ls="--", color="k" if dtype == "float32" else "grey", label=f"seed 004 {dtype}: 1 - cos <= {1 - bound:g}")
ax.set_xscale("log")
ax.set_xlabel("1 - cosine, floored at 1e-12 (colour: mix_tolerance verdict, green pass / red fail)")
ax.legend(loc="lower right", fontsize=8)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 3. fp16 accumulation: stalling, inf, NaN
#
# Row means and variances of fp16 data, accumulated once in fp16 (each partial sum rounded to fp16,
# 64 blocks) and once in fp32. Beyond a row mean of about 16, the fp16 sum of 4096 elements passes
# 65504 and becomes inf; the variance `E[x²] − E[x]²` becomes `inf − inf = NaN`. The fp32 path stays
# finite and within `mix_tolerance`. Summing 4096 ones in fp16 one at a time stalls at 2048.

# %%
ROWS, N = 64, 4096
centres = torch.linspace(0, 40, ROWS)
XH = (centres[:, None] + torch.randn(ROWS, N, generator=GEN)).half()


def moments(x, acc_dtype):
    """Row mean and variance with the running sums kept in ``acc_dtype`` across 64 blocks."""
    s = torch.zeros(x.shape[0], dtype=acc_dtype, device=x.device)
    sq = torch.zeros_like(s)
    for block in x.reshape(x.shape[0], 64, -1).unbind(1):
        b = block.to(acc_dtype)
        s = s + b.sum(-1, dtype=acc_dtype)
        sq = sq + (b * b).sum(-1, dtype=acc_dtype)
    mean = s / x.shape[1]
    return mean.half(), (sq / x.shape[1] - mean * mean).half()


golden_mean, golden_var = XH.double().mean(-1), XH.double().var(-1, unbiased=False)
for backend in BACKENDS:
    x = XH.to(backend)
    m16, v16 = moments(x, torch.float16)
    m32, v32 = moments(x, torch.float32)
    bad = criteria.mix_tolerance(v16, golden_var, "float16")
    good = criteria.mix_tolerance(v32, golden_var, "float16")
    good_mean = criteria.mix_tolerance(m32, golden_mean, "float16")
    print(f"[{backend}] fp16 accumulation: {int(torch.isinf(m16).sum())} inf means, {int(torch.isnan(v16).sum())} NaN variances "
          f"of {ROWS}; mix_tolerance on the variance: {'PASS' if bad.passed else 'FAIL'} — {bad.reasons[0]}")
    print(f"[{backend}] fp32 accumulation: mean {'PASS' if good_mean.passed else 'FAIL'}, variance {'PASS' if good.passed else 'FAIL'}")
    stalled = np.add.accumulate(np.ones(N, dtype=np.float16))[-1]  # one at a time, rounded to fp16
    print(f"[{backend}] 4096 ones summed one by one in fp16: {float(stalled)}")
    assert torch.isinf(m16).any() and torch.isnan(v16).any()
    assert not bad.passed and any("NaN/inf" in r for r in bad.reasons)
    assert good.passed and good_mean.passed and torch.isfinite(m32).all()
    assert float(stalled) == 2048.0

# %%
fig, ax = plt.subplots(figsize=(8, 3.5))
m16, _ = moments(XH, torch.float16)
m32, _ = moments(XH, torch.float32)
ax.plot(centres, m32.float(), "o-", ms=3, label="fp32 accumulation")
finite = torch.isfinite(m16)
ax.plot(centres[finite], m16.float()[finite], "x", label="fp16 accumulation (finite)")
ax.plot(centres[~finite], np.full(int((~finite).sum()), 45.0), "rv", label="fp16 accumulation: inf")
ax.axvline(65504 / N, color="grey", ls=":", label="65504 / 4096")
ax.set_xlabel("row centre")
ax.set_ylabel("row mean")
ax.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## 4. Reduction order
#
# The same data summed sequentially (one element at a time; numpy's `add.accumulate` keeps the
# dtype, and runs on the CPU whatever the backend), in blocks (64 running partials, then a tree) and as a pairwise tree, all in the data's own
# dtype, against an exact `math.fsum`. In fp32 the orders disagree in the last bits and all stay well
# inside `mix_tolerance`'s rtol; the sequential error grows with the length, the pairwise one barely.

# %%
def sequential(x):
    return float(np.add.accumulate(x.cpu().numpy())[-1])


def pairwise(x):
    while x.numel() > 1:
        if x.numel() % 2:
            x = torch.cat([x, x.new_zeros(1)])
        x = x[0::2] + x[1::2]
    return float(x[0])


def blocked(x, lanes=64):
    lanes_view = x.reshape(-1, lanes)
    acc = lanes_view[0]
    for row in lanes_view[1:]:
        acc = acc + row
    return pairwise(acc)


ORDERS = {"sequential": sequential, "blocked": blocked, "pairwise": pairwise}
LENGTHS = [2**k for k in range(8, 15)]
errors = {}
for backend in BACKENDS:
    for dtype in (torch.float32, torch.float16):
        for n in LENGTHS:
            data = torch.rand(n, generator=torch.Generator().manual_seed(n)).to(dtype)
            exact = math.fsum(data.double().tolist())
            for name, fn in ORDERS.items():
                x = data.to(backend)
                errors[backend, dtype, name, n] = abs(fn(x) - exact) / exact

for backend in BACKENDS:
    for dtype in (torch.float32, torch.float16):
        print(f"[{backend}] {str(dtype):14s} relative error at n = {LENGTHS[-1]}: "
              + ", ".join(f"{name} {errors[backend, dtype, name, LENGTHS[-1]]:.2e}" for name in ORDERS))
    fp32_results = {errors[backend, torch.float32, name, LENGTHS[-1]] for name in ORDERS}
    assert len(fp32_results) > 1, "different orders give different fp32 sums"
    assert max(errors[backend, torch.float32, name, n] for name in ORDERS for n in LENGTHS) < 2**-10
    seq16 = [errors[backend, torch.float16, "sequential", n] for n in LENGTHS]
    pair16 = [errors[backend, torch.float16, "pairwise", n] for n in LENGTHS]
    assert seq16[-1] > 10 * pair16[-1] and seq16[-1] > seq16[0], "fp16 sequential error grows with length"

# %%
fig, axes = plt.subplots(1, 2, figsize=(10, 3.5), sharex=True)
for ax, dtype in zip(axes, (torch.float32, torch.float16)):
    for name in ORDERS:
        ax.loglog(LENGTHS, [max(errors[BACKENDS[0], dtype, name, n], 1e-12) for n in LENGTHS], "o-", label=name)
    ax.set_title(f"{dtype}: |sum - exact| / exact")
    ax.set_xlabel("length")
    ax.legend()
plt.tight_layout()
plt.show()


# %% [markdown]
# ## 5. TTK's decisions, case by case
#
# Each row is a case from hicann/ops-test-kit's comparison code (`mix_tolerance.py`, `is_close.py`,
# `resolve.py`) judged by `criteria.judge`, with the verdict TTK gives:
#
# * mix_tolerance's hard cap is one number per dtype, max(1e-k, 32·eps): 0.1 for fp16, so one fp16
#   ULP at 1000 (0.5) fails although every element is within rtol;
# * close fails when `1 - precision > ptol` in floating point: one wrong element in 1,000 is
#   `0.0010000000000000009 > 0.001`, a FAIL for fp16, while one in 10,000 passes fp32
#   (`9.999999999998899e-05`);
# * close on two fp16 tensors runs numpy's isclose in fp16: rtol 1e-3 becomes 0.0010004 and the
#   products round to fp16, so two values 2 ULPs apart near 0.977 are close where float64 says not;
# * integer and bool outputs are compared bit for bit whatever was asked, and the verdict says so;
# * fp8 has its own rows: e4m3fn's rtol 0.25 and cap 4.

# %%
F16 = torch.float16
ROWS = [
    ("fp16 1000.5 vs 1000.0, mix_tolerance", "mix_tolerance", torch.tensor([1000.5], dtype=F16), torch.tensor([1000.0], dtype=F16), False),
    ("fp16 1 wrong in 1,000, close", "close", torch.cat([torch.full((1,), 2.0), torch.ones(999)]).half(), torch.ones(1000, dtype=F16), False),
    ("fp32 1 wrong in 10,000, close", "close", torch.cat([torch.full((1,), 2.0), torch.ones(9999)]), torch.ones(10000), True),
    ("fp16 0.97705 vs 0.97607, close", "close", torch.tensor([0.97705078125], dtype=F16), torch.tensor([0.97607421875], dtype=F16), True),
    ("int32 off by one, asked mix_tolerance", "mix_tolerance", torch.tensor([1, 2, 3], dtype=torch.int32), torch.tensor([1, 2, 4], dtype=torch.int32), False),
    ("fp8 e4m3fn 20 % off, mix_tolerance", "mix_tolerance", (torch.linspace(1, 2, 200) * 1.2).to(torch.float8_e4m3fn), torch.linspace(1, 2, 200), True),
]
for backend in BACKENDS:
    for label, criterion, dut, golden, expected in ROWS:
        v = criteria.judge(criterion, dut.to(backend), golden.to(backend))
        why = "; ".join(v.reasons) or "; ".join(v.notes)
        print(f"[{backend}] {label:40s} {v.criterion:14s} {'PASS' if v.passed else 'FAIL'}  {why}")
        assert v.passed is expected, label
    assert np.isclose(np.float16(0.97705078125), np.float16(0.97607421875), rtol=1e-3, atol=1e-8)
    assert not np.isclose(0.97705078125, 0.97607421875, rtol=1e-3, atol=1e-8)

# %% [markdown]
# ## Accumulation in a kernel
#
# One row-sum kernel, its accumulator dtype and walk order chosen at compile time, over the same
# fp16 rows. Against a float64 reference, the fp32 accumulator's error is far below the fp16
# accumulator's; reversing the tile order changes the bits of some sums (printed, not asserted:
# how much depends on the data).

# %%
ROWS_FP16 = torch.rand(32, 4096, generator=torch.Generator().manual_seed(5)).half()
REF64 = ROWS_FP16.double().sum(1)


def precision_kernel_check(backend):
    from kb_tools.kernels.accumulate import row_sum

    x = ROWS_FP16.to(backends.device(backend))
    err = {}
    for acc_fp32 in (True, False):
        for reverse in (False, True):
            s = row_sum(x, backend=backend, acc_fp32=acc_fp32, reverse=reverse).cpu().double()
            err[acc_fp32, reverse] = float(((s - REF64).abs() / REF64.abs()).max())
    print(f"[{backend}] max relative error: fp32 acc {err[True, False]:.2e} (reversed {err[True, True]:.2e}), "
          f"fp16 acc {err[False, False]:.2e} (reversed {err[False, True]:.2e})")
    assert err[True, False] < 1e-5 and err[False, False] > 100 * err[True, False]


print(backends.each_kernel_backend(RUN, precision_kernel_check))
