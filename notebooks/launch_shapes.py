# %% [markdown]
# # One launch, planned from metadata: lists, concatenation, shape versions and the core split
#
# **Rules** ([tensorlist-fixed-slots](../kb/constraints/tensorlist-fixed-slots.md),
# [cat-lowering](../kb/patterns/cat-lowering.md),
# [dynamic-shape-versions](../kb/patterns/dynamic-shape-versions.md),
# [multicore-tiling-balance](../kb/patterns/multicore-tiling-balance.md); seed 001 §3.3,
# seed 003, seed 004 §2.3, §3.2): a TensorList travels as fixed slots in one launch; a
# concatenation is a copy plan run in one kernel; a dynamic shape picks one of a finite set of
# compile-time versions from metadata; tiles and cores come from the element count and the
# queried resources, every element covered exactly once.
#
# The host code is each page's own block, run as printed (`kb_tools.kernels.page_code`), with
# the kernel name it calls bound to a Triton kernel of the tile structure the page describes.
# `cpu` is torch (the reference); `triton` runs the kernels on Triton's CPU interpreter, `cuda`
# / `npu` compiled where lent. Work is counted — launches, versions, writes per element —
# never timed.

# %%
from kb_tools.outputs.page_facts import rules_shown
from kb_tools.runtime import backends

BACKENDS = backends.announce(backends.KNOWN)  # first output: the backends that run here, and why others do not
rules_shown("launch_shapes")  # the fact box and invariants of the pages this notebook proves

# %%
import numpy as np
import pandas as pd
import torch
from IPython.display import display

from kb_tools.kb.root import find_root
from kb_tools.kernels import balance, cat, page_code, rows, slots
from kb_tools.numerics.criteria import judge

KERNELS = backends.kernel_backends(BACKENDS)  # announce said which run and why the others do not
KB = find_root(None) / "kb"
GEN = torch.Generator().manual_seed(7)

# %% [markdown]
# ## 1. A TensorList in fixed slots: one launch whatever the length
#
# The page's Do wrapper pads the lists to `B_MAX = 8` slots (a padded slot repeats slot 0 with
# `n = 0`) and launches `foreach_add_kernel` once; the Don't launches once per element. Both
# are compared bit for bit with `torch._foreach_add` (alpha = 2 is exact in fp32).

# %%
counts = {}
for backend in KERNELS:
    dev = backends.device(backend)
    do = page_code.load(KB, "tensorlist-fixed-slots", "foreach_add_wrapper",
                        bind={"foreach_add_kernel": slots.slots_launcher(backend=backend)})["foreach_add_wrapper"]
    dont = page_code.load(KB, "tensorlist-fixed-slots", "foreach_add_wrapper", role="dont",
                          bind={"foreach_add_kernel": slots.per_tensor_launcher(backend=backend)})["foreach_add_wrapper"]
    for length in (1, 3, 8):
        xs = [torch.randn(17 * (k + 1), generator=GEN).to(dev) for k in range(length)]
        ys = [torch.randn(17 * (k + 1), generator=GEN).to(dev) for k in range(length)]
        want = torch._foreach_add([x.cpu() for x in xs], [y.cpu() for y in ys], alpha=2)
        before = dict(backends.launches)
        got = do(xs, ys, 2)
        one = backends.launches["foreach_add_kernel"] - before.get("foreach_add_kernel", 0)
        got_dont = dont(xs, ys, 2)
        many = backends.launches["add_one_tensor_kernel"] - before.get("add_one_tensor_kernel", 0)
        assert all(torch.equal(g.cpu(), w) for g, w in zip(got, want)), (backend, length)
        assert all(torch.equal(g.cpu(), w) for g, w in zip(got_dont, want)), (backend, length)
        counts[backend, length] = {"fixed slots: launches": one, "per element: launches": many}
        assert one == 1 and many == length
    try:
        do([torch.randn(3).to(dev)] * 9, [torch.randn(3).to(dev)] * 9)
        raise AssertionError("a list longer than B_MAX was accepted")
    except ValueError as exc:
        print(f"{backend}: 9 tensors refused before any launch: {exc}")
if counts:
    display(pd.DataFrame(counts).T.rename_axis(["backend", "list length"]))

