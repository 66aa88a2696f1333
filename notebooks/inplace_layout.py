# %% [markdown]
# # In place, strided, and the fallback: Triton kernels that write only what they may
#
# **Rules** ([inplace-aliasing](../kb/constraints/inplace-aliasing.md),
# [layout-format](../kb/constraints/layout-format.md),
# [non-contiguous-fallback](../kb/patterns/non-contiguous-fallback.md); seed 001 §3.2.2–§3.2.3,
# §4, seed 004 §2.2): an output overlaps an input completely or not at all; a strided operand is
# read through its strides, never copied into another layout first; an output the mask may not
# alias gets its values through its own strides, fp64 as int64 bit patterns, and nothing
# outside the view is written.
#
# Each kernel below is plain Triton, run on every backend present: `cpu` is torch's own result
# (the reference), `triton` the same kernel source on Triton's CPU interpreter, `cuda`/`npu` the
# compiled kernel where a device is lent. The interpreter is functional evidence only; nothing
# here is timed — the layout claim is counted in bytes moved.
#
# 1. torch's in-place refusals against the page's `check_inplace`;
# 2. full overlap is exact, partial overlap gives answers that change with the tile size;
# 3. a softmax along a non-innermost axis: strided reads against convert-compute-convert;
# 4. the fallback: strided expansion into a view, the guard region intact, fp64 bits kept.

# %%
from kb_tools.outputs.page_facts import rules_shown
from kb_tools.runtime import backends

BACKENDS = backends.announce(backends.KNOWN)  # first output: the backends that run here, and why others do not
rules_shown("inplace_layout")  # the fact box and invariants of the pages this notebook proves

# %%
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from kb_tools.kb.root import find_root
from kb_tools.kernels import inplace, page_code, strided
from kb_tools.memory.alias import can_alias, mask_size
from kb_tools.numerics.criteria import judge

KERNELS = backends.kernel_backends(BACKENDS)  # announce said which run and why the others do not
KB = find_root(None) / "kb"
RNG = torch.Generator().manual_seed(2026)


def on(backend, t):
    return t.to(backends.device(backend))


# %% [markdown]
# ## 1. Which calls may run at all
#
# torch decides from metadata whether an in-place or `out=` call is allowed. The page's
# `check_inplace` (run here as printed on the page) must refuse everything torch refuses; it is
# conservative on interleaved views, which share a span but no element.

# %%
check_inplace = page_code.load(KB, "inplace-aliasing", "check_inplace")["check_inplace"]
a = torch.randn(64, generator=RNG)
calls = {
    "out is x": (a, a),
    "out disjoint": (a, torch.empty(64)),
    "out = x[:] (same view)": (a, a[:]),
    "x = a[:-1], out = a[1:] (partial)": (a[:-1], a[1:]),
    "out expanded (stride 0)": (torch.randn(4, 1).expand(4, 4).contiguous(), torch.empty(4, 1).expand(4, 4)),
    "x = a[::2], out = a[1::2] (interleaved)": (a[::2], a[1::2]),
}
rows = {}
for name, (x, out) in calls.items():
    try:
        torch.add(x, 1, out=out)
        torch_says = "runs"
    except RuntimeError:
        torch_says = "refuses"
    try:
        ours = "same" if check_inplace(x, out) else "disjoint"
    except ValueError:
        ours = "refuses"
    rows[name] = {"torch": torch_says, "check_inplace": ours}
    if torch_says == "refuses":
        assert ours == "refuses", name
display(pd.DataFrame(rows).T)
assert rows["x = a[::2], out = a[1::2] (interleaved)"] == {"torch": "runs", "check_inplace": "refuses"}
try:
    torch.arange(4).add_(0.5)
    raise AssertionError("torch cast a float result into an int64 tensor")
except RuntimeError as exc:
    print("dtype kept in place:", exc)

# %% [markdown]
# ## 2. Full overlap is exact; partial overlap depends on the launch geometry
#
# `add_one_kernel` loads a whole tile before it stores it, so `out is x` is safe. Given
# `x = a[:-1]`, `out = a[1:]` — the call torch refuses — each program reads one element its
# neighbour already wrote: the number of wrong elements is set by the tile size. That holds
# where the programs run one after another, as in Triton's interpreter; on a device they run
# at once and the count is also set by which program reaches its store first (it may be 0), so
# there it is shown, not asserted.

# %%
N = 200
base = torch.randn(N, generator=RNG)
expected = base + 1
wrong_partial = {}
for backend in BACKENDS:
    x = on(backend, base.clone())
    if backend == "cpu":
        x.add_(1)
    else:
        inplace.add_one(x, x, backend=backend)
    assert torch.equal(x.cpu(), expected), backend
    for block in (16, 64):
        if backend == "cpu":
            continue
        a = on(backend, base.clone())
        inplace.add_one(a[:-1], a[1:], backend=backend, block=block)
        wrong_partial[backend, block] = int((a[1:].cpu() != base[:-1] + 1).sum())
IN_ORDER = [b for b in KERNELS if b == "triton"]  # the interpreter runs program 0, then 1, ...: no race
for (backend, block), wrong in wrong_partial.items():
    print(f"{backend:6s} partial overlap, tile {block:3d}: {wrong:3d} of {N - 1} elements wrong")
    if backend in IN_ORDER:
        assert wrong > 0
for backend in IN_ORDER:
    assert wrong_partial[backend, 16] != wrong_partial[backend, 64], "the answer should move with the tile"
print("out is x: exact on", ", ".join(BACKENDS))

