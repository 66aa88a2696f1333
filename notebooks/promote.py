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
# 2. a golden that casts back to fp16 collapses the third-party error — and TTK still passes
#    the kernel, because its `safe_div` floors the third party's error at the small value (2^-11
#    for fp16): the collapse has to be caught by looking at the third party's error, not the verdict;
# 3. the fixed golden, which takes its output dtype from what it was handed, passes with honest ratios;
# 4. forcing `close` turns Promote off (the tool warns) and fails;
# 5. a DUT that accumulates in fp16 fails honestly;
# 6. TTK's other cross_check decisions, one case each: the floored denominator, the small-value
#    error count against max(count, 1), and the three-way NaN/inf rule.

# %%
from kb_tools.outputs.page_facts import rules_shown
from kb_tools.runtime import backends

RUN = backends.announce(backends.KNOWN)  # first output: the backends that run here, and why others do not
rules_shown("promote")  # the fact box and invariants of the pages this notebook proves

# %%
import matplotlib.pyplot as plt
import numpy as np
import torch

from kb_tools.numerics import criteria, promote

BACKENDS = backends.torch_paths(RUN)  # torch code: the golden and the references
KERNELS = backends.kernel_backends(RUN)  # the device under test: a Triton kernel
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
    ratios = ", ".join(f"{k} {r:.3g}" for k, r in v.ratios.items())
    print(f"[{backend}] {name:28s} {'PASS' if v.passed else 'FAIL'}  ratios: {ratios}  "
          f"third-party max rel {v.metrics['mare_third']:.3g}, RMSE {v.metrics['rmse_third']:.3g}")
    for reason in v.reasons:
        print(f"          why: {reason}")

for backend in BACKENDS:
    honest, collapsed = results[backend, "Promote golden"], results[backend, "golden cast back to fp16"]
    assert honest.passed and results[backend, "fixed golden (var.dtype)"].passed
    assert not results[backend, "fp16-accumulating DUT"].passed
    # The cast-back golden collapses the third party's RMSE by two orders of magnitude, yet TTK
    # passes: safe_div divides by max(third-party error, 2^-11), and 2^-11 is far above both RMSEs.
    assert collapsed.metrics["rmse_third"] < honest.metrics["rmse_third"] / 20, "the third-party error collapses"
    assert collapsed.passed, "TTK's verdict, which misses the collapse"
    assert collapsed.ratios["rmse"] == collapsed.metrics["rmse_dut"] / 2**-11

# %% [markdown]
# The picture: each bar is a DUT/third-party error ratio (log scale, TTK's `safe_div`) against the
# L1 limits. The collapsed golden's bars are not small because the DUT got better: their
# denominator is the floor 2^-11, not the third party's error, which is 0.

# %%
backend = BACKENDS[0]
names = [n for (b, n) in results if b == backend]
fig, ax = plt.subplots(figsize=(9, 4))
width = 0.25
for k, (metric, limit) in enumerate([("mare", 5.0), ("mere", 1.5), ("rmse", 1.5)]):
    values = [max(results[backend, n].ratios[metric], 1e-4) for n in names]
    ax.bar(np.arange(len(names)) + (k - 1) * width, values, width, label=f"{metric} (L1 limit {limit:g})")
ax.axhline(1.5, color="k", ls="--", lw=1)
ax.axhline(5.0, color="k", ls=":", lw=1)
ax.set_yscale("log")
ax.set_xticks(np.arange(len(names)), names, rotation=12)
ax.set_ylabel("DUT error / max(third-party error, 2^-11)")
ax.set_title(f"cross_check ratios ({backend}), floored at 1e-4 for the log scale")
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
    assert v.metrics["mismatched"] > reference.metrics["mismatched"], "dropping Promote makes close strictly worse"

