"""Which compiler fuses the comparison pass (issue 27): numba (``kb_tools.numerics.onepass``)
against ``torch.compile`` (inductor, C++ on the CPU) and against eager torch, on the same
statistics — mix_tolerance's and stat_rel_err's counts, relative-error sum and maxima — of the
same float32 tensors, in the same run.

Printed for each: the first call (compile included) in seconds, the median wall and CPU time of
``--rounds`` interleaved calls, each as a ratio to one read of the inputs (a sum over each leg),
and whether its counts and maxima equal numba's bit for bit (the sums to 1e-6: the order of
addition differs). The eager row is the torch route the criteria take off the CPU (the chunked
passes with onepass switched off).

Run: .venv/bin/python benchmarks/bench_compare_compilers.py [--log2n 24] [--rounds 7] [--threads 2]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from kb_tools.numerics import criteria, onepass
from kb_tools.numerics import tolerances as tol

ROW = tol.mix_row("float32")


def stats_torch(a, g):
    """The one-pass statistics written as whole-tensor torch ops, for torch.compile to fuse."""
    fin = torch.isfinite(a) & torch.isfinite(g)
    ag = g.abs()
    e = torch.where(fin, (a - g).abs(), 0.0)
    agree = (torch.isnan(a) & torch.isnan(g)) | (a == g)
    matched = ((fin & (e <= ag * ROW.rtol + ROW.atol)) | (~fin & agree)).sum()
    rel = torch.where(fin, e / (ag + tol.REL_EPS), 0.0)
    return matched, (~fin & ~agree).sum(), fin.sum(), rel.double().sum(), e.amax(), rel.amax()


def stats_numba(a, g):
    s, _ = onepass.pair(a, g, False, ROW.rtol, ROW.atol, metrics=False)
    return s["matched"], s["mismatched"], s["finite"], s["sum_rel_w"], s["max_err"], s["max_rel_w"]


def stats_eager(a, g):
    saved = onepass.supports
    onepass.supports = lambda *legs: False
    try:
        mix = criteria.mix_tolerance(a, g).metrics
        stat = criteria.stat_rel_err(a, g).metrics
    finally:
        onepass.supports = saved
    # the verdicts carry no mismatch or finite counts: None, not compared
    return round(mix["matched_ratio"] * a.numel()), None, None, stat["mere"] * a.numel(), mix["max_abs_error"], stat["mare"]


def as_floats(result) -> list[float | None]:
    return [None if x is None else float(x) for x in result]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    n = 1 << args.log2n
    gen = torch.Generator().manual_seed(0)
    g = torch.empty(n).normal_(generator=gen)
    a = torch.empty(n).normal_(generator=gen).mul_(1e-6).mul_(g).add_(g)
    calls = {"read": lambda: (a.sum(), g.sum()), "numba": lambda: stats_numba(a, g),
             "torch.compile": torch.compile(lambda: stats_torch(a, g), dynamic=False),
             "eager torch": lambda: stats_eager(a, g)}
    first, results = {}, {}
    for name, fn in calls.items():
        t0 = time.perf_counter()
        results[name] = fn()
        first[name] = time.perf_counter() - t0
    wall = {name: [] for name in calls}
    cpu = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, fn in calls.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    w = {k: statistics.median(v) for k, v in wall.items()}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"2^{args.log2n} float32, {args.threads} threads, median of {args.rounds} interleaved rounds")
    reference = as_floats(results["numba"])
    for name in calls:
        same = ""
        if name != "read":
            got = as_floats(results[name])
            exact = [got[i] == reference[i] for i in (0, 1, 2, 4, 5) if got[i] is not None]
            close = abs(got[3] - reference[3]) <= 1e-6 * abs(reference[3])
            same = f"  counts/maxima equal numba's: {all(exact)}, sum within 1e-6: {close}"
        print(f"  {name:14s} first call {first[name]:7.2f} s  wall {w[name] * 1e3:8.2f} ms (x read {w[name] / w['read']:5.2f})"
              f"  cpu {c[name] * 1e3:8.2f} ms (x read {c[name] / c['read']:5.2f}){same}")


if __name__ == "__main__":
    main()
