# %% [markdown]
# # Scalars, bit views and exact fast paths: what a kernel writes, bit for bit
#
# **Rules** ([scalar-operand-promotion](../kb/constraints/scalar-operand-promotion.md),
# [kernel-bit-reinterpretation](../kb/constraints/kernel-bit-reinterpretation.md),
# [exact-fast-paths](../kb/patterns/exact-fast-paths.md); seed 001 §1.4, §3.2.1–§3.2.2,
# seed 003): a tensor-scalar result has the framework's dtype and value, the scalar converted in
# the kernel; bytes are reinterpreted inside the kernel, within the allocation (the mask is
# `M = ceil(N/128)·16` bytes, not `ceil(N/8)`); p = 0 and p = 1 write exact zeros and ones,
# after every validation, and an empty output still gets its one launch.
#
# The host code is each page's own Do (and Don't) block, run as printed with the kernel name it
# calls bound to a Triton kernel (`kb_tools.kernels`). Backends: `cpu` is torch (the reference),
# `triton` the kernels on Triton's CPU interpreter, `cuda`/`npu` compiled where lent. Every
# comparison here is bit for bit, because every page here promises exactness.

# %%
from kb_tools.outputs.page_facts import rules_shown
from kb_tools.runtime import backends

BACKENDS = backends.announce(backends.KNOWN)  # first output: the backends that run here, and why others do not
rules_shown("bits_and_scalars")  # the fact box and invariants of the pages this notebook proves

# %%
import warnings

import numpy as np
import pandas as pd
import torch
from IPython.display import display

from kb_tools.kb.root import find_root
from kb_tools.kernels import bits, fastpaths, page_code, scalars

KERNELS = [b for b in BACKENDS if b in backends.KERNEL_BACKENDS]
KB = find_root(None) / "kb"
if not KERNELS:
    print("no Triton backend selected: only the cpu reference runs below")


def same_bits(a, b):
    """Equal dtype, shape and bytes (NaN payloads and -0.0 included)."""
    a, b = a.cpu().contiguous(), b.cpu().contiguous()
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.view(torch.uint8), b.view(torch.uint8))


# %% [markdown]
# ## 1. Tensor + scalar: the framework's dtype, the framework's value
#
# The page's `scalar_result_dtype` is held against `torch.result_type` for every dtype and scalar
# kind; keeping the tensor's dtype (the page's Don't) disagrees wherever a scalar of a higher
# category meets a lower tensor.

# %%
scalar_ns = page_code.load(KB, "scalar-operand-promotion", "add_wrapper")
scalar_result_dtype = scalar_ns["scalar_result_dtype"]
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64]
SCALARS = [True, 3, -1, 300, 2.5, float("nan")]
agree, kept_wrong = 0, 0
for dtype in DTYPES:
    for s in SCALARS:
        torch_says = torch.result_type(torch.empty(0, dtype=dtype), s)
        assert scalar_result_dtype(dtype, s) == torch_says, (dtype, s)
        agree += 1
        kept_wrong += dtype != torch_says
print(f"scalar_result_dtype == torch.result_type in {agree} of {agree} cases; keeping the tensor's dtype is wrong in {kept_wrong}")
assert kept_wrong > 0

# %% [markdown]
# The page's `add_wrapper` launches `add_scalar_kernel`, which converts the launch scalar to the
# computation dtype itself (fp32 for half types, int64 for integers, wrapping at the output's
# width on the store). Edge values: each dtype's extremes, an out-of-range integer scalar,
# NaN and ±inf. bfloat16 is left out of the kernel rows: Triton 3.9's interpreter truncates
# fp32 → bf16 where torch rounds to nearest even (examples/add rounds by hand).

# %%
KERNEL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int32, torch.int64, torch.float16, torch.float32,
                 torch.float64]


def edge_tensor(dtype):
    if dtype == torch.bool:
        return torch.tensor([True, False, True])
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    values = [info.min, info.max, 0, 1, -1 if dtype != torch.uint8 else 2]
    if dtype.is_floating_point:
        values += [float("nan"), float("inf"), -0.0, info.tiny]
    return torch.tensor(values, dtype=dtype)


def scalars_for(dtype):
    base = [True, 3, 300, -7] if dtype != torch.uint8 else [True, 3, 300]
    return base + ([2.5, float("inf"), float("nan")] if dtype.is_floating_point else [2.5])