# %% [markdown]
# Reading the two `close` lines: against the promoted golden, `close` already rejects some outputs
# of this correct kernel — softmax outputs below 2^-14 are fp16 subnormals, whose spacing is wider
# than `close`'s rtol of 1e-3. Without Promote the golden itself is computed in fp16, and the
# mismatch share grows several-fold: the single remaining reference is no better than the kernel it
# judges. `cross_check` exists to compare against a same-precision leg instead of demanding more
# than fp16 can give.

# %% [markdown]
# ## TTK's other cross_check decisions, one case each
#
# From `cross_check.py` (hicann/ops-test-kit): every ratio goes through `safe_div`, whose
# denominator is `max(third-party error, small value)` and where 0/0 is 1; the small-value region
# compares error counts as `DUT / max(third party, 1) <= 2`; a NaN/inf position passes when the DUT
# equals the third party, or when the golden is non-finite and the DUT equals it.

# %%
GEN = torch.Generator().manual_seed(1)
G64 = torch.rand(4096, generator=GEN, dtype=torch.float64) + 0.5
accurate_tp = (G64 * (1 + 1e-7 * torch.randn(4096, generator=GEN, dtype=torch.float64))).float()
worse_dut = (G64 * (1 + 20e-7 * torch.randn(4096, generator=GEN, dtype=torch.float64))).float()
tiny = torch.full((100,), 1e-6, dtype=torch.float64)  # below fp32's small value 2^-14
gross2, gross3 = tiny.float().clone(), tiny.float().clone()
gross2[:2] += 1e-3
gross3[:3] += 1e-3
F = torch.tensor
CASES = {
    "fp32 DUT 20x a 1e-7 third party": (worse_dut, G64, accurate_tp, True),
    "third party with zero error": (worse_dut, G64.float().double(), G64.float(), True),
    "2 gross small-value errors, third party 0": (gross2, tiny, tiny.float(), True),
    "3 gross small-value errors, third party 0": (gross3, tiny, tiny.float(), False),
    "DUT and third party NaN, golden finite": (F([float("nan"), 1.0]), F([2.0, 1.0]).double(), F([float("nan"), 1.0]), True),
    "third party inf, DUT equal to golden": (F([2.0, 1.0]), F([2.0, 1.0]).double(), F([float("inf"), 1.0]), False),
}
for label, (d, g, tp, expected) in CASES.items():
    for backend in BACKENDS:
        v = criteria.judge("cross_check", d.to(backend), g.to(backend), tp.to(backend))
        ratios = ", ".join(f"{k} {r:.3g}" for k, r in v.ratios.items())
        print(f"[{backend}] {label:42s} {'PASS' if v.passed else 'FAIL'}  {ratios}  {'; '.join(v.reasons)}")
        assert v.passed is expected, label

# %% [markdown]
# ## The device under test as a kernel
#
# The kernel computes `x*y + z` at its own width (fp16): the product is rounded to fp16 before the
# add. The golden widens to fp32, computes, and narrows once. What holds on every backend: the
# kernel equals the same per-step fp16 chain computed by torch on the CPU, bit for bit, and some
# elements of it differ from the widened golden — the gap Promote exists to judge.

# %%
gen = torch.Generator().manual_seed(7)
FX, FY, FZ = ((4 * torch.randn(8192, generator=gen)).half() for _ in range(3))
PER_STEP = FX * FY + FZ  # torch on the CPU, each op rounded to fp16
WIDENED = (FX.float() * FY.float() + FZ.float()).half()


def promote_kernel_check(backend):
    from kb_tools.kernels.widths import fma_own_width

    where = backends.device(backend)
    dut = fma_own_width(FX.to(where), FY.to(where), FZ.to(where), backend=backend).cpu()
    off = int((dut != WIDENED).sum())
    print(f"[{backend}] kernel == per-step fp16: {torch.equal(dut, PER_STEP)}; differs from the widened golden on {off} of {dut.numel()}")
    assert torch.equal(dut, PER_STEP), "the kernel did not compute at its own width"
    assert off > 0, "the widened golden should differ somewhere from the fp16 chain"


print(backends.each_kernel_backend(RUN, promote_kernel_check))