# %% [markdown]
# ## 2. Concatenation: the page's copy plan, run by one kernel
#
# `cat_kernel` takes up to four inputs as slots and the plan as a table of (input, source
# offset, destination offset, length); each program moves one block as unsigned words of the
# element's width, so bool, bfloat16 and int64 take the same path. The plan is the page's
# `cat_copy_plan`; seed 004's `lower_cat` as printed is replayed too: rejected where its blocks
# leave the tensors, wrong where they stay inside.

# %%
cat_copy_plan = page_code.load(KB, "cat-lowering", "cat_copy_plan")["cat_copy_plan"]
CASES = [((2, 3), 0, (2, 2)), ((2, 3), 0, (2, 5)), ((2, 3), 1, (3, 1)), ((2, 3), -1, (3, 3)), ((3, 4, 5), 1, (4, 2, 1)),
         ((3, 4, 5), 2, (5, 5)), ((3, 4, 5), 0, (3, 0, 2)), ((2, 1, 3), 1, (1, 0, 4))]
DTYPES = (torch.float32, torch.bool, torch.bfloat16, torch.int64, torch.int8, torch.float16)
cat_rows = {}
for backend in KERNELS:
    dev = backends.device(backend)
    for shape, dim, extents in CASES:
        axis = dim % len(shape)
        tensors = []
        for extent in extents:
            s = list(shape)
            s[axis] = extent
            tensors.append(torch.randn(s, generator=GEN) * 100)
        shapes = [t.shape for t in tensors]
        plan = cat_copy_plan(shapes, dim)
        for dtype in DTYPES:
            typed = [t.to(dtype).to(dev) for t in tensors]
            want = torch.cat([t.cpu() for t in typed], dim)
            fill = float("nan") if dtype.is_floating_point else None  # an element the plan misses is NaN, not stale
            got = cat.cat(typed, plan, want.shape, backend=backend, fill=fill)  # bytes (one plan serves every dtype)
            assert got.dtype == want.dtype and torch.equal(got.cpu(), want), (backend, shape, dim, extents, dtype)
        try:
            seed = cat.cat([t.to(dev) for t in tensors], cat.seed_plan(shapes, dim), want.shape, backend=backend,
                           fill=float("nan"))  # an element the plan never writes counts as wrong
            seed_result = f"{int((seed.cpu() != torch.cat(tensors, dim)).sum())} wrong"
        except ValueError:
            seed_result = "leaves the tensors"
        cat_rows[backend, str(shape), dim, str(extents)] = {"blocks": len(plan), "page plan": "bit-exact, 6 dtypes",
                                                           "seed 004 plan": seed_result}
if cat_rows:
    table = pd.DataFrame(cat_rows).T
    display(table)
    for (backend, shape, dim, extents), row in table.iterrows():  # the page: right only for outer = 1, equal extents
        dims = eval(shape)  # noqa: S307 - our own table's labels
        axis = dim % len(dims)
        predicted_right = all(d == 1 for d in dims[:axis]) and len(set(eval(extents))) == 1  # noqa: S307
        assert (row["seed 004 plan"] == "0 wrong") == predicted_right, (shape, dim, extents, row["seed 004 plan"])
    print(f"seed 004's plan: right in {(table['seed 004 plan'] == '0 wrong').sum()} of {len(table)} cases, as the page predicts")

# %% [markdown]
# ## 3. Shape versions: a finite set, picked from metadata
#
# The page's `mean_wrapper` picks the tile with `pick_tile(n)` (buckets 256, 1024, 4096, then the
# general 2048) and launches `mean_kernel` once; the tile is a compile-time constant, so each
# distinct tile is one compiled version. Sweeping the reduced length across every bucket edge
# uses three versions, and each result passes the fp32 criterion against `torch.mean`. Choosing
# the version from the data instead (the page's Don't, WB106) makes the version of one shape
# depend on its values.