# %% [markdown]
# ## 3. A softmax along a non-innermost axis
#
# `softmax_kernel` takes the axis's stride as a launch scalar, so a transposed view is read
# where it lies. The forbidden route makes the axis innermost with a contiguous copy, runs the
# same kernel and copies back: the same numbers for three times the bytes. A kernel that ignores
# the strides (reads the view's storage as if it were contiguous) is simply wrong.

# %%
x0 = torch.randn(37, 23, generator=RNG)
table = {}
for backend in BACKENDS:
    for dim in (0, 1):
        for name, view in (("contiguous", x0), ("transposed", x0.t())):
            x = on(backend, view)
            reference = torch.softmax(view, dim)
            if backend == "cpu":
                continue  # torch.softmax is the reference
            y, moved = strided.softmax(x, dim, backend=backend)
            y_conv, moved_conv = strided.softmax_converted(x, dim, backend=backend)
            blind = torch.as_strided(x, x.shape, (x.shape[1], 1))  # the storage read as if contiguous
            y_blind, _ = strided.softmax(blind, dim, backend=backend)
            verdict = judge("mix_tolerance", y.cpu(), reference)
            table[backend, dim, name] = {
                "vs torch (mix_tolerance)": "pass" if verdict.passed else "fail",
                "bit-equal to converted": bool(torch.equal(y, y_conv)),
                "bytes strided": moved, "bytes converted": moved_conv,
                "wrong if strides ignored": int((~torch.isclose(y_blind.cpu(), reference, rtol=1e-5, atol=1e-7)).sum()),
            }
            assert verdict.passed and torch.equal(y, y_conv), (backend, dim, name)
            assert moved_conv == 3 * moved
            if name == "transposed":
                assert table[backend, dim, name]["wrong if strides ignored"] > 0
if table:
    display(pd.DataFrame(table).T)

# %% [markdown]
# ## 4. The fallback: strided expansion, the guard region intact, fp64 as bits
#
# A 2-D view with a storage offset and strides of 2 and 3 fails the dense-alias predicate, so the
# packed mask cannot live in it. `expand_to_view_kernel` expands an independent mask and stores
# each 0/1 through the view's strides (fp64 as int64 words, `1.0 = 0x3FF0000000000000`). Every
# storage element outside the view holds a sentinel that must survive. Writing as if the view
# were the dense output — the aliased path's assumption — corrupts the storage around it.

# %%
SENTINEL = -7.0
for dtype in (torch.float64, torch.float16, torch.float32):
    storage = torch.full((10, 16), SENTINEL, dtype=dtype)
    view = storage[1:9:2, 3:15:3]
    ok, reason = can_alias(view, mask_size(view.numel()))
    assert not ok
    mask = torch.randint(0, 256, (-(-view.numel() // 8),), dtype=torch.uint8, generator=RNG)
    bits = ((mask.repeat_interleave(8)[: view.numel()] >> torch.arange(8).repeat(len(mask))[: view.numel()]) & 1)
    want = bits.to(dtype).view(view.shape)
    for backend in KERNELS:
        s = on(backend, storage.clone())
        v = s[1:9:2, 3:15:3]
        strided.expand_to_view(on(backend, mask), v, backend=backend)
        outside = int((s != SENTINEL).sum()) - int((v != SENTINEL).sum())
        assert torch.equal(v.cpu(), want) and outside == 0, (backend, dtype)
        s_bad = on(backend, storage.clone())
        strided.expand_to_view(on(backend, mask), s_bad[1:9:2, 3:15:3], backend=backend, dense=True)
        good_view = torch.equal(s_bad[1:9:2, 3:15:3].cpu(), want)
        bad_outside = int((s_bad != SENTINEL).sum()) - int((s_bad[1:9:2, 3:15:3] != SENTINEL).sum())
        print(f"{backend:6s} {str(dtype):14s} fallback: view exact, 0 elements outside written | "
              f"dense assumption: view exact {good_view}, {bad_outside} elements outside the view overwritten")
        assert bad_outside > 0 and not good_view
    print(f"  ({reason})")

# %% [markdown]
# The write-back of any fp64 result moves bits. The values below are chosen to break a value
# conversion: a NaN with a payload, -0.0, 1e300, the smallest subnormal and 1 + 2^-40. The page's
# `write_back` (the ACLNN-level harness, run as printed) and the in-kernel `write_back_kernel`
# keep every bit; the page's "Don't" — a copy through float32 — does not.

# %%
src = torch.tensor([0.0, -0.0, 1e300, 5e-324, 1 + 2**-40, -1.5], dtype=torch.float64)
src.view(torch.int64)[0] = 0x7FF0000000000123  # a NaN with a payload
write_back_page = page_code.load(KB, "non-contiguous-fallback", "write_back")["write_back"]
for backend in BACKENDS:
    storage = on(backend, torch.zeros(6, 4, dtype=torch.float64))
    out = storage[::2, 1:3]
    if backend == "cpu":
        write_back_page(out, src)
    else:
        strided.write_back(on(backend, src), out, backend=backend)
    changed = int((out.cpu().contiguous().view(torch.int64).flatten() != src.view(torch.int64)).sum())
    via32 = torch.zeros(6, 4, dtype=torch.float64)[::2, 1:3]
    via32.copy_(src.to(torch.float32).view(via32.shape))
    changed_via32 = int((via32.contiguous().view(torch.int64).flatten() != src.view(torch.int64)).sum())
    print(f"{backend:6s} int64 bits: {changed} of {src.numel()} patterns changed; through float32: {changed_via32} changed")
    assert changed == 0 and changed_via32 >= 3
