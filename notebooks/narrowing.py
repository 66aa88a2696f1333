# %% [markdown]
# # Integer narrowing: wrap where the kernel wraps
#
# **Rule** ([integer-narrowing](../kb/constraints/integer-narrowing.md),
# [golden-follows-dut-widening](../kb/constraints/golden-follows-dut-widening.md),
# [third-party-narrowing](../kb/constraints/third-party-narrowing.md), seed 000 §3, §5, §8):
# integers are never promoted. A kernel computes in its accumulate type (AccT, here int32) and wraps
# modulo 2^32 there; storing to int8/int16 wraps again. The golden and the third-party leg must do
# the same: widen exactly as far as the DUT, narrow back at exit.
#
# What this notebook shows, with numbers:
#
# 1. narrowing after every step and once at the end agree for `+ − ×` over all 65,536 int8 pairs
#    (wrapping is a ring homomorphism) and disagree for division — the pairs are counted;
# 2. a golden widened to int64 "against overflow" disagrees with the int32 DUT;
# 3. `torch.div(INT_MIN, -1, rounding_mode='trunc')` on int32 CPU kills the process with SIGFPE (in a
#    subprocess, never here), and routing divisor −1 to negation gives the wrapped value;
# 4. division by zero: CPU raises, CUDA returns a value; `safe_div` defines one answer everywhere;
# 5. a third-party leg that forgets to narrow leaks a wider dtype out of `sum`.

# %%
from kb_tools.outputs.page_facts import rules_shown
from kb_tools.runtime import backends

RUN = backends.announce(backends.KNOWN)  # first output: the backends that run here, and why others do not
rules_shown("narrowing")  # the fact box and invariants of the pages this notebook proves

# %%
import signal
import subprocess
import sys

import matplotlib.pyplot as plt
import pandas as pd
import torch
from IPython.display import display

from kb_tools.numerics import criteria, integers, promote

BACKENDS = backends.torch_paths(RUN)  # torch code: the golden and the references
KERNELS = backends.kernel_backends(RUN)  # the device under test: a Triton kernel
torch.manual_seed(0)
INT32_MIN = torch.iinfo(torch.int32).min

values = torch.arange(-128, 128, dtype=torch.int8)
A8, B8 = (t.reshape(-1) for t in torch.meshgrid(values, values, indexing="ij"))
assert A8.numel() == 65536, "every int8 pair: 256 x 256"

# %% [markdown]
# ## 1. Per-step against final narrowing, all int8 pairs
#
# Each chain runs in int32 (the AccT) and stores int8. "Per step" narrows every intermediate to int8
# (a kernel that stores each partial result); "final" narrows once.

# %%
CHAINS = {
    "a + b, then + a": [("add", "b"), ("add", "a")],
    "a - b, then - b": [("sub", "b"), ("sub", "b")],
    "a × b, then × b": [("mul", "b"), ("mul", "b")],
    "a × b + a": [("mul", "b"), ("add", "a")],
    "(a × b) / b": [("mul", "b"), ("div", "b")],
    "(a + b) / 3": [("add", "b"), ("div", "three")],
}
disagree = {}
for backend in BACKENDS:
    a, b = A8.to(backend), B8.to(backend)
    operands = {"a": a, "b": b, "three": torch.full_like(a, 3)}
    for name, chain in CHAINS.items():
        steps = [(op, operands[which]) for op, which in chain]
        per_step = integers.evaluate(a, steps, torch.int32, torch.int8, per_step=True)
        final = integers.evaluate(a, steps, torch.int32, torch.int8, per_step=False)
        disagree[backend, name] = per_step != final
display(pd.DataFrame({backend: {name: int(disagree[backend, name].sum()) for name in CHAINS} for backend in BACKENDS})
        .rename_axis("int8 pairs (of 65536) where per-step != final narrowing"))

for backend in BACKENDS:
    for name in CHAINS:
        count = int(disagree[backend, name].sum())
        if "/" in name:
            assert count > 0, f"division breaks the homomorphism: {name}"
        else:
            assert count == 0, f"ring operations must agree: {name}"

# %%
fig, axes = plt.subplots(1, 2, figsize=(9, 4))
for ax, name in zip(axes, ["(a × b) / b", "(a + b) / 3"]):
    ax.imshow(disagree[BACKENDS[0], name].reshape(256, 256).cpu(), cmap="Greys", extent=(-128, 127, 127, -128))
    ax.set_title(f"{name}: {int(disagree[BACKENDS[0], name].sum())} pairs differ")
    ax.set_xlabel("b")
    ax.set_ylabel("a")
