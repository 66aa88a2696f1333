# %% [markdown]
# # Promote: the three-party golden casts nothing
#
# **Rule** ([golden-promote](../kb/constraints/golden-promote.md),
# [three-leg-comparison](../kb/constraints/three-leg-comparison.md), seed 000 §2–§5, §8): when an
# output declares `cross_check`, the case is three-party. TTK's Promote hands the CPU golden its
# inputs one step wider (fp16 → fp32), and the golden computes and returns in that dtype with **zero
# casts**. The GPU third-party leg computes at the operator's precision, widening like the DUT and
# narrowing back at exit. `cross_check` then judges the DUT's error *relative to* the third-party
# leg's error against the same precise golden.
#
# The DUT below is a correct fp16 softmax kernel: fp16 in, fp32 exponent and accumulation (blocked
# sum), a hardware-style reciprocal estimate good to 14 bits (fp16 keeps 11), fp16 out. We show:
#
# 1. with a Promote golden, `cross_check` passes;
# 2. a golden that casts back to fp16 collapses the third-party error to ~0, the ratios lose
#    their denominator, and the same correct kernel fails;
# 3. the fixed golden, which takes its output dtype from what it was handed, passes again;
# 4. forcing `close` turns Promote off (the tool warns) and fails too;
# 5. a DUT that accumulates in fp16 fails honestly.

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from kb_tools import backends
from kb_tools.numerics import criteria, promote

BACKENDS = backends.announce()
torch.manual_seed(0)

ROWS, COLS = 128, 1024
DTYPE, WIDENING = "float16", "float32"  # the DUT's AccT for fp16 is fp32
X = (2 * torch.randn(ROWS, COLS)).half()

mode = promote.case_mode({"y": "cross_check"})
GOLDEN = promote.golden_policy(DTYPE, mode.three_party, WIDENING)
THIRD = promote.third_party_policy(DTYPE, mode.three_party, WIDENING)
print("three-party:", mode.three_party, "| Promote:", mode.promote)
print("golden:     ", GOLDEN.reason)
print("third party:", THIRD.reason)
assert (GOLDEN.entry, GOLDEN.exit, GOLDEN.output) == (None, None, "float32")
assert (THIRD.entry, THIRD.exit, THIRD.output) == ("float32", "float16", "float16")


# %% [markdown]
# The legs. The golden is written once, as the seed recommends (torch, no cast); the broken
# variant adds the `.to(float16)` that undoes Promote, the fixed one takes its output dtype from the
# tensor it was handed (`var.dtype`), never from the operator's declared dtype.

# %%
def reciprocal_estimate(s):
    """1/s with the low 9 mantissa bits cleared: 14 correct bits, like a vector reciprocal unit."""
    return (1.0 / s).view(torch.int32).bitwise_and(~0x1FF).view(torch.float32)


def dut_kernel(x):
    """fp16 in, fp32 accumulate (blocked sum, reciprocal estimate), fp16 out."""
    xf = x.float()
    e = torch.exp(xf - xf.amax(-1, keepdim=True))
    s = e.reshape(x.shape[0], 16, -1).sum(-1).sum(-1, keepdim=True)
    return (e * reciprocal_estimate(s)).half()


def dut_fp16_accumulate(x):
    """The same kernel with an fp16 accumulator: each partial sum is rounded to fp16."""
    e = torch.exp(x.float() - x.float().amax(-1, keepdim=True)).half()
    s = torch.zeros(x.shape[0], 1, dtype=torch.float16, device=x.device)
    for j in range(x.shape[1]):
        s = s + e[:, j:j + 1]
    return e / s


def softmax_golden(x):
    """Zero cast: compute in whatever dtype arrives (fp32 under Promote)."""
    e = torch.exp(x - x.amax(-1, keepdim=True))
    return e / e.sum(-1, keepdim=True)


def golden_cast_back(x):
    return softmax_golden(x).to(torch.float16)  # undoes Promote: the declared dtype, not x.dtype


def golden_fixed(x):
    return softmax_golden(x).to(x.dtype)  # the dtype it was handed: float32 under Promote


def third_party(x):
    return promote.run_leg(THIRD, lambda t: torch.softmax(t, -1), x)


# %% [markdown]
# Run every scenario on every backend. The golden always runs on the CPU (TTK's CPU leg); the DUT
# and the third-party leg run on the backend.

# %%
(X_PROMOTED,) = promote.ttk_promote(X)  # what TTK's Promote hands the golden
GOLDENS = {
    "Promote golden": promote.run_leg(GOLDEN, softmax_golden, X_PROMOTED),
    "golden cast back to fp16": promote.run_leg(GOLDEN, golden_cast_back, X_PROMOTED),
    "fixed golden (var.dtype)": promote.run_leg(GOLDEN, golden_fixed, X_PROMOTED),
}
results = {}
for backend in BACKENDS:
    x = X.to(backend)
    dut, tp = dut_kernel(x), third_party(x)
    assert dut.dtype == tp.dtype == torch.float16
    for name, golden in GOLDENS.items():
        results[backend, name] = criteria.cross_check(dut, golden, tp, DTYPE)
    results[backend, "fp16-accumulating DUT"] = criteria.cross_check(
        dut_fp16_accumulate(x), GOLDENS["Promote golden"], tp, DTYPE)

