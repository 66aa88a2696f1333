"""In-place expansion: bit-exact against np.unpackbits for the ten dtypes in numpy and torch,
by the compiled per-wave kernel and by the tiles; the low-to-high order corrupts; temporaries
bounded by a tile (tiles) or by the constant table (kernel)."""

import os
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import torch

from kb_tools.memory.expand import expand_from, expand_inplace, expand_low_to_high

from conftest import REPO

TORCH_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.uint8,
                torch.int8, torch.int16, torch.int32, torch.int64, torch.bool]
NUMPY_DTYPES = [np.float16, np.float32, np.float64, np.uint8, np.int8, np.int16, np.int32, np.int64, np.bool_]
SIZES = [1, 7, 8, 255, 256, 257, 2049, 4096, 70001]


def packed(rng, n):
    return rng.integers(0, 256, -(-n // 8), dtype=np.uint8)


def reference(mask, n):
    return np.unpackbits(mask, bitorder="little", count=n)


def torch_with_mask(mask, n, dtype, device="cpu", shape=None):
    out = torch.full((n,), 7, dtype=dtype, device=device) if dtype != torch.bool else torch.ones(n, dtype=dtype, device=device)
    out.view(torch.uint8)[: mask.size].copy_(torch.from_numpy(mask))
    return out.view(shape) if shape else out


@pytest.mark.parametrize("route", ["kernel", "tiles"])
@pytest.mark.parametrize("dtype", NUMPY_DTYPES, ids=lambda d: np.dtype(d).name)
def test_numpy_bit_exact(dtype, route):
    rng = np.random.default_rng(1)
    for n in SIZES:
        mask = packed(rng, n)
        out = np.full(n, 7, dtype=dtype)
        out.view(np.uint8)[: mask.size] = mask
        expand_inplace(out, tile=512, route=route)
        assert np.array_equal(out, reference(mask, n).astype(dtype)), n


@pytest.mark.parametrize("route", ["kernel", "tiles"])
def test_numpy_bfloat16_bit_patterns(route):
    rng = np.random.default_rng(2)
    mask = packed(rng, 3001)
    out = np.zeros(3001, dtype=np.uint16)
    out.view(np.uint8)[: mask.size] = mask
    expand_inplace(out, bfloat16=True, route=route)
    as_bf16 = torch.from_numpy(out.view(np.int16)).view(torch.bfloat16)
    assert torch.equal(as_bf16, torch.from_numpy(reference(mask, 3001)).to(torch.bfloat16))


@pytest.mark.parametrize("route", ["kernel", "tiles"])
@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_torch_bit_exact_and_exact_zero_one(dtype, route):
    rng = np.random.default_rng(3)
    for n in SIZES:
        mask = packed(rng, n)
        out = torch_with_mask(mask, n, dtype)
        expand_inplace(out, tile=512, route=route)
        expected = torch.from_numpy(reference(mask, n)).to(dtype)
        assert torch.equal(out, expected), n
        assert set(out.to(torch.float64).unique().tolist()) <= {0.0, 1.0}


def test_multidimensional_and_default_tile():
    rng = np.random.default_rng(4)
    mask = packed(rng, 300 * 301)
    out = torch_with_mask(mask, 300 * 301, torch.float32, shape=(300, 301))
    expand_inplace(out)
    assert torch.equal(out.reshape(-1), torch.from_numpy(reference(mask, 300 * 301)).float())


@pytest.mark.parametrize("dtype", [torch.uint8, torch.float16, torch.float32, torch.int64])
def test_low_to_high_corrupts(dtype):
    rng = np.random.default_rng(5)
    n = 8192
    mask = packed(rng, n)
    out = torch_with_mask(mask, n, dtype)
    expand_low_to_high(out)
    wrong = int((out != torch.from_numpy(reference(mask, n)).to(dtype)).sum())
    assert wrong > n // 10


def test_separate_mask_path_matches():
    rng = np.random.default_rng(6)
    mask = packed(rng, 5000)
    out = torch.empty(5000, dtype=torch.int16)
    expand_from(torch.from_numpy(mask), out, tile=256)
    assert torch.equal(out, torch.from_numpy(reference(mask, 5000)).to(torch.int16))


def test_temporaries_bounded_by_tile(monkeypatch):
    """Every temporary the torch path makes is a per-tile index (tile/8 int64 = tile bytes) or
    the constant 256x8 bit table; none grows with n."""
    seen = []
    real = torch.Tensor.to

    def spy(self, *args, **kwargs):
        result = real(self, *args, **kwargs)
        seen.append(result.numel() * result.element_size())
        return result

    rng = np.random.default_rng(7)
    n, tile = 200_000, 1024
    out = torch_with_mask(packed(rng, n), n, torch.float32)
    monkeypatch.setattr(torch.Tensor, "to", spy)
    expand_inplace(out, tile=tile, route="tiles")
    monkeypatch.undo()
    table_bytes = 256 * 8 * 4
    assert seen and max(seen) <= max(tile, table_bytes) < n * 4 // 50


@pytest.mark.parametrize("width_dtype", [torch.uint8, torch.float16, torch.float32, torch.int64], ids=str)
def test_kernel_many_waves_and_unaligned_end(width_dtype):
    """Sizes with several waves, an end that is no multiple of 8 and one just past a wave
    boundary: the parallel per-wave loop still reads every mask byte before it is written."""
    rng = np.random.default_rng(9)
    for n in (1 << 20, (1 << 20) + 5, 4 * 256 * 8 * 2 + 1, 300_017):
        mask = packed(rng, n)
        out = torch_with_mask(mask, n, width_dtype)
        expand_inplace(out, route="kernel")
        assert torch.equal(out, torch.from_numpy(reference(mask, n)).to(width_dtype)), n


def test_kernel_route_allocates_nothing_that_grows_with_n():
    """The compiled route's only buffers are the 256x8 table (built once per dtype), the
    <= 32-byte prefix copy and the pool's bookkeeping: the traced peak is the same for n and
    8n, where a copy of the mask would add 7n/8 bytes and a tile's index 14 KiB per tile."""
    peaks = {}
    for n in (1 << 20, 1 << 23):
        rng = np.random.default_rng(10)
        out = np.zeros(n, dtype=np.float64)
        mask = packed(rng, n)
        expand_inplace(out, route="kernel")  # compiled or loaded, pool started, outside the trace
        out.view(np.uint8)[: mask.size] = mask
        tracemalloc.start()
        expand_inplace(out, route="kernel")
        peaks[n] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert np.array_equal(out, reference(mask, n).astype(np.float64))
    assert peaks[1 << 23] <= peaks[1 << 20] + 4096 and peaks[1 << 23] < 64 * 1024, peaks


def test_kernel_threads_follow_torch_and_one_thread_uses_no_pool(monkeypatch):
    """threads=1 (or torch.set_num_threads(1)) runs the loop on the calling thread; more
    threads share a large wave through the pool; both bit-exact."""
    from kb_tools.memory import kernels

    rng = np.random.default_rng(11)
    n = (1 << 20) + 3  # the top wave holds > POOL_MIN_BYTES mask bytes
    mask = packed(rng, n)
    expected = torch.from_numpy(reference(mask, n)).float()
    used = []
    real_pool = kernels._pool
    monkeypatch.setattr(kernels, "_pool", lambda threads: used.append(threads) or real_pool(threads))
    for threads in (1, 2, 3):
        out = torch_with_mask(mask, n, torch.float32)
        assert torch.equal(expand_inplace(out, route="kernel", threads=threads), expected), threads
    assert set(used) == {2, 3}
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        used.clear()
        out = torch_with_mask(mask, n, torch.float32)
        assert torch.equal(expand_inplace(out, route="kernel"), expected)
        assert used == []
    finally:
        torch.set_num_threads(saved)
    with pytest.raises(ValueError, match="threads must be >= 1"):
        expand_inplace(torch.zeros(64), threads=0)


def test_chunks_cover_the_wave_and_start_on_bytes():
    from kb_tools.memory.kernels import chunks

    for start, end, parts in [(256, 1_000_003, 8), (0, 8, 4), (512, 520, 3), (2048, 1 << 20, 16)]:
        pieces = chunks(start, end, parts)
        assert pieces[0][0] == start and pieces[-1][1] == end and len(pieces) <= parts
        assert all(a % 8 == 0 and a < b for a, b in pieces)
        assert all(pieces[i][1] == pieces[i + 1][0] for i in range(len(pieces) - 1))


def _expand_in_child(n):
    rng = np.random.default_rng(12)
    mask = packed(rng, n)
    out = np.zeros(n, dtype=np.int32)
    out.view(np.uint8)[: mask.size] = mask
    expand_inplace(out, route="kernel", threads=2)
    return bool(np.array_equal(out, reference(mask, n).astype(np.int32)))


def test_kernel_pool_works_in_a_forked_child():
    """The parent's pool threads do not exist in a forked child: the child makes its own
    instead of waiting on threads that will never run."""
    import multiprocessing

    n = 1 << 21
    assert _expand_in_child(n)  # the parent's pool now has live threads
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply_async(_expand_in_child, (n,)).get(timeout=120)


def test_refuses_unknown_route_readonly_and_kernel_for_odd_widths():
    with pytest.raises(ValueError, match="route must be one of"):
        expand_inplace(torch.zeros(64), route="fast")
    readonly = np.zeros(64, dtype=np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="writeable"):
        expand_inplace(readonly)
    with pytest.raises(ValueError, match="needs numba"):
        expand_inplace(np.zeros(64, dtype=np.complex128), route="kernel")
    wide = np.zeros(64, dtype=np.complex128)
    wide.view(np.uint8)[:8] = 0b10100101
    expand_inplace(wide)  # auto falls back to the tiles
    assert np.array_equal(wide, reference(np.full(8, 0b10100101, np.uint8), 64).astype(np.complex128))


def test_refuses_non_contiguous_and_bad_tile():
    with pytest.raises(ValueError, match="contiguous"):
        expand_inplace(torch.zeros(16, 16).t())
    with pytest.raises(ValueError, match="multiple of 256"):
        expand_inplace(torch.zeros(1000), tile=300)
    with pytest.raises(ValueError, match="C-contiguous"):
        expand_inplace(np.zeros((16, 16)).T)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
@pytest.mark.parametrize("route", ["auto", "tiles"])
@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_cuda_bit_exact(dtype, route):
    rng = np.random.default_rng(8)
    for n in SIZES + [(1 << 20) + 5]:
        mask = packed(rng, n)
        out = torch_with_mask(mask, n, dtype, device="cuda")
        expand_inplace(out, tile=512, route=route)
        assert torch.equal(out.cpu(), torch.from_numpy(reference(mask, n)).to(dtype)), n


TRITON_IN_INTERPRETER = """
import numpy as np, torch
from kb_tools.memory.expand import expand_inplace
from kb_tools.runtime import backends
rng = np.random.default_rng(13)
for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.int64, torch.bool, torch.int8):
    for n in (1, 300, 4099, 70001):
        mask = rng.integers(0, 256, -(-n // 8), dtype=np.uint8)
        out = torch.zeros(n, dtype=dtype)
        out.view(torch.uint8)[: mask.size].copy_(torch.from_numpy(mask))
        expand_inplace(out, route="kernel", backend="triton")
        expected = torch.from_numpy(np.unpackbits(mask, bitorder="little", count=n)).to(dtype)
        assert torch.equal(out, expected), (dtype, n)
assert backends.launches["wave_kernel"] > 0
"""


def test_triton_wave_kernel_bit_exact_in_the_interpreter():
    """The per-wave Triton kernel, run by Triton's CPU interpreter on CPU tensors (the triton
    backend): the same program the GPU runs, checked where no GPU is (bfloat16 and bool
    included). triton is a dependency: its absence fails here, it is not skipped."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    result = subprocess.run([sys.executable, "-c", TRITON_IN_INTERPRETER], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
