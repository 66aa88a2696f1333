# %% [markdown]
# # The wrapper boundary: the callable is wrapper + kernel
#
# Rule ([wrapper-boundary](../kb/constraints/wrapper-boundary.md), seed 003): a delivered
# `*_wrapper` may only validate its arguments, read metadata, derive Python integers, allocate
# its declared outputs with `torch.empty` and launch its one kernel once. Every cast,
# transpose, `contiguous`, reshape, pad or concatenation belongs inside the kernel, because
# each one is a real device kernel inside the measured window.
#
# This notebook takes softmax over a non-last dimension, fp16 in and out, written twice:
# the seed's anti-pattern (the host builds a canonical fp32 contiguous 2-D input) and the
# compliant wrapper (the kernel reads the native dtype and the strides itself). It shows the
# static audit's findings, the runtime dispatch trace, the share of the callable's time
# spent outside the kernel on each backend, and the "kernel faster, callable slower" effect.

# %%
import statistics
import time
from pathlib import Path

import matplotlib.pyplot as plt
import torch

from kb_tools import backends
from kb_tools.audit import audit_path, audit_source
from kb_tools.trace import trace_call

BACKENDS = backends.announce()
torch.manual_seed(0)
ROOT = Path.cwd().parent if Path.cwd().name == "notebooks" else Path.cwd()

# %% [markdown]
# ## The two wrappers
#
# On the CPU the "kernel" is one Python function: the torch operators inside it are the
# kernel's work and the trace attributes them to the launch. The anti-pattern's kernel gets
# the convenient input (fp32, contiguous, reduced axis last); the compliant kernel gets the
# caller's fp16 tensor and reduces along `dim` through its stride, widening to fp32 inside.

# %%
ANTI_SRC = '''
import torch

def rows_kernel(x_2d, y_2d):
    torch.softmax(x_2d, dim=-1, out=y_2d)

def softmax_anti_wrapper(x, dim=-1):
    out_dtype = x.dtype
    dim = dim % x.ndim
    d = x.shape[dim]
    m = x.numel() // d
    rest = [s for i, s in enumerate(x.shape) if i != dim]
    x32 = x.to(torch.float32)
    xt = x32.movedim(dim, -1).contiguous()
    x2d = xt.reshape(m, d)
    y2d = torch.empty(m, d, dtype=torch.float32, device=x.device)
    rows_kernel(x2d, y2d)
    yt = y2d.reshape(*rest, d)
    y = yt.movedim(-1, dim).contiguous()
    return y.to(out_dtype)
'''

GOOD_SRC = '''
import torch

def strided_kernel(x, y, dim):
    y.copy_(torch.softmax(x, dim=dim, dtype=torch.float32))

def softmax_good_wrapper(x, dim=-1):
    if x.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise TypeError(f"unsupported dtype {x.dtype}")
    dim = dim % x.ndim
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    strided_kernel(x, y, dim)
    return y
'''


def load(src, name):
    namespace = {}
    exec(compile(src, name, "exec"), namespace)
    return namespace


anti, good = load(ANTI_SRC, "<anti-pattern>"), load(GOOD_SRC, "<compliant>")

# %% [markdown]
# ## Static view: `kbt audit`
#
# The audit parses the source (it never runs it). The anti-pattern gives the seed's six host
# operations; the compliant wrapper gives none. The catalog's PyPTO-Pro-style files in
# `ops/wrappers/` give the same verdicts.

# %%
static_anti = audit_source(ANTI_SRC, "<anti-pattern>", launchers=["rows_kernel"]).findings
static_good = audit_source(GOOD_SRC, "<compliant>", launchers=["strided_kernel"]).findings
for f in static_anti:
    print(f)
print(f"compliant wrapper: {len(static_good)} findings")
assert [f.code for f in static_anti] == ["WB101", "WB102", "WB103", "WB103", "WB102", "WB101"]
assert static_good == []

catalog = {p.name: audit_path(p).findings for p in sorted((ROOT / "ops" / "wrappers").glob("*.py"))}
for name, findings in catalog.items():
    print(f"ops/wrappers/{name}: {len(findings)} findings {[f.code for f in findings]}")
assert len(catalog["softmax_antipattern.py"]) == 6 and catalog["softmax_wrapper.py"] == []

# %% [markdown]
# ## Runtime view: what each wrapper dispatches outside its kernel
#
# A `TorchDispatchMode` lists every ATen operator; those dispatched while the kernel's frame
# is on the stack belong to the launch, the rest to the wrapper, with their source line and
# the profiler's time. The same six host operations appear, at the same lines the audit
# named; the compliant wrapper dispatches only its output allocation.

# %%
SHAPE, DIM = (32, 512, 64), 1
traces = {}
for backend in BACKENDS:
    x = torch.randn(SHAPE, device=backend).half()
    ref = torch.softmax(x.float(), DIM)
    t_anti = trace_call(anti["softmax_anti_wrapper"], x, DIM, kernels=[anti["rows_kernel"]], backend=backend)
    t_good = trace_call(good["softmax_good_wrapper"], x, DIM, kernels=[good["strided_kernel"]], backend=backend)
    traces[backend] = (t_anti, t_good)
    print(f"### {backend}: anti-pattern\n{t_anti.table()}\n\n### {backend}: compliant\n{t_good.table()}\n")
    assert t_anti.host_operations() == [(f.line, f.code) for f in static_anti]
    assert t_good.violations == [] and [o.op for o in t_good.wrapper_ops] == ["empty.memory_format"]
    for wrapper in (anti["softmax_anti_wrapper"], good["softmax_good_wrapper"]):
        out = wrapper(x, DIM)
        assert out.dtype == torch.float16 and torch.allclose(out.float(), ref, atol=2e-3)