fig.suptitle("int8 pairs where narrowing per step and at the end disagree (black)")
plt.tight_layout()
plt.show()

# %% [markdown]
# The same on int16 with int32 accumulation, on half a million random pairs (the full 2^32 would not fit
# the time budget): `a × b × b` wraps int32 but agrees per step and at the end; `(a × b × b) / b`
# does not.

# %%
for backend in BACKENDS:
    gen = torch.Generator().manual_seed(1)
    a = torch.randint(-2**15, 2**15, (500_000,), generator=gen, dtype=torch.int16).to(backend)
    b = torch.randint(-2**15, 2**15, (500_000,), generator=gen, dtype=torch.int16).to(backend)
    ring = [("mul", b), ("mul", b), ("sub", a)]
    div = [("mul", b), ("mul", b), ("div", b)]
    ring_diff = int((integers.evaluate(a, ring, torch.int32, torch.int16, True)
                     != integers.evaluate(a, ring, torch.int32, torch.int16, False)).sum())
    div_diff = int((integers.evaluate(a, div, torch.int32, torch.int16, True)
                    != integers.evaluate(a, div, torch.int32, torch.int16, False)).sum())
    print(f"[{backend}] int16: ring chain differs on {ring_diff} pairs, division chain on {div_diff} of 500,000")
    assert ring_diff == 0 and div_diff > 0, f"ring chain differs on {ring_diff}, division chain on {div_diff}"

# %% [markdown]
# ## 2. A golden widened to int64 "against overflow"
#
# The DUT computes `(a × b × c) / d` on int16 inputs in int32 and stores int16. A golden that
# follows the DUT (`golden_policy` says: widen to int32, narrow at exit) agrees bit for bit; one
# that widens to int64 avoids the int32 wrap the kernel really does, and disagrees.

# %%
policy = promote.golden_policy("int16", three_party=False, dut_widening="int32")
print("golden policy:", policy.reason)
for backend in BACKENDS:
    gen = torch.Generator().manual_seed(2)
    a, b, c, d = (torch.randint(-2**15, 2**15, (100_000,), generator=gen, dtype=torch.int16).to(backend) for _ in range(4))
    steps = [("mul", b), ("mul", c), ("div", d)]
    dut = integers.evaluate(a, steps, torch.int32, torch.int16, per_step=False)
    follows = integers.evaluate(a, steps, getattr(torch, policy.compute), getattr(torch, policy.output), per_step=False)
    widened = integers.evaluate(a, steps, torch.int64, torch.int16, per_step=False)
    v_follow, v_wide = criteria.binary_equal(dut, follows), criteria.binary_equal(dut, widened)
    print(f"[{backend}] golden following the DUT: {'PASS' if v_follow.passed else 'FAIL'}")
    print(f"[{backend}] golden widened to int64: {'PASS' if v_wide.passed else 'FAIL'} — {v_wide.reasons[0]}")
    assert v_follow.passed and not v_wide.passed, "the DUT-following golden must pass and the int64 golden fail"

# %% [markdown]
# ## 3. INT_MIN / −1
#
# Two's complement has no +2^31 in int32. On x86 the CPU's `idiv` traps, and the trap arrives as
# SIGFPE: the process dies. We run it in a child process and read its signal. (Checked on torch
# 2.13 CPU: the child is killed by SIGFPE.)

# %%
CRASH = ("import torch; a = torch.tensor([-2**31], dtype=torch.int32); "
         "print(torch.div(a, torch.tensor([-1], dtype=torch.int32), rounding_mode='trunc'))")
child = subprocess.run([sys.executable, "-c", CRASH], capture_output=True, text=True, timeout=120)
print("child return code:", child.returncode, f"(-SIGFPE is {-signal.SIGFPE})")
assert child.returncode == -signal.SIGFPE, f"INT_MIN / -1 in C ended with {child.returncode}, not SIGFPE"

for backend in BACKENDS:
    a = torch.tensor([INT32_MIN, INT32_MIN + 1, 7, -7], dtype=torch.int32, device=backend)
    minus_one = torch.full_like(a, -1)
    routed = integers.safe_div(a, minus_one)
    print(f"[{backend}] safe_div(a, -1) = {routed.tolist()}")
    assert routed.tolist() == [INT32_MIN, 2**31 - 1, -7, 7], routed.tolist()  # INT_MIN wraps back to INT_MIN, like AccT

