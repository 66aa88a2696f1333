"""Every Triton kernel of kb_tools against its CPU path, run in a process that interprets
(TRITON_INTERPRET=1): bit for bit where the kernel's page promises exactness, else by the
operator's criterion. ``python tests/triton_cases.py`` prints one JSON object: each case's
error (null when it held) and the kernels launched, which tests/test_triton_kernels.py reads.

Each case imports its kernel module itself, so this file can be imported (for the case names)
by a process that does not interpret.
"""

from __future__ import annotations

import json
import sys
import traceback
import warnings

BACKEND = "triton"


def _torch():
    import torch

    return torch


def _same_bits(a, b):
    torch = _torch()
    a, b = a.cpu().contiguous(), b.cpu().contiguous()
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a.view(torch.uint8), b.view(torch.uint8))


def _sentinel(n, dtype):
    """n elements of ``dtype`` whose every byte is 0xA5 (neither 0 nor 1 in any dtype): an output
    a kernel must overwrite, where torch.empty may hand back memory that already holds zeros."""
    torch = _torch()
    return torch.full((n * torch.empty(0, dtype=dtype).element_size(),), 0xA5, dtype=torch.uint8).view(dtype)


def _kb():
    from kb_tools.kb.root import find_root

    return find_root(None) / "kb"


def add_one():
    """inplace-aliasing: out is x, read before written: exact."""
    from kb_tools.kernels import inplace

    torch = _torch()
    x = torch.randn(300, generator=torch.Generator().manual_seed(1))
    want = x + 1
    inplace.add_one(x, x, backend=BACKEND, block=64)
    assert _same_bits(x, want)


def softmax_strided():
    """layout-format: strided softmax within fp32/fp16 mix_tolerance of torch, bit-equal to the
    converted route."""
    from kb_tools.kernels import strided
    from kb_tools.numerics.criteria import judge

    torch = _torch()
    for dtype in (torch.float32, torch.float16):
        x = torch.randn(19, 33, generator=torch.Generator().manual_seed(2)).to(dtype)
        for view in (x, x.t()):
            for dim in (0, 1):
                y, _ = strided.softmax(view, dim, backend=BACKEND)
                converted, _ = strided.softmax_converted(view, dim, backend=BACKEND)
                assert judge("mix_tolerance", y, torch.softmax(view.float(), dim).to(dtype)).passed, (dtype, dim)
                assert _same_bits(y, converted)