# %%
ns_rows = page_code.load(KB, "dynamic-shape-versions", "mean_wrapper")
pick_tile = ns_rows["pick_tile"]
EDGES = [1, 255, 256, 257, 1024, 1025, 4096, 4097, 6000]
for backend in KERNELS:
    versions = []
    mean_wrapper = page_code.load(KB, "dynamic-shape-versions", "mean_wrapper",
                                  bind={"mean_kernel": rows.mean_launcher(backend=backend, versions=versions)})["mean_wrapper"]
    before = backends.launches["mean_kernel"]
    for n in EDGES:
        x = torch.randn(2, n, generator=GEN)
        got = mean_wrapper(x.to(backends.device(backend)), -1)
        assert judge("mix_tolerance", got.cpu(), torch.mean(x, -1)).passed, (backend, n)
    for shape, dim in (((), 0), ((3, 0), 1), ((4, 5, 6), 1)):
        x = torch.randn(shape, generator=GEN)
        with np.errstate(invalid="ignore"):  # the empty axis: 0/0, NaN as torch.mean gives
            got = mean_wrapper(x.to(backends.device(backend)), dim)
        want = torch.mean(x, dim)
        assert got.shape == want.shape and torch.allclose(got.cpu(), want, rtol=2**-10, atol=2**-16, equal_nan=True)
    launched = backends.launches["mean_kernel"] - before
    print(f"{backend}: {launched} calls, {launched} launches, versions used {sorted(set(versions))} for "
          f"lengths {EDGES} (and a 0-d, an empty and a middle-axis case)")
    assert launched == len(EDGES) + 3 and set(versions) == {256, 1024, 2048}


def pick_by_data(x):
    """The Don't's choice: a version decided by reading the tensor (WB106)."""
    return 2048 if float(x.abs().max()) > 1e4 else pick_tile(x.shape[-1])


same_shape = [torch.randn(1000, generator=GEN), torch.randn(1000, generator=GEN) * 1e5]
picked_by_data = {pick_by_data(x) for x in same_shape}
print("one shape (1000,), versions chosen from the data:", sorted(picked_by_data), "; from metadata:", {pick_tile(1000)})
assert len(picked_by_data) == 2

# %% [markdown]
# ## 4. The core split: every element once, cores from the work
#
# The page's `tiling` gives tileElements, blockDim and elementsPerCore; `scale_kernel` runs
# program c as core c over its own range, tile by tile, and counts every element it writes.
# A small UB (tiles of 256 elements) keeps the interpreter's share small. The Don't — 40 cores
# always and `n // 40` elements each — leaves elements unwritten and starts cores off the
# 256-element alignment.

# %%
tiling = page_code.load(KB, "multicore-tiling-balance", "tiling")["tiling"]
UB, CORES, WIDTH = 8 * 1024 + 256 * 9, 8, 4
split_rows = {}
for backend in KERNELS:
    dev = backends.device(backend)
    for n in (0, 100, 1000, 5000):
        t = tiling(n, WIDTH, UB, CORES)
        x = torch.randn(n, generator=GEN).to(dev)
        y, hits = balance.run_split(x, t["blockDim"], t["elementsPerCore"], t["tileElements"], backend=backend)
        assert torch.equal(y.cpu(), 2 * x.cpu()) and bool((hits == 1).all()), (backend, n)
        assert t["elementsPerCore"] % 256 == 0 and t["blockDim"] <= max(1, -(-n // t["tileElements"]))
        bad_y, bad_hits = balance.run_split(x, 40, n // 40, 256, backend=backend)
        split_rows[backend, n] = {**t, "written once": int((hits == 1).sum()),
                                  "Don't: cores": 40, "Don't: unwritten": int((bad_hits == 0).sum()),
                                  "Don't: cores starting off 256": sum(1 for c in range(40) if c * (n // 40) % 256)}
    assert split_rows[backend, 100]["Don't: unwritten"] > 0 and split_rows[backend, 100]["blockDim"] == 1
    assert split_rows[backend, 1000]["Don't: cores starting off 256"] > 0
if split_rows:
    display(pd.DataFrame(split_rows).T.rename_axis(["backend", "n"]))
print("tiling(16_777_216, 4, 192 KiB, 40) =", tiling(16_777_216, 4, 192 * 1024, 40))
assert tiling(16_777_216, 4, 192 * 1024, 40) == {"tileElements": 16384, "blockDim": 40, "elementsPerCore": 419584}