rows = {}
for backend in KERNELS:
    add_wrapper = page_code.load(KB, "scalar-operand-promotion", "add_wrapper",
                                 bind={"add_scalar_kernel": scalars.add_launcher(backend=backend)})["add_wrapper"]
    for dtype in KERNEL_DTYPES:
        x = edge_tensor(dtype)
        for s in scalars_for(dtype):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the interpreter's numpy notes on the wrapping rows
                got = add_wrapper(x.to(backends.device(backend)), s)
            want = torch.add(x, s)
            assert same_bits(got, want), (backend, dtype, s, got, want)
            rows[backend, str(dtype).split(".")[1]] = rows.get((backend, str(dtype).split(".")[1]), 0) + 1
if rows:
    display(pd.Series(rows, name="cases bit-equal to torch.add"))

# %% [markdown]
# The Don't: the scalar made a tensor of x's dtype on the host (WB104 statically) and the output
# given x's dtype. `int32 + 2.5` comes back int32 with 2 added.

# %%
x = torch.arange(-3, 3, dtype=torch.int32)
for backend in KERNELS:
    dont = page_code.load(KB, "scalar-operand-promotion", "add_wrapper", role="dont",
                          bind={"add_scalar_kernel": scalars.host_scalar_launcher(backend=backend)})["add_wrapper"]
    got = dont(x.to(backends.device(backend)), 2.5)
    want = torch.add(x, 2.5)
    print(f"{backend}: Don't gives {got.dtype} {got.tolist()}, torch {want.dtype} {want.tolist()}")
    assert got.dtype != want.dtype and not torch.equal(got.double(), want.double())

# %% [markdown]
# ## 2. The mask inside the output: sized by what the generator writes
#
# The page's `bernoulli_wrapper` aliases the mask only when `N·B >= M`, `M = ceil(N/128)·16`.
# Each output below is the first `N·B` bytes of a 64-byte storage filled with `0xAB`: the bytes
# past `N·B` stand for the next allocation. The generator (`write_mask_kernel`, which reads the
# output pointer as uint8) writes `M` bytes wherever the wrapper sends them. Sized by the bits
# (`N·B >= ceil(N/8)`, the page's first pitfall), the small outputs alias and lose their
# neighbour's bytes.

# %%
CASES = [(torch.uint8, 15), (torch.uint8, 16), (torch.float16, 7), (torch.float16, 8),
         (torch.float32, 3), (torch.float32, 4), (torch.float64, 1), (torch.float64, 2)]