for (backend, name), v in results.items():
    ratios = ", ".join(f"{k} {'undefined' if r is None else f'{r:.3g}'}" for k, r in v.ratios.items())
    tp_rmse = v.metrics["third_party"]["large_rmse"]
    print(f"[{backend}] {name:28s} {'PASS' if v.passed else 'FAIL'}  ratios: {ratios}  third-party RMSE {tp_rmse:.3g}")
    for reason in v.reasons:
        print(f"          why: {reason}")

for backend in BACKENDS:
    assert results[backend, "Promote golden"].passed
    collapsed_ratios = [r for r in results[backend, "golden cast back to fp16"].ratios.values() if r is not None]
    assert not results[backend, "golden cast back to fp16"].passed
    assert not collapsed_ratios or max(collapsed_ratios) > 5, "the ratios explode (or lose their denominator)"
    assert results[backend, "fixed golden (var.dtype)"].passed
    assert not results[backend, "fp16-accumulating DUT"].passed
    collapsed = results[backend, "golden cast back to fp16"].metrics["third_party"]["large_rmse"]
    honest = results[backend, "Promote golden"].metrics["third_party"]["large_rmse"]
    assert collapsed < honest / 20, "the cast-back golden collapses the third-party error"

# %% [markdown]
# The picture: each bar is a DUT/third-party error ratio (log scale) against the L1 limits. A ratio
# whose denominator is zero is undefined — drawn as a hatched bar at the top of the axis, not as a
# number.

# %%
CAP = 1e4
backend = BACKENDS[0]
names = [n for (b, n) in results if b == backend]
fig, ax = plt.subplots(figsize=(9, 4))
width = 0.25
for k, (metric, limit) in enumerate([("mare", 5.0), ("mere", 1.5), ("rmse", 1.5)]):
    values = [results[backend, n].ratios.get(metric) for n in names]
    heights = [CAP if r is None else r for r in values]
    bars = ax.bar(np.arange(len(names)) + (k - 1) * width, heights, width, label=f"{metric} (L1 limit {limit:g})")
    for bar, r in zip(bars, values):
        if r is None:
            bar.set_hatch("//")
            bar.set_alpha(0.5)
ax.axhline(1.5, color="k", ls="--", lw=1)
ax.axhline(5.0, color="k", ls=":", lw=1)
ax.set_yscale("log")
ax.set_ylim(0.5, CAP * 1.5)
ax.set_xticks(np.arange(len(names)), names, rotation=12)
ax.set_ylabel("DUT error / third-party error")
ax.set_title(f"cross_check ratios ({backend}); hatched = undefined (third-party error 0)")
ax.legend()
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Forcing `close`
#
# `--compare close` overrides the declared criterion: the case stops being three-party, Promote is
# switched off, the GPU leg does not run. The same zero-cast golden now receives fp16 and computes in
# fp16, and `close` judges the correct kernel against it alone.

# %%
forced = promote.case_mode({"y": "cross_check"}, override="close")
print("warning:", forced.warnings[0])
assert not forced.three_party and not forced.promote and forced.warnings

golden_no_promote = softmax_golden(X)  # no Promote: fp16 in, fp16 arithmetic, fp16 out
assert golden_no_promote.dtype == torch.float16
for backend in BACKENDS:
    v = criteria.close(dut_kernel(X.to(backend)), golden_no_promote, DTYPE)
    reference = criteria.close(dut_kernel(X.to(backend)), GOLDENS["Promote golden"], DTYPE)
    print(f"[{backend}] close against the fp16 golden: {'PASS' if v.passed else 'FAIL'} — {v.reasons[0] if v.reasons else ''}")
    print(f"[{backend}] (for scale: close against the promoted golden: {reference.reasons[0] if reference.reasons else 'pass'})")
    assert not v.passed
    share = lambda verdict: 1 - verdict.metrics["dut"]["close_ok"] / verdict.metrics["dut"]["n"]  # noqa: E731
    assert share(v) > share(reference), "dropping Promote makes close strictly worse"

# %% [markdown]
# Reading the two `close` lines: against the promoted golden, `close` already rejects some outputs
# of this correct kernel — softmax outputs below 2^-14 are fp16 subnormals, whose spacing is wider
# than `close`'s rtol of 1e-3. Without Promote the golden itself is computed in fp16, and the
# mismatch share grows several-fold: the single remaining reference is no better than the kernel it
# judges. `cross_check` exists to compare against a same-precision leg instead of demanding more
# than fp16 can give.
