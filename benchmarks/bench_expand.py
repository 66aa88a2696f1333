"""In-place expansion of 2^26 elements against its peers, same run, ratios only.

Peers: ``out.fill_(1)`` (the write-bandwidth floor), ``torch.empty(...).bernoulli_(0.5)``
(allocation included, as a caller would write it) and ``np.unpackbits`` into a new buffer.
Times are medians of a few repeats on a pre-touched output (page faults excluded for the
in-place routes; the mask copy into the output is timed apart and subtracted). The expansion
uses the seed's UB-sized tile (16,384 / 14,336 elements), so Python's per-tile overhead
is part of what is measured. Extra peak memory comes from :mod:`kb_tools.memory.parity` (fresh
processes; CPU: peak RSS growth) as a share of the output's bytes; the aim for the aliased
path is at most 1 %.

    .venv/bin/python benchmarks/bench_expand.py [--log2n 26] [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial

import numpy as np
import torch

from kb_tools.memory import parity
from kb_tools.memory.expand import expand_inplace


def timed(fn, repeats):
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def with_mask(out, mask):
    out.view(-1).view(torch.uint8)[: mask.size].copy_(torch.from_numpy(mask))
    return out


# Picklable cases for the memory measurement (each runs in a fresh process).
def setup_masked(device, *, n, dtype):
    rng = np.random.default_rng(0)
    out = torch.zeros(n, dtype=getattr(torch, dtype), device=device)
    return with_mask(out, rng.integers(0, 256, n // 8, dtype=np.uint8))


def op_expand(out):
    expand_inplace(out)


def op_unpackbits(out):
    np.unpackbits(out.view(torch.uint8)[: out.numel() // 8].numpy(), bitorder="little")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2n", type=int, default=26)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--memory-runs", type=int, default=2)
    args = parser.parse_args()
    n = 1 << args.log2n
    rng = np.random.default_rng(0)
    mask = rng.integers(0, 256, n // 8, dtype=np.uint8)
    print(f"n = 2^{args.log2n} = {n:,} elements, median of {args.repeats}, torch threads {torch.get_num_threads()}")
    header = f"{'dtype':8s} {'route':30s} {'time s':>8s} {'/ fill_':>8s} {'/ bernoulli_':>12s} {'/ unpackbits':>12s} {'extra peak':>12s}"
    print(header)
    print("-" * len(header))
    for dtype in ("float16", "float32", "int64"):
        tdtype = getattr(torch, dtype)
        out = torch.zeros(n, dtype=tdtype)
        out_bytes = n * out.element_size()
        t_fill = timed(lambda: out.fill_(1), args.repeats)
        t_bern = timed(lambda: torch.empty(n, dtype=tdtype).bernoulli_(0.5), args.repeats)
        t_unpack = timed(lambda: np.unpackbits(mask, bitorder="little"), args.repeats)
        rows = [("out.fill_(1)", t_fill, None), ("torch.empty().bernoulli_(0.5)", t_bern, None),
                ("np.unpackbits -> new buffer", t_unpack, op_unpackbits)]

        def run():
            with_mask(out, mask)
            expand_inplace(out)
        t_mask = timed(lambda: with_mask(out, mask), args.repeats)
        rows.append(("in-place expand (UB tile)", max(timed(run, args.repeats) - t_mask, 1e-9), op_expand))
        for route, seconds, op in rows:
            share = ""
            if op is not None:
                result = parity.measure(partial(setup_masked, n=n, dtype=dtype), op, runs=args.memory_runs)
                share = f"{100 * result.medians['incremental_allocated'] / out_bytes:.3f}%"
            print(f"{dtype:8s} {route:30s} {seconds:8.4f} {seconds / t_fill:8.2f} {seconds / t_bern:12.3f} "
                  f"{seconds / t_unpack:12.3f} {share:>12s}")
    print(f"extra peak: {result.method}; share of the output's bytes")


if __name__ == "__main__":
    main()