table = {}
for backend in KERNELS:
    written = []
    wrapper = page_code.load(KB, "kernel-bit-reinterpretation", "bernoulli_wrapper",
                             bind={"bernoulli_kernel": bits.mask_launcher(backend=backend, written=written)})["bernoulli_wrapper"]
    launch_mask = bits.mask_launcher(backend=backend, written=[])
    for dtype, n in CASES:
        width = torch.empty(0, dtype=dtype).element_size()
        m = -(-n // 128) * 16
        storage = torch.full((64,), 0xAB, dtype=torch.uint8, device=backends.device(backend))
        wrapper(storage[: n * width].view(dtype), 0.5, 1, 0)
        guard_rule = int((storage[n * width:] != 0xAB).sum())
        by_bits = torch.full((64,), 0xAB, dtype=torch.uint8, device=backends.device(backend))
        launch_mask(by_bits[: n * width].view(dtype), n, m, n * width >= -(-n // 8), 0.5, 1, 0)
        guard_bits = int((by_bits[n * width:] != 0xAB).sum())
        table[backend, f"{n} x {str(dtype).split('.')[1]}"] = {
            "N*B": n * width, "M": m, "aliased": written[-1].data_ptr() == storage.data_ptr(),
            "bytes past N*B written": guard_rule, "sized by bits: bytes past N*B written": guard_bits}
        assert guard_rule == 0, (backend, dtype, n)
        assert (guard_bits > 0) == (n * width < m), (backend, dtype, n)
if table:
    display(pd.DataFrame(table).T)

# %% [markdown]
# An int64 read as two int32 words: storage is little-endian, so the low word comes first.
# The values have non-zero and negative high words (the page's `word-order-tested`); assuming
# the high word first gets every one of them wrong.

# %%
values = torch.tensor([-5, 2**40 + 7, -(2**40) - 3, -(2**63), 2**63 - 1, 2**32], dtype=torch.int64)
for backend in KERNELS:
    x = values.to(backends.device(backend))
    right = bits.int64_from_words(x, backend=backend)
    wrong = bits.int64_from_words(x, backend=backend, high_first=True)
    print(f"{backend}: low word first exact {same_bits(right, values)}; high word first wrong in "
          f"{int((wrong.cpu() != values).sum())} of {values.numel()}")
    assert same_bits(right, values) and bool((wrong.cpu() != values).all())

# %% [markdown]
# ## 3. Exact fast paths
#
# The page's `bernoulli_wrapper` validates, chooses the mode from p and launches
# `bernoulli_kernel[None, block_dim]` once, `block_dim` from
# [multicore-tiling-balance](../kb/patterns/multicore-tiling-balance.md)'s `tiling`. The input's
# values are never read: p = 0 gives +0 even where x holds -1, -0.0, NaN or inf. "p = 0 means
# x·p" (a fill derived from the input) gives -0.0 and NaN.

# %%
tiling = page_code.load(KB, "multicore-tiling-balance", "tiling")["tiling"]


def block_dim_for(n, width):
    return tiling(n, width, 192 * 1024, 8)["blockDim"]


x_edge = torch.tensor([-1.0, -0.0, float("nan"), float("inf"), -float("inf"), 2.0, 5e-45])
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
for backend in KERNELS:
    wrapper = page_code.load(KB, "exact-fast-paths", "bernoulli_wrapper",
                             bind={"bernoulli_kernel": fastpaths.BernoulliLauncher(backend=backend),
                                   "block_dim_for": block_dim_for})["bernoulli_wrapper"]
    for dtype in FLOATS + [torch.int32, torch.uint8, torch.bool]:
        x = (x_edge.to(dtype) if dtype.is_floating_point else torch.tensor([-1, 0, 7]).to(dtype)).to(backends.device(backend))
        launched = backends.launches["bernoulli_kernel"]
        assert same_bits(wrapper(x, 0.0, 5, 0), torch.zeros(x.shape, dtype=dtype)), (backend, dtype)
        assert same_bits(wrapper(x, 1.0, 5, 0), torch.ones(x.shape, dtype=dtype)), (backend, dtype)
        # the page allocates with torch.empty, whose memory may already hold zeros: the constants
        # count only as the kernel's because it ran, once per call (its coverage: tests/triton_cases.py)
        assert backends.launches["bernoulli_kernel"] - launched == 2, (backend, dtype)
    for dtype in FLOATS:
        x = x_edge.to(dtype).to(backends.device(backend))
        with np.errstate(invalid="ignore"):
            by_arithmetic = fastpaths.zeros_by_arithmetic(x, 0.0, backend=backend)
        differ = int((by_arithmetic.cpu().view(torch.uint8) != 0).view(-1, x.element_size()).any(1).sum())
        print(f"{backend} {str(dtype):15s} p=0 exact +0 in every element; x*p differs in {differ} of {x.numel()}")
        assert differ >= 4  # -1 and -0.0 give -0.0, NaN and ±inf give NaN
    draws = wrapper(torch.empty(4096, device=backends.device(backend)), 0.25, 11, 4)
    share = float(draws.float().mean())
    print(f"{backend} p=0.25 over 4096 draws: share of ones {share:.4f}")
    assert set(draws.unique().tolist()) <= {0.0, 1.0} and abs(share - 0.25) < 5 * (0.25 * 0.75 / 4096) ** 0.5

# %% [markdown]
# An empty output is launched once, on one core (`tiling` gives blockDim 1 for N = 0), and
# invalid arguments are refused before any fast path — even when nothing would be written. The
# page's Don't returns zeros for p = 0 before it checks the offset.

# %%
dont = page_code.load(KB, "exact-fast-paths", "bernoulli_wrapper", role="dont")["bernoulli_wrapper"]
for backend in KERNELS:
    wrapper = page_code.load(KB, "exact-fast-paths", "bernoulli_wrapper",
                             bind={"bernoulli_kernel": fastpaths.BernoulliLauncher(backend=backend),
                                   "block_dim_for": block_dim_for})["bernoulli_wrapper"]
    before = backends.launches["bernoulli_kernel"]
    out = wrapper(torch.empty(0, 3, device=backends.device(backend)), 0.5, 1, 0)
    assert out.shape == (0, 3) and backends.launches["bernoulli_kernel"] - before == 1 and block_dim_for(0, 4) == 1
    for p, offset in ((1.5, 0), (float("nan"), 0), (0.0, 3)):
        try:
            wrapper(torch.empty(0, device=backends.device(backend)), p, 1, offset)
            raise AssertionError(f"p={p}, offset={offset} was accepted")
        except ValueError as exc:
            print(f"{backend}: p={p}, offset={offset}: refused ({exc})")
    print(f"{backend}: empty output launched {backends.launches['bernoulli_kernel'] - before} time(s), block_dim 1")
accepted = dont(torch.empty(4), 0.0, 1, 3)
print("the Don't accepts offset 3 for p = 0 and returns", accepted.tolist())
assert accepted.shape == (4,)