def expand_to_view():
    """non-contiguous-fallback: strided expansion exact, nothing outside the view written."""
    from kb_tools.kernels import strided

    torch = _torch()
    for dtype in (torch.float64, torch.float32, torch.bfloat16, torch.uint8):
        storage = torch.full((9, 12), 7, dtype=dtype)
        view = storage[1::2, 2:11:4]
        mask = torch.randint(0, 256, (-(-view.numel() // 8),), dtype=torch.uint8, generator=torch.Generator().manual_seed(3))
        bits = torch.tensor([(int(mask[i // 8]) >> (i % 8)) & 1 for i in range(view.numel())]).to(dtype).view(view.shape)
        untouched = storage.clone()
        strided.expand_to_view(mask, view, backend=BACKEND, block=8)
        assert _same_bits(view, bits), dtype
        untouched[1::2, 2:11:4] = bits
        assert _same_bits(storage, untouched), dtype


def write_back():
    """non-contiguous-fallback: any bit pattern lands unchanged through the view's strides."""
    from kb_tools.kernels import strided

    torch = _torch()
    for dtype in (torch.float64, torch.float16, torch.bool, torch.int32):
        src = torch.randint(-100, 100, (6,), generator=torch.Generator().manual_seed(4)).to(dtype)
        if dtype == torch.float64:
            src.view(torch.int64)[0] = 0x7FF0000000000123
        out = torch.zeros(6, 4, dtype=dtype)[::2, 1:3]
        strided.write_back(src, out, backend=BACKEND)
        assert _same_bits(out.reshape(-1), src), dtype


def mask_generator():
    """kernel-bit-reinterpretation: the mask written through the output's uint8 view is the same
    M bytes as the independent buffer, and nothing past them."""
    from kb_tools.kernels import bits

    torch = _torch()
    written = []
    launch = bits.mask_launcher(backend=BACKEND, written=written)
    storage = torch.full((48,), 0xAB, dtype=torch.uint8)
    out = storage[:32].view(torch.float32)
    launch(out, 8, 16, True, 0.5, 3, 4)
    launch(out, 8, 16, False, 0.5, 3, 4)
    assert torch.equal(storage[:16], written[1]) and bool((storage[16:] == 0xAB).all())
    assert len(set(written[1].tolist())) > 4


def int64_words():
    """kernel-bit-reinterpretation: int64 from its two int32 words, low word first: exact."""
    from kb_tools.kernels import bits

    torch = _torch()
    values = torch.tensor([-5, 2**40 + 7, -(2**40) - 3, -(2**63), 2**63 - 1, 0], dtype=torch.int64)
    assert _same_bits(bits.int64_from_words(values, backend=BACKEND), values)


def add_scalar():
    """scalar-operand-promotion: bit-equal to torch.add for each dtype and scalar kind."""
    from kb_tools.kernels import scalars

    torch = _torch()
    launch = scalars.add_launcher(backend=BACKEND)
    for dtype in (torch.bool, torch.int8, torch.int32, torch.int64, torch.float16, torch.float32, torch.float64):
        x = torch.tensor([1, 0, 1]).to(dtype) if dtype == torch.bool else torch.tensor([-3, 0, 5, 100]).to(dtype)
        for s in (True, 3, 300, 2.5, float("inf")):
            want = torch.add(x, s, alpha=2) if not (dtype == torch.bool and s is True) else torch.add(x, s)
            alpha = 1 if dtype == torch.bool and s is True else 2
            y = torch.empty(x.shape, dtype=want.dtype)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                launch(x, y, x.numel(), s, alpha)
            assert _same_bits(y, want), (dtype, s)


def add_scalar_tensor():
    """The Don't's kernel does what it says: x + alpha * s[0] in x's dtype."""
    from kb_tools.kernels import scalars

    torch = _torch()
    x = torch.arange(-3, 3, dtype=torch.int32)
    s = torch.tensor([2], dtype=torch.int32)
    y = torch.empty_like(x)
    scalars.host_scalar_launcher(backend=BACKEND)(x, s, y, x.numel(), 3)
    assert _same_bits(y, x + 3 * s)


def bernoulli_modes():
    """exact-fast-paths: p = 0 and 1 exact, p = 0.3 draws 0/1 at the right rate, empty launched."""
    from kb_tools.kernels import fastpaths

    torch = _torch()
    launcher = fastpaths.BernoulliLauncher(backend=BACKEND)
    for dtype in (torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.bool):
        out = _sentinel(100, dtype)
        launcher[None, 3](out, 100, 0.0, 1, 0, fastpaths.ZEROS)
        assert _same_bits(out, torch.zeros(100, dtype=dtype))
        launcher[None, 3](out, 100, 1.0, 1, 0, fastpaths.ONES)
        assert _same_bits(out, torch.ones(100, dtype=dtype))
    draws = _sentinel(2000, torch.float32)
    launcher[None, 4](draws, 2000, 0.3, 9, 4, fastpaths.RANDOM)
    assert set(draws.unique().tolist()) <= {0.0, 1.0} and abs(float(draws.mean()) - 0.3) < 5 * (0.21 / 2000) ** 0.5
    launcher[None, 1](torch.empty(0), 0, 0.5, 1, 0, fastpaths.RANDOM)


def bernoulli_stream():
    """random-op-verification: the mask is a function of (seed, offset); a shifted offset
    continues the same stream (draw k of offset 0 is draw 0 of offset k); another seed differs."""
    from kb_tools.kernels import bernoulli_mask

    first = bernoulli_mask.bernoulli_mask(3000, 0.3, 1234, 0, backend=BACKEND, block=256).cpu()
    assert _same_bits(first, bernoulli_mask.bernoulli_mask(3000, 0.3, 1234, 0, backend=BACKEND, block=1024).cpu())
    assert _same_bits(first[700:], bernoulli_mask.bernoulli_mask(2300, 0.3, 1234, 700, backend=BACKEND, block=512).cpu())
    assert not _same_bits(first, bernoulli_mask.bernoulli_mask(3000, 0.3, 4321, 0, backend=BACKEND).cpu())
    assert set(first.unique().tolist()) <= {0, 1} and abs(float(first.float().mean()) - 0.3) < 5 * (0.21 / 3000) ** 0.5
    assert bernoulli_mask.bernoulli_mask(0, 0.3, 1, 0, backend=BACKEND).numel() == 0


def zeros_by_arithmetic():
    """The counter-example computes x * p in fp32 and stores it: as torch would."""
    import numpy as np

    from kb_tools.kernels import fastpaths

    torch = _torch()
    x = torch.tensor([-1.0, -0.0, float("nan"), float("inf"), 2.0])
    for dtype in (torch.float32, torch.bfloat16):
        with np.errstate(invalid="ignore"):
            got = fastpaths.zeros_by_arithmetic(x.to(dtype), 0.0, backend=BACKEND)
        want = (x.to(dtype).float() * 0.0).to(dtype)
        nan = torch.isnan(got)
        assert torch.equal(nan, torch.isnan(want)) and _same_bits(got[~nan], want[~nan]), dtype


def foreach_add():
    """tensorlist-fixed-slots: both kernels bit-equal to torch._foreach_add."""
    from kb_tools.kernels import slots

    torch = _torch()
    gen = torch.Generator().manual_seed(5)
    xs = [torch.randn(n, generator=gen) for n in (1, 70, 129)]
    ys = [torch.randn(n, generator=gen) for n in (1, 70, 129)]
    want = torch._foreach_add(xs, ys, alpha=2)
    outs = [torch.empty_like(x) for x in xs]
    pad = slots.B_MAX - len(xs)
    slots.slots_launcher(backend=BACKEND)(*xs, *[xs[0]] * pad, *ys, *[ys[0]] * pad, *outs, *[outs[0]] * pad,
                                          *[x.numel() for x in xs], *[0] * pad, 2)
    assert all(_same_bits(o, w) for o, w in zip(outs, want))
    one = slots.per_tensor_launcher(backend=BACKEND)
    for x, y, w in zip(xs, ys, want):
        out = torch.empty_like(x)
        one(x, y, out, x.numel(), 2)
        assert _same_bits(out, w)


def cat_plan():
    """cat-lowering: the page's plan through cat_kernel is torch.cat bit for bit."""
    from kb_tools.kernels import cat, page_code

    torch = _torch()
    plan_of = page_code.load(_kb(), "cat-lowering", "cat_copy_plan")["cat_copy_plan"]
    gen = torch.Generator().manual_seed(6)
    for dtype in (torch.int64, torch.bfloat16, torch.bool, torch.uint8):
        tensors = [(torch.randn(2, k, 3, generator=gen) * 50).to(dtype) for k in (1, 0, 4)]
        want = torch.cat(tensors, 1)
        got = cat.cat(tensors, plan_of([t.shape for t in tensors], 1), want.shape, backend=BACKEND)
        assert _same_bits(got, want), dtype


def cat_seed_plan_on_stale_memory():
    """cat-lowering: seed 004's plan for (2, 3) + (5, 3) along dim 0 never writes the last nine
    elements. Where the output's memory already holds the right answer (freed by an earlier
    tensor of the same size, as in one launch_shapes run), an empty output reads 0 wrong; filled
    with NaN, as launch_shapes judges it, the nine count whatever the memory held."""
    from kb_tools.kernels import cat

    torch = _torch()
    gen = torch.Generator().manual_seed(13)
    tensors = [torch.randn(s, generator=gen) for s in ((2, 3), (5, 3))]
    want = torch.cat(tensors, 0)
    plan = cat.seed_plan([t.shape for t in tensors], 0)
    empty = torch.empty

    def stale_empty(*shape, **kwargs):  # the allocator handing back the right answer's memory
        if tuple(shape[0] if len(shape) == 1 else shape) == tuple(want.shape) and kwargs.get("dtype") == want.dtype:
            return want.clone()
        return empty(*shape, **kwargs)

    torch.empty = stale_empty
    try:
        on_stale = cat.cat(tensors, plan, want.shape, backend=BACKEND)
        on_nan = cat.cat(tensors, plan, want.shape, backend=BACKEND, fill=float("nan"))
    finally:
        torch.empty = empty
    assert int((on_stale != want).sum()) == 0  # the failure: a case the page predicts wrong looks right
    assert int((on_nan != want).sum()) == 9 and bool(on_nan.reshape(-1)[12:].isnan().all())


def row_mean():
    """dynamic-shape-versions / op-prototype: the mean of every tile version within fp32
    mix_tolerance of torch.mean, row layouts of a contiguous tensor included."""
    from kb_tools.kernels import rows
    from kb_tools.numerics.criteria import judge

    torch = _torch()
    versions = []
    launch = rows.mean_launcher(backend=BACKEND, versions=versions)
    gen = torch.Generator().manual_seed(8)
    for shape, dim, tile in (((3, 700), 1, 256), ((4, 5, 6), 1, 1024), ((2, 3000), 1, 2048), ((5, 2), 0, 256)):
        x = torch.randn(shape, generator=gen)
        want = x.mean(dim)
        y = torch.empty(want.shape)
        launch(x, y, x.shape[dim], x.stride(dim), want.numel(), tile)
        assert judge("mix_tolerance", y, want).passed, shape
    assert versions == [256, 1024, 2048, 256]


def scale_split():
    """multicore-tiling-balance: each core's range, each element written once."""
    from kb_tools.kernels import balance

    torch = _torch()
    x = torch.randn(1000, generator=torch.Generator().manual_seed(10))
    y, hits = balance.run_split(x, 4, 256, 256, backend=BACKEND)
    assert _same_bits(y, 2 * x) and bool((hits == 1).all())


def wave_expansion():
    """packed-mask-expansion: the per-wave kernel of kb_tools.memory.expand, bit-exact."""
    import numpy as np

    from kb_tools.memory.expand import expand_inplace

    torch = _torch()
    rng = np.random.default_rng(12)
    for dtype in (torch.float32, torch.bfloat16, torch.bool):
        n = 2051
        mask = rng.integers(0, 256, -(-n // 8), dtype=np.uint8)
        out = torch.zeros(n, dtype=dtype)
        out.view(torch.uint8)[: mask.size].copy_(torch.from_numpy(mask))
        expand_inplace(out, route="kernel", backend=BACKEND)
        assert torch.equal(out, torch.from_numpy(np.unpackbits(mask, bitorder="little", count=n)).to(dtype)), dtype


def fma_own_width():
    """dtype-promote / golden-promote: x*y + z kept at fp16 in the kernel equals torch's fp16 ops
    (one rounding per op), bit for bit, and differs from the fp32-widened golden somewhere."""
    from kb_tools.kernels import widths

    torch = _torch()
    gen = torch.Generator().manual_seed(13)
    x, y, z = (torch.randn(4096, generator=gen).half() for _ in range(3))
    got = widths.fma_own_width(x, y, z, backend=BACKEND, block=512)
    assert _same_bits(got, x * y + z)
    assert int((got != (x.float() * y.float() + z.float()).half()).sum()) > 0


def wrap_chain():
    """integer-semantics: a*b + c and trunc((a*b) / c) at int8 wrap as torch's int8 ops do, exactly."""
    from kb_tools.kernels import wrap

    torch = _torch()
    gen = torch.Generator().manual_seed(14)
    a = torch.randint(-128, 128, (2048,), dtype=torch.int8, generator=gen)
    b = torch.randint(-128, 128, (2048,), dtype=torch.int8, generator=gen)
    c = torch.randint(1, 128, (2048,), dtype=torch.int8, generator=gen)
    c = torch.where(torch.arange(2048) % 2 == 0, c, -c)  # no zero divisor, both signs
    total, quot = wrap.wrap_chain(a, b, c, backend=BACKEND, block=256)
    product = a * b  # wraps at int8
    assert _same_bits(total, product + c)
    assert _same_bits(quot, torch.div(product, c, rounding_mode="trunc"))


def scaled_cast():
    """wrapper-boundary: the cast inside the kernel and the host-cast anti-pattern each give
    fp32(x) * alpha narrowed once, for fp16 and bf16. Triton's interpreter (3.9.0, and
    triton-ascend 3.2.0's) narrows fp32 to bf16 toward zero, rtne asked for or not, where torch
    and a GPU round to nearest even: the in-kernel bf16 narrowing is compared with what the
    backend does, the host's (torch's) with round to nearest even."""
    from kb_tools.kernels import boundary
    from kb_tools.runtime import backends

    torch = _torch()
    for dtype in (torch.float16, torch.bfloat16):
        x = torch.randn(1500, generator=torch.Generator().manual_seed(15)).to(dtype)
        wide = x.float() * 0.37
        nearest = wide.to(dtype)
        in_kernel = nearest
        if dtype == torch.bfloat16 and backends.interpreting():
            in_kernel = (wide.view(torch.int32) & ~0xFFFF).view(torch.float32).to(dtype)  # exact: low bits cleared
            assert int((in_kernel != nearest).sum()) > 0
        assert _same_bits(boundary.compliant_scale(x, 0.37, backend=BACKEND, block=512), in_kernel), dtype
        assert _same_bits(boundary.host_cast_scale(x, 0.37, backend=BACKEND, block=512), nearest), dtype


def row_sum():
    """accumulator-precision: an fp32 accumulator sums fp16 rows within fp32 mix_tolerance of the
    float64 sum in either order; an fp16 accumulator is off by far more on the same rows."""
    from kb_tools.kernels import accumulate

    torch = _torch()
    x = (torch.rand(4, 3000, generator=torch.Generator().manual_seed(16)) + 0.5).half()
    exact = x.double().sum(1)
    errors = {}
    for acc_fp32 in (True, False):
        for reverse in (False, True):
            got = accumulate.row_sum(x, backend=BACKEND, acc_fp32=acc_fp32, reverse=reverse, tile=64)
            errors[acc_fp32, reverse] = float(((got.double() - exact).abs() / exact).max())
    assert max(errors[True, False], errors[True, True]) < 1e-6, errors
    assert min(errors[False, False], errors[False, True]) > 100 * max(errors[True, False], errors[True, True]), errors


CASES = {name: fn for name, fn in list(globals().items())
         if callable(fn) and not name.startswith("_") and fn.__module__ == __name__ and fn.__doc__}


def main() -> int:
    from kb_tools.runtime import backends

    if not backends.interpreting():
        print("triton_cases: run with TRITON_INTERPRET=1", file=sys.stderr)
        return 2
    results = {}
    for name, case in CASES.items():
        try:
            case()
            results[name] = None
        except Exception:
            results[name] = traceback.format_exc(limit=4)
    print(json.dumps({"results": results, "launched": sorted(backends.launches)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
