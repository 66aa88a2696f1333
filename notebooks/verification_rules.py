# %% [markdown]
# # What a check is held to: the golden's framework, every dtype's criterion, the prototype
#
# **Rules** ([golden-framework](../kb/constraints/golden-framework.md),
# [tolerance-coverage](../kb/constraints/tolerance-coverage.md),
# [op-prototype](../kb/constraints/op-prototype.md); seed 000 §6–§8, seed 004 §3.1): a bf16
# golden is computed in a framework with native bf16 and handed back in the DUT's dtype; every
# registered dtype declares its criterion, or it silently gets TTK's default; an input outside
# the prototype is refused before any launch.
#
# The DUTs are Triton kernels (`kb_tools.kernels`) on every backend present — `cpu` is torch,
# `triton` Triton's CPU interpreter, `cuda`/`npu` compiled where lent — judged with
# `kb_tools.numerics.criteria.judge`, the same code `kbt compare` uses. The host code is each
# page's own block, run as printed.

# %%
from kb_tools.outputs.page_facts import rules_shown
from kb_tools.runtime import backends

BACKENDS = backends.announce(backends.KNOWN)  # first output: the backends that run here, and why others do not
rules_shown("verification_rules")  # the fact box and invariants of the pages this notebook proves

# %%
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from kb_tools.kb.root import find_root
from kb_tools.kernels import page_code, rows, strided
from kb_tools.numerics.criteria import judge

KB = find_root(None) / "kb"
GEN = torch.Generator().manual_seed(11)


def dut_softmax(backend, x):
    """The DUT: torch on cpu, the strided Triton softmax elsewhere (fp32 inside, bf16 out)."""
    if backend == "cpu":
        return torch.softmax(x, -1)
    y, _ = strided.softmax(x.to(backends.device(backend)), -1, backend=backend)
    return y.cpu()


# %% [markdown]
# ## 1. The golden's framework: bf16 needs one that has it
#
# The page's Do golden is torch, whose bf16 is native: its result comes back as bf16 and the
# comparison applies bf16's criterion. The Don't computes in numpy: `x.numpy()` refuses a bf16
# tensor outright, and the forced `x.float()` detour hands back a float32 array — so a
# comparison that takes the dtype from the golden applies float32's much tighter criterion
# to a correct bf16 result, and fails it.

# %%
golden_do = page_code.load(KB, "golden-framework", "softmax_golden")["softmax_golden"]
golden_dont = page_code.load(KB, "golden-framework", "softmax_golden", role="dont")["softmax_golden"]
x = torch.randn(16, 40, generator=GEN).to(torch.bfloat16)
try:
    x.numpy()
    raise AssertionError("numpy took a bf16 tensor")
except TypeError as exc:
    print("numpy and bf16:", exc)
g_do, g_dont = golden_do(x), golden_dont(x)
print(f"Do golden: {type(g_do).__name__} {g_do.dtype}; Don't golden: {type(g_dont).__name__} {g_dont.dtype}")
assert g_do.dtype == torch.bfloat16 and g_dont.dtype == np.float32
verdicts = {}
for backend in BACKENDS:
    dut = dut_softmax(backend, x)
    with_do = judge("mix_tolerance", dut, g_do)
    with_dont = judge("mix_tolerance", dut.float(), torch.from_numpy(g_dont), dtype=str(g_dont.dtype))
    verdicts[backend] = {"against the torch golden (bf16 criterion)": "pass" if with_do.passed else "fail",
                         "against the numpy golden (float32 criterion)": "pass" if with_dont.passed else "fail"}
    assert with_do.passed and not with_dont.passed, (backend, with_do.reasons, with_dont.reasons)
display(pd.DataFrame(verdicts).T)

# %% [markdown]
# ## 2. Every registered dtype declares its criterion
#
# The page's `uncovered_dtypes` reads the `DT_*` set of an `op_host/<op>_def.cpp` and the
# `_TOL_KERNEL` keys. Here a data-movement operator whose standard is bit-exactness declares it
# for fp16 and fp32 only. Its bf16 output has one element off by one ulp: declared, the check
# catches it; undeclared, the dtype falls to TTK's default (mix_tolerance) and the wrong result
# passes — the specification gap the page names.

# %%
uncovered_dtypes = page_code.load(KB, "tolerance-coverage", "uncovered_dtypes")["uncovered_dtypes"]
DEF_CPP = 'this->Input("x").DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT});'
tol_kernel = {"DT_FLOAT16": "binary_equal", "DT_FLOAT": "binary_equal"}
missing = uncovered_dtypes(DEF_CPP, tol_kernel)
print("registered but undeclared:", missing)
assert missing == ["BF16"]
golden = torch.randn(64, generator=GEN).to(torch.bfloat16)
dut = golden.clone()
dut.view(torch.int16)[5] += 1  # one element one ulp off: a data-movement bug
declared = judge("binary_equal", dut, golden)
defaulted = judge("mix_tolerance", dut, golden)  # what an undeclared bf16 gets
print(f"declared binary_equal: {'pass' if declared.passed else 'fail'}; "
      f"undeclared (default mix_tolerance): {'pass' if defaulted.passed else 'fail'}")
assert not declared.passed and defaulted.passed
assert uncovered_dtypes(DEF_CPP, {**tol_kernel, "DT_BF16": "binary_equal"}) == []

# %% [markdown]
# ## 3. The prototype refuses before the launch
#
# The page's `check_against_prototype` guards a mean wrapper whose kernel is `mean_kernel`
# (kb_tools.kernels.rows). An int64 input and a rank-9 input are refused with a message before
# any launch (the launch count does not move); fp32 runs and passes its criterion. The page's
# Don't "accepts anything": its int64 mean is computed and truncated into an int64 output,
# where torch itself refuses the call.

# %%
check = page_code.load(KB, "op-prototype", "check_against_prototype")["check_against_prototype"]
KERNELS = [b for b in BACKENDS if b in backends.KERNEL_BACKENDS]
for backend in KERNELS:
    dev = backends.device(backend)
    launch_mean = rows.mean_launcher(backend=backend)
    before = backends.launches["mean_kernel"]
    for bad in (torch.arange(6).reshape(2, 3), torch.zeros([1] * 9)):
        try:
            check(bad.to(dev))
            raise AssertionError(f"{bad.dtype} of rank {bad.ndim} passed the prototype")
        except (TypeError, ValueError) as exc:
            print(f"{backend}: refused: {exc}")
    assert backends.launches["mean_kernel"] == before
    x = torch.randn(3, 50, generator=GEN)
    check(x)
    y = torch.empty(3, device=dev)
    launch_mean(x.to(dev), y, 50, 1, 3, 256)
    assert judge("mix_tolerance", y.cpu(), x.mean(-1)).passed
    dont = page_code.load(KB, "op-prototype", "mean_wrapper", role="dont",
                          bind={"mean_kernel": lambda x, y, n: launch_mean(x, y, n, 1, 1, 256)})["mean_wrapper"]
    ints = torch.tensor([1, 2, 2, 2], dtype=torch.int64)
    got = dont(ints.to(dev))
    try:
        torch.mean(ints)
        raise AssertionError("torch.mean took an int64 tensor")
    except RuntimeError as exc:
        torch_says = str(exc).splitlines()[0]
    print(f"{backend}: Don't returns {got.item()} ({got.dtype}) for mean([1, 2, 2, 2]) = 1.75; torch: {torch_says}")
    assert got.dtype == torch.int64 and got.item() != 1.75
