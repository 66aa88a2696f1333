"""Code printed on a page is code: every Python block under a page's Do / Don't runs here.

Each ``# tested:`` block has one check below, registered under its key (page:role:entries).
A Do block runs on the edge inputs its marker names and its page's invariant must hold
there; a Don't block must show the failure its marker names: an audit code (reported by
the static audit on the block, and where the block runs, by the dispatch recorder) or a
wrong result, shown against the Do block or torch. ``kbt lint`` holds every block to a
marker, and this file to a check for each.
"""

from __future__ import annotations

import contextlib
import dataclasses
import copy
import functools
import hashlib
import inspect
import io
import math
import os
import platform
import re
import subprocess
import threading
import time
import types

import pytest
import torch

from kb_tools.audit.engine import audit_source
from kb_tools.audit.families import FamilyOptions
from kb_tools.contract.specs import load_spec
from kb_tools.kb.page_code import KERNEL_NAME, WRONG_RESULT
from kb_tools.memory.waves import plan_waves

from conftest import REPO
from page_blocks import Edges, HostOps, load, one_launch, pages, refused, runnable_blocks

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
DTYPES = FLOATS + INTS + (torch.bool,)
CHECKS = {}


def check(key):
    def register(fn):
        assert key not in CHECKS, key
        CHECKS[key] = fn
        return fn
    return register


def bits_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal dtype, shape and bit patterns (nan payloads and -0.0 included)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:
        width = {2: torch.int16, 4: torch.int32, 8: torch.int64}[a.dtype.itemsize]
        return torch.equal(a.contiguous().view(width), b.contiguous().view(width))
    return torch.equal(a, b)


