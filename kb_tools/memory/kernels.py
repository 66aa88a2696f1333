"""The CPU expansion loop, compiled by numba: one call per wave, each mask byte's eight
elements loaded from a 256x8 table and stored together.

Why compiled: the tile-by-tile torch/numpy route pays Python and dispatch per tile plus an
int64 index temporary per tile, 4–9x a hot ``fill_`` at 2^26 elements; this loop reads each
mask byte once and writes straight into the output, at about the speed of ``fill_``
(``benchmarks/bench_expand.py`` prints the ratio). The eight table loads come before the
eight stores so that LLVM may merge them into one vector load and one vector store even
though it cannot prove that the table and the output do not overlap.

Threads: a large wave is cut into byte-aligned chunks, four per thread, handed to a pool of
Python threads that run the loop without the GIL; a thread that the scheduler holds back
leaves its chunks to the others. numba's own parallel loop (a static split with a barrier,
whose workers spin beside torch's OpenMP pool) measured 2–6x ``fill_`` on a loaded machine
where this pool and a single thread stayed near 1.2x.

Safety: inside an unbuffered wave no write lands on a mask byte that this wave or a later one
reads (:func:`kb_tools.memory.waves.plan_problems`), so the wave's chunks may run in any
order and at once, exactly as the per-wave GPU kernel's programs do. The buffered prefix (at
most 256 elements) is expanded from a copy of its mask bytes.

The output is handled through an integer view of its own width (int8/16/32/64) and a table of
the bit pattern of the dtype's 1, so four compiled variants serve all ten dtypes (bfloat16
and bool included) and no value is converted on the way.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import numba
import numpy as np

from kb_tools.memory.tiling import ceil_div

INT_VIEW = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
CHUNKS_PER_THREAD = 4
POOL_MIN_BYTES = 1 << 16  # smaller waves (512 Ki elements) run on the calling thread
_pools: dict[int, ThreadPoolExecutor] = {}
os.register_at_fork(after_in_child=_pools.clear)  # a forked child has none of the threads


@numba.njit(nogil=True, cache=True)
def _expand_range(mask, out, table, start, end):
    """out[start:end] = table rows of mask bits start..end-1; start is a multiple of 8."""
    whole = end // 8
    for byte in range(start // 8, whole):
        v = mask[byte]
        e0, e1, e2, e3 = table[v, 0], table[v, 1], table[v, 2], table[v, 3]
        e4, e5, e6, e7 = table[v, 4], table[v, 5], table[v, 6], table[v, 7]
        o = 8 * byte
        out[o], out[o + 1], out[o + 2], out[o + 3] = e0, e1, e2, e3
        out[o + 4], out[o + 5], out[o + 6], out[o + 7] = e4, e5, e6, e7
    for k in range(end - 8 * whole):
        out[8 * whole + k] = table[mask[whole], k]


def _pool(threads: int) -> ThreadPoolExecutor:
    if threads not in _pools:
        _pools[threads] = ThreadPoolExecutor(threads, thread_name_prefix="kbt-expand")
    return _pools[threads]


def chunks(start: int, end: int, parts: int) -> list[tuple[int, int]]:
    """[start, end) cut into at most ``parts`` pieces that start on a byte (8 elements)."""
    step = 8 * ceil_div(ceil_div(end - start, 8), parts)
    return [(a, min(a + step, end)) for a in range(start, end, step)]


@lru_cache(maxsize=None)
def bit_table(one_bits: int, width: int) -> np.ndarray:
    """256x8 table, row b = the bits of byte b (least significant first) as 0 or the bit
    pattern ``one_bits`` of the dtype's 1, in the integer type of ``width`` bytes; built once
    per dtype (read-only, shared)."""
    bits = (np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1
    table = (bits * one_bits).astype(INT_VIEW[width])
    table.flags.writeable = False
    return table


def expand_wave(words: np.ndarray, table: np.ndarray, start: int, end: int, buffered: bool,
                threads: int | None = None) -> None:
    """Expand elements start..end of ``words`` (the output's flat integer view, mask in its
    first bytes) from the mask in its own bytes; ``buffered`` copies the mask bytes first.
    ``threads`` (default: the CPU count) share a large wave."""
    mask = words.view(np.uint8)
    if buffered:
        mask = mask[: ceil_div(end, 8)].copy()
    threads = threads or os.cpu_count() or 1
    if threads == 1 or buffered or (end - start) // 8 < POOL_MIN_BYTES:
        _expand_range(mask, words, table, start, end)
        return
    pieces = chunks(start, end, CHUNKS_PER_THREAD * threads)
    for done in [_pool(threads).submit(_expand_range, mask, words, table, a, b) for a, b in pieces]:
        done.result()