# %% [markdown]
# ## 4. Division by zero: CPU against CUDA
#
# On CPU torch checks and raises; on CUDA the hardware returns some value and carries on. Neither is
# the kernel's answer — the golden must state one, which `safe_div` does (`on_zero`).

# %%
zero_results = {}
for backend in BACKENDS:
    a = torch.tensor([5, -5, 0], dtype=torch.int32, device=backend)
    zero = torch.zeros_like(a)
    try:
        raw = torch.div(a, zero, rounding_mode="trunc").tolist()
        outcome = f"returns {raw}"
    except RuntimeError as exc:
        raw, outcome = None, f"raises RuntimeError({exc})"
    zero_results[backend] = (raw, integers.safe_div(a, zero, on_zero=0).tolist())
    print(f"[{backend}] torch.div(x, 0) {outcome}; safe_div(x, 0, on_zero=0) = {zero_results[backend][1]}")
assert zero_results["cpu"][0] is None, "CPU raises on integer division by zero"
if "cuda" in zero_results:
    assert zero_results["cuda"][0] is not None, "CUDA returns a value instead of raising"
assert all(guarded == [0, 0, 0] for _, guarded in zero_results.values()), f"guarded division by zero: {zero_results}"

# %% [markdown]
# ## 5. A third-party leg that forgets to narrow
#
# torch widens integer reductions: `torch.sum` of int8 returns int64. A leg that hands that back
# leaks int64 and unwrapped values; the leg that follows `third_party_policy` narrows to int8 and
# matches the DUT (int8 in, int32 AccT, int8 store) bit for bit.

# %%
tp_policy = promote.third_party_policy("int8", three_party=True, dut_widening="int32")
print("third-party policy:", tp_policy.reason)
for backend in BACKENDS:
    x = torch.randint(-128, 128, (64, 512), dtype=torch.int8, device=backend)
    dut = integers.wrap(x.to(torch.int32).sum(-1, dtype=torch.int32), torch.int8)
    leaky = torch.sum(x, -1)
    fixed = promote.run_leg(tp_policy, lambda t: torch.sum(t, -1), x)
    v_leak, v_fixed = criteria.binary_equal(dut, leaky), criteria.binary_equal(dut, fixed)
    print(f"[{backend}] forgetful leg returns {leaky.dtype}: {'PASS' if v_leak.passed else 'FAIL'} — {v_leak.reasons[0]}")
    print(f"[{backend}] narrowed leg returns {fixed.dtype}: {'PASS' if v_fixed.passed else 'FAIL'}")
    assert leaky.dtype != torch.int8 and torch.iinfo(leaky.dtype).bits > 8, f"the forgetful leg returned {leaky.dtype}"
    assert fixed.dtype == torch.int8 and v_fixed.passed and not v_leak.passed, "only the narrowed leg may pass"

# %% [markdown]
# ## The arithmetic in a kernel
#
# The kernel computes `a*b + c` and `(a*b) / c` (truncating) at int8. Wrapping at every step gives
# the same sum as computing wide and narrowing once (both are arithmetic modulo 256); the quotient
# of a wrapped product is not the narrowed quotient of the wide one.

# %%
gen = torch.Generator().manual_seed(11)
IA, IB = (torch.randint(-128, 128, (65536,), dtype=torch.int8, generator=gen) for _ in range(2))
IC = torch.randint(1, 128, (65536,), dtype=torch.int8, generator=gen)
IC = torch.where(torch.rand(65536, generator=gen) < 0.5, IC, -IC)
WIDE = IA.int() * IB.int()


def narrowing_kernel_check(backend):
    from kb_tools.kernels.wrap import wrap_chain

    where = backends.device(backend)
    total, quotient = (t.cpu() for t in wrap_chain(IA.to(where), IB.to(where), IC.to(where), backend=backend))
    once_total = (WIDE + IC.int()).to(torch.int8)
    per_step_q = torch.div(IA * IB, IC, rounding_mode="trunc")
    once_q = torch.div(WIDE, IC.int(), rounding_mode="trunc").to(torch.int8)
    differ = int((quotient != once_q).sum())
    print(f"[{backend}] sum: per step == once: {torch.equal(total, once_total)}; "
          f"quotient == per-step trunc: {torch.equal(quotient, per_step_q)}; differs from narrowing once on {differ} of 65536")
    assert torch.equal(total, once_total) and torch.equal(quotient, per_step_q) and differ > 0


print(backends.each_kernel_backend(RUN, narrowing_kernel_check))