def same_values(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal dtype, shape and values, a nan matching a nan (whatever its payload)."""
    return a.dtype == b.dtype and a.shape == b.shape and bool(((a == b) | (a.isnan() & b.isnan())).all())


def wrapped(values, dtype: torch.dtype) -> torch.Tensor:
    """Exact Python integers narrowed to ``dtype`` by two's-complement wrap-around."""
    bits = torch.iinfo(dtype).bits
    signed = torch.iinfo(dtype).min < 0
    out = []
    for v in values:
        v %= 1 << bits
        out.append(v - (1 << bits) if signed and v >= 1 << (bits - 1) else v)
    return torch.tensor(out, dtype=dtype)


# ---------------------------------------------------------------- the wrapper boundary

def _axis(x, dim):
    """What a reduction over ``dim`` of ``x`` sees, by torch's own reading (a 0-d tensor is
    one element on one axis): (extent, stride, rows)."""
    if x.ndim == 0:
        return 1, 1, 1
    d = dim % x.ndim
    return x.shape[d], x.stride(d), math.prod(s for k, s in enumerate(x.shape) if k != d)


def _softmax_like(ns, entry, kernel, edges, dtypes, *, grid=None, refuses_bool=True):
    """A wrapper of a softmax-like operator: one launch on every edge input, the caller's own
    tensor handed over, the axis' extent, stride and row count right, and a dim refused
    exactly where torch.softmax refuses it."""
    wrapper, k = ns[entry], ns[kernel]
    for dtype in dtypes:
        for edge, x in edges.tensors(dtype):
            if x.dtype == torch.bool and refuses_bool:
                assert "dtype" in refused(k, TypeError, wrapper, x)
                continue
            for dim in range(-3, 3):
                try:
                    torch.softmax(x.float(), dim=dim)
                except IndexError:
                    refused(k, IndexError, wrapper, x, dim)
                    continue
                y, launch = one_launch(k, wrapper, x, dim)
                assert launch.args[0] is x and launch.grid == grid, edge
                yield x, dim, y, launch


@check("wrapper-boundary:do:reduced_axis+op_wrapper")
def _(block, edges):
    ns = load(block)
    for x, dim, y, launch in _softmax_like(ns, "op_wrapper", "op_kernel", edges, (torch.float16, torch.bfloat16, torch.float32)):
        assert y.shape == x.shape and y.dtype == x.dtype
        assert launch.args[1] is y and launch.args[2:] == _axis(x, dim)


@check("layout-format:do:softmax_wrapper")
def _(block, edges):
    ns = load(block)
    for x, dim, y, launch in _softmax_like(ns, "softmax_wrapper", "softmax_kernel", edges, (torch.float32,), refuses_bool=False):
        n, stride, rows = _axis(x, dim)
        assert launch.args[1:] == (y, n, stride, _axis(y, dim)[1], rows)
    broadcast = torch.zeros(3, 1).expand(3, 5)
    assert "stride-0" in refused(ns["softmax_kernel"], ValueError, ns["softmax_wrapper"], broadcast, 1)


@check("sample-driver-vs-delivery:do:softmax_wrapper")
def _(block, edges):
    ns = load(block)
    for x, dim, y, launch in _softmax_like(ns, "softmax_wrapper", "softmax_kernel", edges, FLOATS[:3], grid=(None, 8)):
        assert launch.args[1:] == (y, *_axis(x, dim))


@check("dynamic-shape-versions:do:pick_tile+mean_wrapper")
def _(block, edges):
    ns = load(block)
    for x, dim, y, launch in _softmax_like(ns, "mean_wrapper", "mean_kernel", edges, (torch.float32,), refuses_bool=False):
        assert y.shape == torch.mean(x.float(), dim=dim).shape
        n, stride, rows = _axis(x, dim)
        assert launch.args[1:] == (y, n, stride, rows, ns["pick_tile"](n))
    tiles = {n: ns["pick_tile"](n) for n in (0, 256, 257, 1024, 1025, 4096, 4097, 1 << 40)}
    assert tiles == {0: 256, 256: 256, 257: 1024, 1024: 1024, 1025: 2048, 4096: 2048, 4097: 2048, 1 << 40: 2048}


def _host_codes(call, *args) -> set[str]:
    """The rule codes of what ``call`` dispatched outside its kernel launches."""
    with HostOps() as host:
        call(*args)
    return host.codes


# A Don't wrapper, run on one input: what it dispatches outside its kernel carries every code
# its marker names (the static audit's verdict, seen at run time).
DONT_WRAPPER_INPUTS = {
    "wrapper-boundary:dont:op_wrapper": ("op_wrapper", lambda: (torch.randn(2, 3, 4).half(), 1)),
    "layout-format:dont:softmax_wrapper": ("softmax_wrapper", lambda: (torch.randn(2, 3, 4), 1)),
    "platform-gated-conversion:dont:softmax_wrapper": ("softmax_wrapper", lambda: (torch.randn(2, 3).bfloat16(),)),
    "host-to-kernel-migration:dont:op_wrapper": ("op_wrapper", lambda: (torch.randn(2, 3, 4).half(), 0)),
    "dynamic-shape-versions:dont:mean_wrapper": ("mean_wrapper", lambda: (torch.full((2, 3), 2e4), 1)),
    "cat-lowering:dont:cat_wrapper": ("cat_wrapper", lambda: ([torch.ones(2, 3), torch.ones(1, 3)], 0)),
    "kernel-bit-reinterpretation:dont:bernoulli_wrapper": ("bernoulli_wrapper", lambda: (torch.empty(64), 0.5, 1, 0)),
}


def _codes_at_run_time(entry, inputs, block, edges):
    ns = load(block)
    assert _host_codes(ns[entry], *inputs()) >= set(block.fails) - {WRONG_RESULT}


for _key, (_entry, _inputs) in DONT_WRAPPER_INPUTS.items():
    check(_key)(functools.partial(_codes_at_run_time, _entry, _inputs))


@check("sample-driver-vs-delivery:dont:softmax_wrapper")
def _(block, edges):
    syncs = []

    class TorchWithNpu(types.ModuleType):  # torch, plus the device module the driver synchronises
        npu = types.SimpleNamespace(synchronize=lambda: syncs.append("synchronize"))

        def __getattr__(self, name):
            return getattr(torch, name)

    ns = load(block, torch=TorchWithNpu("torch"))
    codes = _host_codes(ns["softmax_wrapper"], torch.randn(4, 3).t())
    assert codes >= {"WB102", "WB104"} and syncs == ["synchronize"]  # WB108: the driver's own synchronize


# ---------------------------------------------------------------- Bernoulli and its masks

@check("kernel-bit-reinterpretation:do:bernoulli_wrapper")
def _(block, edges):
    ns = load(block)
    dense = load(next(b for b in pages()["dense-alias"].blocks if b.role == "do"))
    k = ns["bernoulli_kernel"]

    def run(out):
        _, launch = one_launch(k, ns["bernoulli_wrapper"], out, 0.5, 1, 0)
        o, n, m, aliases = launch.args[:4]
        assert o is out and n == out.numel() and m == dense["mask_bytes"](n)
        if out.is_contiguous():  # capacity is the only condition a dense, whole output can fail
            assert aliases == (dense["dense_alias_reason"](out) is None), (out.dtype, n)
        return aliases

    for dtype in DTYPES:
        for edge, out in edges.tensors(dtype):
            run(out)
        smallest = 16 // dtype.itemsize  # the seed's 16/8/4/2 elements
        assert not run(torch.empty(smallest - 1, dtype=dtype)) and run(torch.empty(smallest, dtype=dtype))
    edges.mark("extremes")


@check("exact-fast-paths:dont:bernoulli_wrapper")
def _(block, edges):
    ns = load(block)
    assert "WB104" in _host_codes(ns["bernoulli_wrapper"], torch.empty(3), 0.0, 1, 3)
    assert ns["bernoulli_wrapper"](torch.empty(3), 0.0, 1, 3) is not None  # offset 3 accepted: the Do refuses it


@check("exact-fast-paths:do:bernoulli_wrapper")
def _(block, edges):
    ns = load(block, block_dim_for=lambda n, width: tiling(n, width, 192 * 1024, 40)["blockDim"])
    tiling, k, wrapper = ns["tiling"], ns["bernoulli_kernel"], ns["bernoulli_wrapper"]
    for dtype in DTYPES:
        for edge, x in edges.tensors(dtype):
            for p, mode in ((0.0, 0), (-0.0, 0), (1.0, 1), (0.5, 2), (5e-324, 2), (1 - 2 ** -53, 2)):
                out, launch = one_launch(k, wrapper, x, p, 7, 8)
                assert out.shape == x.shape and out.dtype == x.dtype and out.is_contiguous()
                assert launch.grid == (None, tiling(x.numel(), x.dtype.itemsize, 192 * 1024, 40)["blockDim"])
                assert launch.args == (out, x.numel(), p, 7, 8, mode)
                if x.numel() == 0:
                    assert launch.grid == (None, 1)
    for p in (math.nan, math.inf, -0.1, 1.1):
        assert "p must be" in refused(k, ValueError, wrapper, torch.empty(4), p, 1, 0)
    assert "offset" in refused(k, ValueError, wrapper, torch.empty(4), 0.0, 1, 3)  # before the p = 0 fast path
    refused(k, TypeError, wrapper, torch.empty([1] * 9), 0.5, 1, 0)
    refused(k, TypeError, wrapper, torch.empty(2, dtype=torch.complex64), 0.5, 1, 0)
    edges.mark("extremes")


@check("multicore-tiling-balance:dont:block")
def _(block, edges):
    ns = load(block, n=100)
    share = ns["elements_per_core"]
    assert share * ns["BLOCK_DIM"] != 100 and share % 256  # 20 elements on no core; unaligned shares


@check("multicore-tiling-balance:do:cdiv+tiling")
def _(block, edges):
    tiling = load(block)["tiling"]
    ub = 192 * 1024
    assert tiling(16_777_216, 4, ub, 40) == {"tileElements": 16384, "blockDim": 40, "elementsPerCore": 419_584}
    assert tiling(1_000, 4, ub, 40)["blockDim"] == 1
    assert tiling(0, 4, ub, 40) == {"tileElements": 16384, "blockDim": 1, "elementsPerCore": 0}
    edges.mark("empty", "one", "extremes")
    for total in (0, 1, 255, 256, 257, 16384, 16385, 655_360, 10 ** 7, 2 ** 31, 2 ** 62):
        for width in (1, 2, 4, 8):
            for cores in (1, 24, 40, 48):
                t = tiling(total, width, ub, cores)
                tile, cores_used, share = t["tileElements"], t["blockDim"], t["elementsPerCore"]
                assert tile % 256 == 0 and 0 < tile <= 16384 and tile * (width + 5) <= ub - 8 * 1024
                assert cores_used == max(1, min(cores, -(-total // tile)))
                assert share % 256 == 0 and share * cores_used >= total
                assert total == 0 or (cores_used - 1) * share < total  # the last core has work
    for bad in ((-1, 4, ub, 40), (10, 4, ub, 0)):
        with pytest.raises(ValueError):
            tiling(*bad)
    with pytest.raises(ValueError, match="holds no"):
        tiling(10, 8, 9 * 1024, 40)


@check("dense-alias:dont:can_alias_naive")
def _(block, edges):
    naive = load(block)["can_alias_naive"]
    assert naive(torch.empty(64)[:32]) and naive(torch.empty(15, dtype=torch.uint8))  # both must be refused


@check("dense-alias:do:mask_bytes+dense_alias_reason")
def _(block, edges):
    ns = load(block)
    reason, mask_bytes = ns["dense_alias_reason"], ns["mask_bytes"]
    assert [mask_bytes(n) for n in (0, 1, 128, 129)] == [0, 16, 16, 32]
    for edge, t in edges.tensors(torch.float32):
        n = t.numel()
        if not t.is_contiguous():
            assert "row-major" in reason(t), edge
        elif n * t.dtype.itemsize < mask_bytes(n):  # 0-d, one element and 6 bools: under 16 bytes
            assert "cannot hold" in reason(t), edge
        else:  # empty shapes and the 7 extremes: dense, whole, large enough
            assert reason(t) is None, edge
    assert "offset" in reason(torch.empty(64)[32:])
    assert "whole storage" in reason(torch.empty(64)[:32])
    assert "private" in reason(torch.empty(16, dtype=torch.uint8), private_format=True)
    for dtype in DTYPES:  # the seed's 16/8/4/2-element minimum, for every width
        smallest = 16 // dtype.itemsize
        assert "cannot hold" in reason(torch.empty(smallest - 1, dtype=dtype))
        assert reason(torch.empty(smallest, dtype=dtype)) is None
        assert reason(torch.empty(4, 129, dtype=dtype)) is None
    edges.mark("extremes")


@check("wave-expansion:do:plan_is_safe")
def _(block, edges):
    safe = load(block)["plan_is_safe"]
    edges.mark("empty", "one", "extremes")
    for d in (1, 2, 4, 8):
        assert safe([(0, 0)], d) and safe([(0, 1)], d)
        for n in (*range(0, 4097, 7), 2 ** 31):
            plan = [(w.start, w.end) for w in plan_waves(n, d)] or [(0, 0)]
            assert safe(plan, d), (n, d)
            if plan[0][0] >= 512:  # the first wave started one block lower writes mask bytes not yet read
                lowered = [(plan[0][0] - 256, plan[0][1]), (plan[1][0], plan[0][0] - 256), *plan[2:]]
                assert not safe(lowered, d), (n, d)


def pack_bits(bits: torch.Tensor) -> torch.Tensor:
    """The packed mask of 0/1 values: bit i is bit i % 8 (least significant first) of byte i // 8."""
    padded = torch.zeros(-(-bits.numel() // 8) * 8, dtype=torch.uint8)
    padded[: bits.numel()] = bits.reshape(-1)
    return (padded.reshape(-1, 8).to(torch.int64) << torch.arange(8)).sum(1).to(torch.uint8)


def unpack_bits(mask: torch.Tensor) -> torch.Tensor:
    return ((mask.reshape(-1, 1) >> torch.arange(8)) & 1).reshape(-1)


class Cores:
    """CPU threads standing in for a kernel's cores: the output's storage as bytes, with the
    packed mask (bit i of the mask, least significant bit first, is element i) at its start,
    and the primitives the per-core pseudo-code calls, one barrier for SyncAll."""

    def __init__(self, n: int, dtype: torch.dtype, cores: int, timeout: float):
        self.bits = torch.randint(0, 2, (n,), generator=torch.Generator().manual_seed(n)).to(torch.uint8)
        self.buf = torch.zeros(n * dtype.itemsize, dtype=torch.uint8)
        mask = pack_bits(self.bits)
        self.buf[: mask.numel()] = mask
        self.out, self.dtype, self.cores = self.buf.view(dtype), dtype, cores
        self.barrier, self.errors = threading.Barrier(cores, timeout=timeout), []

    def names(self, waves) -> dict:
        def my_share(start, end, core_id):
            per = -(-(end - start) // self.cores)
            lo = start + core_id * per
            return lo, min(lo + per, end)

        def expand(lo, hi):  # one tile: its mask bytes into local memory, then the elements out
            local = self.buf[lo // 8: -(-hi // 8)].clone()
            self.out[lo:hi] = unpack_bits(local)[lo % 8: lo % 8 + hi - lo].to(self.dtype)

        return {"my_share": my_share, "expand": expand, "SyncAll": self.barrier.wait, "ceil": math.ceil,
                "load_to_ub": torch.clone, "mask_bytes": self.buf, "out": self.out,
                "expand_bits": lambda head, count: unpack_bits(head)[:count].to(self.dtype),
                "store": lambda dst, values: dst.copy_(values)}

    def run(self, expand_on_core, waves) -> None:
        def core(core_id):
            try:
                expand_on_core(core_id, waves)
            except threading.BrokenBarrierError as exc:
                self.errors.append(exc)

        threads = [threading.Thread(target=core, args=(c,)) for c in range(self.cores)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    @property
    def expanded(self) -> bool:
        return torch.equal(self.out, self.bits.to(self.dtype))


@check("wave-expansion:dont:expand_on_core")
def _(block, edges):
    wave_plan = load(next(b for b in pages()["packed-mask-expansion"].blocks if b.role == "do"))["wave_plan"]
    cores = Cores(300, torch.uint8, 48, timeout=0.5)  # the wave 256..300 gives cores 44..47 nothing
    waves = wave_plan(300, 1)
    cores.run(load(block, **cores.names(waves))["expand_on_core"], waves)
    assert cores.errors and not cores.expanded  # the others waited at the barrier until it broke


@check("wave-expansion:do:expand_on_core")
def _(block, edges):
    wave_plan = load(next(b for b in pages()["packed-mask-expansion"].blocks if b.role == "do"))["wave_plan"]
    for n in (0, 1, 255, 257, 300, 1000, 4096):
        for dtype in (torch.uint8, torch.float16, torch.float32, torch.float64):
            for count in (1, 7, 48):
                cores, waves = Cores(n, dtype, count, timeout=30), wave_plan(n, dtype.itemsize)
                cores.run(load(block, **cores.names(waves))["expand_on_core"], waves)
                assert not cores.errors and cores.expanded, (n, dtype, count)
    edges.mark("empty", "one", "extremes")


@check("packed-mask-expansion:dont:block")
def _(block, edges):
    n = 64
    torch.manual_seed(0)
    bits = torch.randint(0, 256, (n // 8,), dtype=torch.uint8)
    out = torch.zeros(n, dtype=torch.uint8)
    out[: n // 8] = bits
    load(block, n=n, out=out, mask_bytes=out[: n // 8])  # the mask is the start of out's storage
    truth = torch.tensor([(int(bits[i // 8]) >> (i % 8)) & 1 for i in range(n)], dtype=torch.uint8)
    assert not torch.equal(out, truth)


@check("packed-mask-expansion:do:ceil_div+wave_plan")
def _(block, edges):
    wave_plan = load(block)["wave_plan"]
    assert wave_plan(0, 4) == [(0, 0)] and wave_plan(1, 4) == [(0, 1)]
    edges.mark("empty", "one", "extremes")
    for d in (1, 2, 4, 8):
        for n in (*range(1, 4097, 13), 2 ** 20, 2 ** 40):
            assert wave_plan(n, d) == [(w.start, w.end) for w in plan_waves(n, d)], (n, d)


@check("non-contiguous-fallback:dont:block")
def _(block, edges):
    tmp = torch.tensor([1 / 3, 1e300, 5e-324], dtype=torch.float64)
    out = torch.empty(6, dtype=torch.float64)[::2]
    load(block, out=out, tmp=tmp)
    assert not bits_equal(out, tmp)  # values converted where only bits should move


def _guarded_view(shape, dtype):
    """A view of ``shape`` over every other element of a larger storage (non-contiguous,
    offset 4), the storage, and which storage elements the view covers."""
    strides, acc = [], 2
    for size in reversed(shape):
        strides.insert(0, acc)
        acc *= max(size, 1)
    storage = torch.full((2 * math.prod(shape) + 8,), 7).to(dtype)
    covered = torch.zeros(storage.numel(), dtype=torch.bool)
    covered.as_strided(shape, strides, 4).fill_(True)
    return storage.as_strided(shape, strides, 4), storage, covered


@check("non-contiguous-fallback:do:write_back")
def _(block, edges):
    write_back = load(block)["write_back"]
    for dtype in DTYPES:
        for edge, result in edges.tensors(dtype):
            result = result.contiguous()
            out, storage, covered = _guarded_view(tuple(result.shape), result.dtype)
            before = storage.clone()
            write_back(out, result)
            assert bits_equal(out.contiguous(), result), (dtype, edge)  # bit for bit: nan payloads, -0.0
            assert bits_equal(storage[~covered], before[~covered]), "wrote outside the view"


@check("non-contiguous-fallback:do:fallback_tile")
def _(block, edges):
    for dtype in DTYPES:
        for edge, like in edges.tensors(dtype):
            shape, dtype_out, n = tuple(like.shape), like.dtype, like.numel()
            bits = torch.randint(0, 2, (n,), generator=torch.Generator().manual_seed(n)).to(torch.uint8)
            for tile in (256, 100):  # aligned tiles, and tiles that start inside a mask byte
                out, storage, covered = _guarded_view(shape, dtype_out)
                before = storage.clone()

                def store_strided(ptr, strides, offset, lo, hi, values):
                    where = torch.arange(ptr.numel()).as_strided(shape, strides, offset).reshape(-1)[lo:hi]
                    ptr[where] = values

                fp64 = dtype_out == torch.float64
                ns = load(block, load_to_ub=torch.clone, mask=pack_bits(bits), ceil=math.ceil, int64=torch.int64,
                          expand_bits=lambda m, skip, count, as_dtype: unpack_bits(m)[skip:skip + count].to(as_dtype),
                          out_dtype=dtype_out, out_is_fp64=fp64, store_strided=store_strided,
                          out_ptr=storage.view(torch.int64) if fp64 else storage,
                          out_strides=out.stride(), out_offset=out.storage_offset())
                for lo in range(0, n, tile):
                    ns["fallback_tile"](lo, min(lo + tile, n))
                assert bits_equal(out.contiguous(), bits.to(dtype_out).reshape(shape)), (dtype_out, edge, tile)
                assert bits_equal(storage[~covered], before[~covered]), "wrote outside the view"


# ---------------------------------------------------------------- scalars, goldens, narrowing

SCALARS = (True, False, 0, 2, -1, 127, 2 ** 31, 2 ** 62 + 1, -(2 ** 63), 2.5, -0.0, math.inf, math.nan)


@check("scalar-operand-promotion:do:scalar_result_dtype+add_wrapper")
def _(block, edges):
    ns = load(block)
    k = ns["add_scalar_kernel"]
    k.body = lambda x, y, n, other, alpha: torch.add(x, other, alpha=alpha, out=y)  # converts as torch does
    for dtype in DTYPES:
        for scalar in SCALARS:
            expected = torch.result_type(torch.empty(0, dtype=dtype), scalar)
            assert ns["scalar_result_dtype"](dtype, scalar) == expected, (dtype, scalar)
    for dtype in DTYPES:
        for edge, x in edges.tensors(dtype):
            for other in SCALARS:
                try:
                    want = torch.add(x, other)
                except RuntimeError:
                    continue  # torch refuses the pair (e.g. an out-of-range integer scalar)
                y, _ = one_launch(k, ns["add_wrapper"], x, other)
                assert bits_equal(y, want), (dtype, edge, other)
        if not dtype.is_floating_point and dtype != torch.bool:
            refused(k, TypeError, ns["add_wrapper"], torch.ones(2, dtype=dtype), 1, 1.5)


@check("scalar-operand-promotion:dont:add_wrapper")
def _(block, edges):
    ns = load(block)
    ns["add_scalar_kernel"].body = lambda x, s, y, n, alpha: torch.add(x, s, alpha=alpha, out=y)
    x = torch.arange(3, dtype=torch.int32)
    y = ns["add_wrapper"](x, 2.5)
    assert y.dtype != torch.add(x, 2.5).dtype and torch.equal(y, x + 2)  # 2.5 became 2, in int32


@check("golden-follows-dut-widening:do:add_golden")
def _(block, edges):
    add_golden = load(block)["add_golden"]
    for edge, x in edges.tensors(torch.int8):
        y = x.flip(0) if x.ndim else x
        out = add_golden(x, y, 2, torch.int8, {torch.int8: torch.int32})
        exact = [a + 2 * b for a, b in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist())]
        assert torch.equal(out.reshape(-1), wrapped(exact, torch.int8)) and out.dtype == torch.int8, edge
    x = torch.randn(256).half()
    assert bits_equal(add_golden(x, x, 0.5, torch.float16, {}), x + 0.5 * x)  # no widening: computed in fp16


@check("golden-follows-dut-widening:dont:add_golden")
def _(block, edges):
    add_golden = load(block)["add_golden"]
    torch.manual_seed(0)
    x, y = torch.randn(4096).half(), torch.randn(4096).half()
    assert not bits_equal(add_golden(x, y, 0.1), x + 0.1 * y)  # not the fp16 DUT's function


@check("golden-framework:do:softmax_golden")
def _(block, edges):
    golden = load(block)["softmax_golden"]
    assert "numpy" not in block.source
    for dtype in (torch.float16, torch.bfloat16, torch.float32):
        for edge, x in edges.tensors(dtype):
            y = golden(x)
            assert y.dtype == dtype and y.shape == x.shape  # bf16 in, bf16 out: no detour


@check("golden-framework:dont:softmax_golden")
def _(block, edges):
    golden = load(block)["softmax_golden"]
    y = golden(torch.randn(2, 5).bfloat16())
    assert not isinstance(y, torch.Tensor) and str(y.dtype) == "float32"  # the bf16 reference is gone
    with pytest.raises(ValueError):  # and an empty row, which torch handles, breaks it
        golden(torch.empty(3, 0))


def _promote_golden_collapses(golden):
    x = torch.randn(4, 33)  # float32: what Promote hands over for a float16 operator
    y = golden(x, {"y": torch.float32})
    assert y.dtype == torch.float16 and not torch.equal(y.float(), torch.softmax(x, dim=-1))


@check("golden-promote:dont:softmax_golden")
def _(block, edges):
    _promote_golden_collapses(load(block)["softmax_golden"])


@check("golden-promote:dont:softmax_golden#2")
def _(block, edges):
    _promote_golden_collapses(load(block, OP_DECLARED_DTYPE=torch.float16)["softmax_golden"])


@check("golden-promote:do:softmax_golden")
def _(block, edges):
    golden = load(block)["softmax_golden"]
    for dtype in (torch.float32, torch.float64):
        for edge, x in edges.tensors(dtype):
            y = golden(x, {"y": dtype})
            assert y.dtype == dtype and bits_equal(y, torch.softmax(x, dim=-1)), edge


@check("integer-narrowing:do:safe_div")
def _(block, edges):
    safe_div = load(block)["safe_div"]
    for dtype in (torch.int8, torch.int32, torch.int64):
        i = torch.iinfo(dtype)
        a = torch.tensor([i.min, i.max, -7, 7, 5, i.min], dtype=dtype)
        b = torch.tensor([-1, -1, 2, -2, 0, 1], dtype=dtype)
        for mode, rounding in (("trunc", lambda p, q: abs(p) // abs(q) * (1 if (p < 0) == (q < 0) else -1)),
                               ("floor", lambda p, q: p // q)):
            q, zero = safe_div(a, b, rounding_mode=mode)
            keep = ~zero
            exact = [rounding(p, d) for p, d in zip(a[keep].tolist(), b[keep].tolist())]
            assert torch.equal(q[keep], wrapped(exact, dtype)) and zero.tolist() == [d == 0 for d in b.tolist()], (dtype, mode)
        edges.mark("extremes")
        for edge, x in edges.tensors(dtype):
            if edge == "extremes":
                continue
            q, zero = safe_div(x, torch.ones_like(x))
            assert torch.equal(q, x) and not zero.any() and q.shape == x.shape, edge


@check("integer-narrowing:do:golden_floor_divide")
def _(block, edges):
    golden = load(block)["golden_floor_divide"]
    x, y = torch.tensor([-128, 127, -7], dtype=torch.int8), torch.tensor([-1, -1, 2], dtype=torch.int8)
    assert golden(x, y).tolist() == [-128, -127, -4]  # 128 at int32 wraps back to -128 at the exit
    with pytest.raises(AssertionError, match="zero divisors"):
        golden(x, torch.zeros_like(y))
    for edge, t in edges.tensors(torch.int8):
        if edge != "extremes":
            assert torch.equal(golden(t, torch.ones_like(t)), t), edge


@check("third-party-narrowing:do:third_party_row_sum")
def _(block, edges):
    row_sum = load(block)["third_party_row_sum"]
    widening = {torch.float16: torch.float32, torch.bfloat16: torch.float32, torch.int8: torch.int32}
    for dtype in (torch.float16, torch.float32, torch.int8, torch.int32, torch.bool):
        for edge, x in edges.tensors(dtype):
            y = row_sum(x, widening)
            assert y.dtype == x.dtype and y.shape == torch.sum(x, dim=-1).shape, (dtype, edge)
    y = row_sum(torch.tensor([[127, 127], [-128, -128]], dtype=torch.int8), widening)
    assert y.tolist() == wrapped([254, -256], torch.int8).tolist()  # summed at int32, narrowed by wrap


@check("third-party-narrowing:dont:third_party_row_sum")
def _(block, edges):
    row_sum = load(block)["third_party_row_sum"]
    assert row_sum(torch.ones(2, 3, dtype=torch.int8)).dtype == torch.int64  # the integer output leaks out wide


@check("accumulator-precision:dont:row_sum_fp16")
def _(block, edges):
    row_sum = load(block)["row_sum_fp16"]
    assert row_sum(torch.ones(1, 4096).half()).item() == 2048  # stalls: 2048 + 1 rounds back to 2048
    assert row_sum(torch.tensor([[65504.0, 65504.0, -65504.0]]).half()).isinf().all()


@check("accumulator-precision:do:row_sum_fp16")
def _(block, edges):
    row_sum = load(block)["row_sum_fp16"]
    assert row_sum(torch.ones(1, 4096).half()).item() == 4096
    assert row_sum(torch.tensor([[65504.0, 65504.0, -65504.0]]).half()).item() == 65504
    for edge, x in edges.tensors(torch.float16):
        x = x.reshape(1, -1) if x.ndim < 2 else x
        y = row_sum(x)
        assert y.dtype == torch.float16 and same_values(y, x.double().sum(dim=1).half()), edge


@check("reduction-order:dont:row_sum")
def _(block, edges):
    x = torch.full((1, 1 << 16), 0.1)
    exact = x.double().sum(dim=1)
    blocked = load(next(b for b in pages()["reduction-order"].blocks if b.role == "do"))["row_sum_blocked"]
    running_err = (load(block)["row_sum"](x).double() - exact).abs().item()
    assert running_err > 100 * (blocked(x).double() - exact).abs().item()


@check("reduction-order:do:row_sum_blocked")
def _(block, edges):
    row_sum = load(block)["row_sum_blocked"]
    torch.manual_seed(0)
    x = torch.rand(3, 5000)
    assert bits_equal(row_sum(x), row_sum(x.clone()))  # one tree per shape
    assert ((row_sum(x).double() - x.double().sum(1)).abs() <= 2 ** -20 * x.double().abs().sum(1)).all()
    for edge, t in edges.tensors(torch.float32):
        t = t.reshape(1, -1) if t.ndim < 2 else t
        y = row_sum(t)
        assert y.shape == (t.shape[0],) and same_values(y, t.double().sum(dim=1).float()), edge


@check("semantic-alignment:dont:block")
def _(block, edges):
    x = torch.full((4,), 60000.0).half()
    ns = load(block, x=x, dim=0, n=4)
    assert ns["y"].isinf() and torch.mean(x, dim=0) == 60000  # the rewrite overflows where mean does not


@check("semantic-alignment:do:alignment_metrics")
def _(block, edges):
    metrics = load(block)["alignment_metrics"]
    m = metrics(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 4.0]))
    assert m["max_abs"] == 2 and m["max_rel"] == 0.5 and m["cosine"] == pytest.approx(9 / math.sqrt(5 * 17))
    for edge, t in edges.tensors(torch.float16):
        if edge == "empty":
            with pytest.raises(ValueError, match="non-empty"):
                metrics(t, t)
            continue
        m = metrics(t, t)
        finite = t.isfinite().all()
        assert (m["max_abs"] == 0 and m["max_rel"] == 0) or not finite, edge
    with pytest.raises(ValueError, match="equal"):
        metrics(torch.ones(2), torch.ones(3))


@check("inplace-aliasing:dont:shift_add_wrapper")
def _(block, edges):
    ns = load(block)

    def in_order(x, out, n):  # a kernel that walks the elements upwards, one at a time
        for i in range(n):
            out[i] = x[i] + 1

    ns["shift_add_kernel"].body = in_order
    a = torch.tensor([0.0, 10.0, 20.0, 30.0, 40.0])
    expected = a[:-1] + 1
    ns["shift_add_wrapper"](a[:-1], a[1:])
    assert not torch.equal(a[1:], expected)  # each element read after its neighbour overwrote it


@check("inplace-aliasing:do:check_inplace")
def _(block, edges):
    check_inplace = load(block)["check_inplace"]
    for dtype in (torch.float32, torch.bool):
        a = torch.arange(8).to(dtype)
        m = a.view(2, 4)
        op = torch.logical_not if dtype == torch.bool else torch.neg
        cases = {  # edge: (x, out, what the check says, whether torch accepts)
            "empty": [(a[:0], a[:0], True, True), (a[:0], a[1:1], False, True)],
            "0-d": [(a[2], a[2], True, True), (a[2], a[3], False, True)],
            "one": [(a[:1], a[:1], True, True), (a[:1], a[1:2], False, True), (a[:1], a[1:].clone()[:1], False, True)],
            "strided": [(m.t(), m.t(), True, True), (a[::2], a[1::2], ValueError, True),  # conservative, as the page says
                        (a[:-1], a[1:], ValueError, False), (m.t(), a.view(4, 2), ValueError, False)],
        }
        for edge, pairs in cases.items():
            edges.mark(edge, "bool")
            for x, out, verdict, accepted in pairs:
                if verdict is ValueError:
                    with pytest.raises(ValueError, match="partially overlaps"):
                        check_inplace(x, out)
                else:
                    assert check_inplace(x, out) is verdict, (dtype, edge)
                try:
                    op(x, out=out)
                except RuntimeError:
                    assert not accepted, (dtype, edge)
                else:
                    assert accepted, (dtype, edge)
    with pytest.raises(ValueError, match="internal overlap"):
        check_inplace(torch.zeros(4), torch.zeros(1).expand(4))


@check("op-prototype:dont:mean_wrapper")
def _(block, edges):
    ns = load(block)
    x = torch.arange(6)  # int64: outside the prototype
    ns["mean_wrapper"](x)
    assert len(ns["mean_kernel"].launches) == 1  # launched; the Do's check refuses the same input
    do = load(next(b for b in pages()["op-prototype"].blocks if b.role == "do"))
    with pytest.raises(TypeError, match="torch.int64 is not supported"):
        do["check_against_prototype"](x)


@check("op-prototype:do:check_against_prototype")
def _(block, edges):
    ns = load(block)
    check, spec = ns["check_against_prototype"], ns["MEAN_PROTOTYPE"]["inputs"]["self"]
    for dtype in DTYPES:
        for edge, x in edges.tensors(dtype):
            if x.dtype not in spec["dtypes"]:
                with pytest.raises(TypeError, match=f"{x.dtype} is not supported .supported: torch.float16"):
                    check(x)
            elif x.ndim not in spec["ranks"]:
                with pytest.raises(ValueError, match=f"rank {x.ndim} is outside 1..8"):
                    check(x)  # a 0-d input: outside the declared ranks
            else:
                assert check(x) is None, (dtype, edge)
    for rank in range(10):
        x = torch.empty([1] * rank)
        if rank in spec["ranks"]:
            check(x)
        else:
            with pytest.raises(ValueError, match=f"rank {rank}"):
                check(x)


# ---------------------------------------------------------------- lists, plans, budgets

@check("tensorlist-fixed-slots:dont:foreach_add_wrapper")
def _(block, edges):
    ns = load(block)
    k = ns["foreach_add_kernel"]
    for length in (0, 1, 3):
        k.launches.clear()
        ns["foreach_add_wrapper"]([torch.ones(2)] * length, [torch.ones(2)] * length)
        assert len(k.launches) == length  # one launch per element: 0 for an empty list
    assert length != 1


@check("tensorlist-fixed-slots:do:foreach_add_wrapper")
def _(block, edges):
    ns = load(block)
    k, wrapper, b_max = ns["foreach_add_kernel"], ns["foreach_add_wrapper"], ns["B_MAX"]
    assert "need 1.." in refused(k, ValueError, wrapper, [], [])
    refused(k, ValueError, wrapper, [torch.ones(2)] * (b_max + 1), [torch.ones(2)] * (b_max + 1))
    refused(k, ValueError, wrapper, [torch.ones(2)], [torch.ones(3)])
    edges.mark("empty")
    for edge, t in edges.tensors(torch.float32):
        if not t.is_contiguous():
            assert "contiguous" in refused(k, ValueError, wrapper, [t], [t])
            continue
        for length in (1, 3, b_max):
            xs, ys = [t.clone() for _ in range(length)], [t.clone() for _ in range(length)]
            outs, launch = one_launch(k, wrapper, xs, ys, 2)
            args = launch.args
            assert len(args) == 4 * b_max + 1 and args[-1] == 2
            assert list(args[:length]) == xs and args[b_max:b_max + length] == tuple(ys)
            assert list(args[2 * b_max:2 * b_max + length]) == outs
            assert args[3 * b_max:4 * b_max] == (t.numel(),) * length + (0,) * (b_max - length)
            assert all(o.shape == t.shape and o.dtype == t.dtype for o in outs), edge


@check("cat-lowering:do:cat_copy_plan")
def _(block, edges):
    plan_of = load(block)["cat_copy_plan"]

    def replay(tensors, dim):
        out = torch.empty(torch.cat(tensors, dim).numel(), dtype=tensors[0].dtype)
        flat = [t.reshape(-1) for t in tensors]
        for i, src, dst, n in plan_of([tuple(t.shape) for t in tensors], dim):
            out[dst:dst + n] = flat[i][src:src + n]
        return out.view(torch.cat(tensors, dim).shape)

    with pytest.raises(ValueError, match="at least one"):
        plan_of([], 0)
    with pytest.raises(IndexError):
        plan_of([(), ()], 0)  # torch.cat refuses 0-d tensors too
    edges.mark("empty", "0-d")
    for dtype in (torch.float32, torch.int64, torch.bool, torch.float16):
        for edge, t in edges.tensors(dtype):
            if t.ndim == 0:
                continue
            for dim in range(-t.ndim, t.ndim):
                parts = [t, t.narrow(dim, 0, 0), t.flip(dim)]  # a zero-extent input in the middle
                assert bits_equal(replay(parts, dim), torch.cat(parts, dim)), (dtype, edge, dim)


@check("ub-tiling-budget:dont:block")
def _(block, edges):
    ns = load(block, n=1 << 16)
    assert ns["work"].nbytes > ns["UB_BYTES"]  # the temporary grows with n, past the whole UB


@check("ub-tiling-budget:do:align_up+ub_budget+check_budget")
def _(block, edges):
    ns = load(block)
    check_budget, ub = ns["check_budget"], 192 * 1024
    budget = check_budget(14336, 8, ub)
    assert budget["total"] + 8 * 1024 <= ub and all(v % 32 == 0 for v in budget.values())
    with pytest.raises(ValueError, match="reserve"):
        check_budget(16384, 8, ub)
    assert check_budget(0, 8, ub)["total"] == 0 and check_budget(1, 1, ub)["total"] == 96
    with pytest.raises(ValueError):
        check_budget(2 ** 40, 8, ub)
    edges.mark("empty", "one", "extremes")


@check("memory-parity:dont:block")
def _(block, edges):
    ns = load(block, npu=2 * 1024 * 1024, gpu=0)
    assert ns["gap"] == 0.0  # a real 2 MiB read as parity


@check("memory-parity:do:one_record+gap")
def _(block, edges):
    gap = load(block)["gap"]
    assert gap(268_437_504, 268_435_456) == "0.000763%" and gap(1_536, 0) == "undefined"
    assert gap(0, 0) == "undefined" and gap(1, 1) == "0.000000%" and gap(0, 1) == "100.000000%"
    assert gap(2 ** 63 - 1, 2 ** 63 - 1) == "0.000000%" and gap(2 ** 63, 2 ** 62) == "100.000000%"
    edges.mark("empty", "one", "extremes")


@check("random-op-verification:dont:block")
def _(block, edges):
    p = torch.full((4096,), 0.5)
    a = torch.bernoulli(p, generator=torch.Generator().manual_seed(1))
    b = torch.bernoulli(p, generator=torch.Generator().manual_seed(2))  # another correct generator
    do = load(next(x for x in pages()["random-op-verification"].blocks if x.role == "do"))
    do["check_distribution"]({"a": (a, 0.5), "b": (b, 0.5)})  # both are right ...
    with pytest.raises(AssertionError):
        load(block, npu_out=a, gpu_out=b)  # ... and the element-wise comparison rejects them


@check("random-op-verification:do:checksum+check_state+check_distribution")
def _(block, edges):
    ns = load(block)

    def run(seed, offset, ignore=""):
        g = torch.Generator().manual_seed(seed * (0 if ignore == "seed" else 1_000_003) + offset * (0 if ignore == "offset" else 1))
        return torch.bernoulli(torch.full((4096,), 0.3), generator=g)

    ns["check_state"](run)
    for ignored in ("seed", "offset"):
        with pytest.raises(AssertionError, match=f"{ignored} ignored"):
            ns["check_state"](lambda s, o, i=ignored: run(s, o, i))
    torch.manual_seed(0)
    cases = {f"{d}-{p}": (torch.bernoulli(torch.full((20000,), p)).to(d), p)
             for d in (torch.float16, torch.bfloat16, torch.float32, torch.bool, torch.uint8) for p in (0.1, 0.5)}
    z, p_min = ns["check_distribution"](cases)
    assert z < 4 and p_min > 0
    with pytest.raises(AssertionError):
        ns["check_distribution"]({"biased": (torch.bernoulli(torch.full((20000,), 0.3)), 0.35)})
    with pytest.raises(AssertionError, match="outside"):
        ns["check_distribution"]({"twos": (torch.full((10,), 2.0), 0.5)})
    for edge, t in edges.tensors(torch.float32):
        assert ns["checksum"](t) == hashlib.sha256(t.contiguous().numpy().tobytes()).hexdigest(), edge
    assert ns["checksum"](torch.empty(0)) == hashlib.sha256(b"").hexdigest()


@check("three-leg-comparison:do:case_mode")
def _(block, edges):
    case_mode = load(block)["case_mode"]
    assert case_mode({}) == "two-party" and case_mode({"y": "cross_check"}) == "three-party"
    assert case_mode({"y": "binary_equal", "idx": "cross_check"}) == "three-party"
    assert case_mode({"y": "binary_equal"}) == "two-party"
    edges.mark("empty", "one")


@check("tolerance-coverage:do:uncovered_dtypes")
def _(block, edges):
    uncovered = load(block)["uncovered_dtypes"]
    cpp = 'ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT, /* DT_FLOAT again */ ge::DT_INT8'
    assert uncovered(cpp, {"float16": 1, "DT_FLOAT": 2}) == ["BF16", "INT8"]
    assert uncovered("", {"float16": 1}) == [] and uncovered(cpp, {}) == ["BF16", "FLOAT", "FLOAT16", "INT8"]
    assert uncovered("DT_INT8", {"int8": 1}) == []
    edges.mark("empty", "one")


# ---------------------------------------------------------------- playbooks

@check("evidence-binding:do:sha256_file+git+loaded_libraries+evidence")
def _(block, edges, tmp_path):
    ns = load(block)
    repo = tmp_path / "repo"
    (repo / "ops" / "add").mkdir(parents=True)
    (repo / "ops" / "add" / "add.py").write_text("x = 1\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "one"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True)
    package = tmp_path / "package.run"
    package.write_bytes(b"")
    record = ns["evidence"](repo, "ops/add", package, "libtorch")
    assert record["package_sha256"] == hashlib.sha256(b"").hexdigest()  # an empty file has a hash too
    assert record["operator_tree_dirty"] is False and len(record["commit"]) == 40
    assert record["loaded_dso"] and all(p.startswith("/") for p in record["loaded_dso"])  # torch's own library is mapped
    (repo / "ops" / "add" / "add.py").write_text("x = 2\n")
    assert ns["evidence"](repo, "ops/add", package, "libtorch")["operator_tree_dirty"] is True
    assert ns["loaded_libraries"]("no-such-library-name") == []
    edges.mark("empty")


@check("numerical-error-localisation:do:leaf_outputs+first_divergent")
def _(block, edges):
    ns = load(block)
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    dut = copy.deepcopy(ref)
    x = torch.randn(3, 4)
    assert ns["first_divergent"](dut, ref, x) is None
    with torch.no_grad():
        dut[2].weight[0, 0] += 1
    assert ns["first_divergent"](dut, ref, x) == "2"
    leaf = torch.nn.Linear(4, 2)  # a model that is one leaf
    assert list(ns["leaf_outputs"](leaf, x)) == [""] and ns["first_divergent"](copy.deepcopy(leaf), leaf, x) is None
    nan_input = x.clone()
    nan_input[0, 0] = math.nan  # the same NaN in both is agreement, not divergence
    assert ns["first_divergent"](copy.deepcopy(ref), ref, nan_input) is None
    edges.mark("one", "extremes")


@check("op-matching-failure:do:check_registered")
def _(block, edges):
    check_registered = load(block)["check_registered"]
    assert check_registered("aten::mean", {"aten::mean": 1}) is None
    with pytest.raises(LookupError, match="did you mean aten::mean"):
        check_registered("aten::means", {"aten::mean": 1, "aten::sum": 2})
    with pytest.raises(LookupError, match=r"'aten::mean'$"):
        check_registered("aten::mean", {})
    edges.mark("empty", "one")


@check("performance-protocol:dont:block")
def _(block, edges):
    calls = []
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        load(block, new=lambda x: calls.append(x), x=1, time=time)
    assert len(calls) == 1 and len(shown.getvalue().split()) == 1  # a first call, one sample, nothing to compare


@check("performance-protocol:do:measure+verdict")
def _(block, edges):
    verdict = load(block)["verdict"]
    v = verdict([1.0], [1.0], {"h"}, {"h"})
    assert v["no_regression"] and v["old_p50_p90"] == [1.0, 1.0]
    assert not verdict([1.0, 1.0, 1.0], [1.0, 1.0, 2.0], {"h"}, {"h"})["no_regression"]  # P90 worse
    for old, new in (({"a", "b"}, {"a", "b"}), ({"a"}, {"b"})):
        with pytest.raises(AssertionError, match="outputs differ"):
            verdict([1.0], [0.5], old, new)
    edges.mark("one")


@check("performance-triage:do:triage")
def _(block, edges):
    triage = load(block)["triage"]
    healthy = {"wrapper_time_share": 0, "format_conversions": 0, "bandwidth_utilisation": 0.9, "idle_cores": 0}
    assert triage(healthy).startswith("memory side is healthy")
    assert triage({**healthy, "bandwidth_utilisation": 0}).startswith("layout")  # an all-zero profile
    for key, value, first in (("idle_cores", 3, "parallelism"), ("format_conversions", 1, "format"), ("wrapper_time_share", 0.2, "host work")):
        healthy = {**healthy, key: value}
        assert triage(healthy).startswith(first)  # each suspect outranks the ones after it
    edges.mark("empty")


@check("troubleshooting:do:block")
def _(block, edges):
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        ns = load(block)
    code = ns["result"].returncode
    if platform.machine() in ("x86_64", "AMD64"):  # integer division traps on x86 only
        assert code == -8 and shown.getvalue().strip() == "-8"
    else:
        assert code in (0, -8)
    edges.mark("extremes")


# ---------------------------------------------------------------- the tests

@pytest.mark.parametrize("block", runnable_blocks(), ids=lambda b: b.key)
def test_page_block_runs_and_shows_its_claim(block, request):
    """The block's check runs it on the edges its marker promises (and no others)."""
    fn = CHECKS.get(block.key)
    assert fn is not None, f"{pages()[block.page].path}:{block.line}: no check is registered for {block.key}"
    edges = Edges(block)
    if "tmp_path" in inspect.signature(fn).parameters:
        fn(block, edges, request.getfixturevalue("tmp_path"))
    else:
        fn(block, edges)
    assert edges.seen == edges.promised, f"marker promises {sorted(edges.promised)}, the check ran {sorted(edges.seen)}"


def test_every_check_has_its_block():
    keys = {b.key for b in runnable_blocks()}
    assert set(CHECKS) <= keys, f"checks for blocks that are gone: {sorted(set(CHECKS) - keys)}"


def _audit_codes(block) -> set[str]:
    source = "import torch\n" + block.source
    launchers = tuple(sorted(set(KERNEL_NAME.findall(block.source))))
    found = audit_source(source, f"{block.page}.py", launchers=launchers).findings
    if any(c.startswith("GD") for c in block.fails):  # a golden, judged in a three-party case
        spec = load_spec(REPO / "ops" / "softmax.yaml")
        found = audit_source(source, "golden.py", families=FamilyOptions(roles=frozenset({"golden"}), spec=spec, find_specs=False)).findings
    return {f.code for f in found}


@pytest.mark.parametrize("block", [b for b in runnable_blocks() if b.role == "dont" and set(b.fails) - {WRONG_RESULT}], ids=lambda b: b.key)
def test_dont_block_is_reported_under_its_codes(block):
    codes = set(block.fails) - {WRONG_RESULT}
    assert codes <= _audit_codes(block), f"the audit does not report {sorted(codes - _audit_codes(block))}"


@pytest.mark.parametrize("block", [b for b in runnable_blocks() if b.role == "do" and "_wrapper" in b.source], ids=lambda b: b.key)
def test_do_wrapper_audits_clean(block):
    assert not _audit_codes(block)


def test_the_kb_has_no_unmarked_block():
    problems = [f"{p.path}:{pr.line}: {pr.code} {pr.message}" for p in pages().values() for pr in p.problems]
    assert not problems, "\n".join(problems)
    assert len(runnable_blocks()) >= 60


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA is not available: one_record and measure time device memory and events")
@pytest.mark.parametrize("key", ["memory-parity:do:one_record+gap", "performance-protocol:do:measure+verdict"])
def test_cuda_blocks(key):
    block = next(b for b in runnable_blocks() if b.key == key)
    ns = load(block)
    x = torch.ones(1 << 20, device="cuda")
    if "one_record" in key:
        record = ns["one_record"](lambda: torch.ones(1 << 20, device="cuda"), lambda t: t * 2)
        assert record["incremental_allocated"] >= 4 << 20
    else:
        times, digest = ns["measure"](lambda: x * 2, warmup=2, iters=5)
        assert len(times) == 5 and len(digest) == 64



# Each of these Don't checks, run on its page's Do block (same entry, same signature), must
# fail: a check that passes on the remedy as well proves nothing about the violation.
DISCRIMINATING = (
    "accumulator-precision:dont:row_sum_fp16", "golden-framework:dont:softmax_golden",
    "golden-promote:dont:softmax_golden", "golden-promote:dont:softmax_golden#2",
    "kernel-bit-reinterpretation:dont:bernoulli_wrapper", "layout-format:dont:softmax_wrapper",
    "sample-driver-vs-delivery:dont:softmax_wrapper", "dynamic-shape-versions:dont:mean_wrapper",
    "wrapper-boundary:dont:op_wrapper", "exact-fast-paths:dont:bernoulli_wrapper",
    "tensorlist-fixed-slots:dont:foreach_add_wrapper", "reduction-order:dont:row_sum",
)


@pytest.mark.parametrize("key", DISCRIMINATING)
def test_dont_check_fails_on_the_do_block(key):
    dont = next(b for b in runnable_blocks() if b.key == key)
    do = next(b for b in pages()[dont.page].blocks if b.tested and b.role == "do")
    remedy = dataclasses.replace(dont, source=do.source, uses=do.uses)
    if key == "reduction-order:dont:row_sum":  # the Do names its function row_sum_blocked
        remedy = dataclasses.replace(remedy, source=do.source + "\nrow_sum = row_sum_blocked\n")
    with pytest.raises((AssertionError, ValueError, TypeError)) as caught:
        CHECKS[key](remedy, Edges(remedy))
    if caught.type is not AssertionError:  # only the Do's own refusal may stop it first
        assert any(s in str(caught.value) for s in ("offset", "need 1..", "unsupported", "dtype")), caught.value