# %% [markdown]
# ## The cost: share of the callable's time spent outside the kernel
#
# Timed without the profiler: the whole callable, and the kernel alone on the inputs its
# wrapper hands it (median of repeats). The difference is what the wrapper adds.

# %%
def median_ms(fn, repeats=15):
    sync = torch.cuda.synchronize if any(b == "cuda" for b in BACKENDS) and torch.cuda.is_available() else (lambda: None)
    fn()
    times = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


measured = {}
for backend in BACKENDS:
    x = torch.randn(SHAPE, device=backend).half()
    d = SHAPE[DIM]
    x2d = x.float().movedim(DIM, -1).contiguous().reshape(-1, d)
    y2d = torch.empty_like(x2d)
    y = torch.empty_like(x)
    row = {
        "anti callable": median_ms(lambda: anti["softmax_anti_wrapper"](x, DIM)),
        "anti kernel": median_ms(lambda: anti["rows_kernel"](x2d, y2d)),
        "good callable": median_ms(lambda: good["softmax_good_wrapper"](x, DIM)),
        "good kernel": median_ms(lambda: good["strided_kernel"](x, y, DIM)),
    }
    row["anti outside"] = max(0.0, 1 - row["anti kernel"] / row["anti callable"])
    row["good outside"] = max(0.0, 1 - row["good kernel"] / row["good callable"])
    measured[backend] = row
    print(f"{backend}: anti-pattern kernel {row['anti kernel']:.2f} ms, callable {row['anti callable']:.2f} ms "
          f"({row['anti outside']:.0%} outside the kernel); compliant kernel {row['good kernel']:.2f} ms, "
          f"callable {row['good callable']:.2f} ms ({row['good outside']:.0%} outside)")
    assert row["anti outside"] > row["good outside"]

fig, ax = plt.subplots(figsize=(6, 3))
labels = [f"{b}\n{w}" for b in measured for w in ("anti-pattern", "compliant")]
shares = [measured[b][k] * 100 for b in measured for k in ("anti outside", "good outside")]
ax.bar(labels, shares, color=["tab:red", "tab:green"] * len(measured))
ax.set_ylabel("% of callable time outside the kernel")
ax.set_title("Wrapper share of the callable (seed 003 measured 10-62 %)")
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Kernel faster, callable slower
#
# The anti-pattern's kernel works on the convenient layout, so on its own it can be the
# faster kernel — and still the slower callable, because the host work around it costs more
# than the kernel saves. The unit of performance is wrapper plus kernel.

# %%
for backend, row in measured.items():
    kernel_ratio = row["good kernel"] / row["anti kernel"]
    callable_ratio = row["anti callable"] / row["good callable"]
    print(f"{backend}: compliant kernel / anti-pattern kernel = {kernel_ratio:.2f}x; "
          f"anti-pattern callable / compliant callable = {callable_ratio:.2f}x")
    if kernel_ratio > 1 and callable_ratio > 1:
        print(f"{backend}: the anti-pattern has the faster kernel and the slower callable")
    else:
        print(f"{backend}: on this run the kernels do not split that way (kernel ratio {kernel_ratio:.2f}x)")
    assert row["anti callable"] > row["anti kernel"]

# %% [markdown]
# ## CUDA with a Triton kernel
#
# On a CUDA device with Triton, the compliant kernel is a Triton program that loads fp16
# through the reduced axis's stride and widens per row on chip; the launch dispatches no ATen
# operator, so the trace shows only the output allocation outside it.

# %%
def triton_reason():
    if "cuda" not in BACKENDS:
        return "no CUDA backend on this machine"
    try:
        import triton  # noqa: F401
    except ImportError as exc:
        return f"triton does not import ({exc})"
    return None


reason = triton_reason()
if reason:
    print(f"skipped the Triton kernel: {reason}")
else:
    import triton
    import triton.language as tl

    @triton.jit
    def softmax_strided(x_ptr, y_ptr, n, inner, sx_o, sx_n, sx_i, sy_o, sy_n, sy_i, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        o, i = pid // inner, pid % inner
        offs = tl.arange(0, BLOCK)
        mask = offs < n
        v = tl.load(x_ptr + o * sx_o + i * sx_i + offs * sx_n, mask=mask, other=float("-inf")).to(tl.float32)
        e = tl.exp(v - tl.max(v, 0))
        out = e / tl.sum(e, 0)
        tl.store(y_ptr + o * sy_o + i * sy_i + offs * sy_n, out.to(y_ptr.dtype.element_ty), mask=mask)

    def softmax_triton_wrapper(x, dim=1):
        if x.ndim != 3:
            raise ValueError("this demo kernel takes rank-3 input")
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        n, inner = x.shape[dim], x.shape[2] if dim == 1 else 1
        softmax_strided[(x.shape[0] * inner,)](x, y, n, inner, x.stride(0), x.stride(dim), x.stride(2),
                                               y.stride(0), y.stride(dim), y.stride(2), BLOCK=triton.next_power_of_2(n))
        return y

    x = torch.randn(SHAPE, device="cuda").half()
    t = trace_call(softmax_triton_wrapper, x, DIM, backend="cuda")
    print(t.table())
    assert [o.op for o in t.wrapper_ops] == ["empty.memory_format"]
    assert torch.allclose(softmax_triton_wrapper(x, DIM).float(), torch.softmax(x.float(), DIM), atol=2e-3)
