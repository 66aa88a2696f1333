"""Compare at the memory floor (issue 27): each TTK criterion of one comparison against one read
of the same inputs, and against the peers, in the same run.

Floor: one read of the inputs — a torch sum over each leg (DUT and golden; with the third party
for cross_check) on the CPU; on CUDA a device-to-device copy of the same bytes. On the CPU the
read is timed both with ``--threads`` threads and with one, and each ratio is to the cheaper of
the two (CPU time against the lower CPU time, wall against the lower wall): the benchmark runs
with ``OMP_WAIT_POLICY=passive`` (it restarts itself so), since with libgomp's default the idle
OpenMP threads spin after each parallel region and bill that spinning as CPU time of the read
(measured: a 2-thread sum of 2^20 floats cost 25x its 1-thread CPU time), a floor slower than
one read. Contenders, on
the same float32 tensors (relative errors around 1e-6, every criterion passes):

- ``mix_tolerance``, ``stat_rel_err``, ``cross_check``: ``criteria.judge``, the verdict alone;
- ``compare <criterion>``: ``criteria.compare``, the verdict and every leg's metrics from the
  same pass — what ``kbt compare`` and a review's comparison check compute once the files are loaded;
- ``ttk <criterion>``: TTK's own code (hicann/ops-test-kit ``ttk/core_modules/comparison/``),
  ``compare_impl()`` on the numpy views, from a copy outside this repository (``--ttk DIR``, the
  folder that holds ``ttk/``); skipped, and said so, without one;
- ``assert_close``: ``torch.testing.assert_close`` with tolerances it passes.

Time: ``--rounds`` rounds with every contender interleaved in each, so machine noise hits all
alike (below 2^24 each sample is the mean of up to 16 calls); the median wall-clock and CPU time
(all threads) of each, and each one's ratio to its floor's median (2 legs or 3). On a loaded machine the CPU-time ratio is the steadier one. Peers
run only up to ``--peers-up-to`` (2^24 by default): at 2^28 TTK's numpy temporaries alone would
take ~10 GiB of a shared machine. Memory: peak extra resident set while one call runs (VmHWM
after ``/proc/self/clear_refs``, in a fresh child per contender, inputs made first), as a share
of the legs' bytes; on CUDA ``torch.cuda.max_memory_allocated`` above the inputs.

Aims (issue 27): mix_tolerance and stat_rel_err <= 2.5x the read, cross_check <= 3x (the
``compare`` rows, metrics included, are printed against the same aims); extra peak memory <= 2 %
of the inputs.

Run: .venv/bin/python benchmarks/bench_compare.py [--log2n 20,24,28] [--rounds 7] [--threads 2]
     [--ttk /tmp/opkb/ttk-src] [--device cpu|cuda] [--memory-log2n 24] [--json FILE]
(the issue-27 table: ``--log2n 20,24,28 --ttk DIR``, DIR a copy of hicann/ops-test-kit holding
``ttk/core_modules/comparison/``; a 2^28 run holds three 1 GiB legs — check ``free -g`` first).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

from kb_tools.numerics import criteria
from kb_tools.numerics import tolerances as tol

RTOL, ATOL = 1e-3, 1e-5  # loose enough that assert_close passes and builds no failure message
AIMS = {"mix_tolerance": 2.5, "stat_rel_err": 2.5, "cross_check": 3.0}
MEMORY_AIM = 0.02
CRITERIA = tuple(AIMS)


def inputs(n: int, device: str = "cpu"):
    """DUT, golden and third party without temporaries: three tensors, filled in place; relative
    errors around 1e-6, so every criterion passes (a failing TTK criterion sorts every element)."""
    gen = torch.Generator(device=device).manual_seed(0)
    golden = torch.empty(n, device=device).normal_(generator=gen)
    dut = torch.empty(n, device=device).normal_(generator=gen).mul_(1e-6).mul_(golden).add_(golden)
    third = torch.empty(n, device=device).normal_(generator=gen).mul_(1e-6).mul_(golden).add_(golden)
    return dut, golden, third


ONE_THREAD = " (1 thread)"  # suffix of the floors timed on one thread


def legs_read(name: str) -> int:
    return 3 if "cross_check" in name or name.startswith("read3") else 2


def _read(legs, count: int):
    return [leg.sum() for leg in legs[:count]]


def _copy(targets, legs, count: int):
    for target, leg in zip(targets[:count], legs[:count]):
        target.copy_(leg)


def load_ttk(folder: str | None):
    """TTK's three criterion classes from ``folder`` (which holds ttk/), or (None, why not)."""
    if not folder:
        return None, "no copy of TTK's comparison code given (--ttk DIR or OPKB_TTK_SRC)"
    if not (Path(folder) / "ttk" / "core_modules" / "comparison" / "cross_check.py").is_file():
        return None, f"{folder} holds no ttk/core_modules/comparison/cross_check.py"
    sys.path.insert(0, str(folder))
    from ttk.core_modules.comparison import cross_check, mix_tolerance, stat_rel_err

    return {"mix_tolerance": mix_tolerance.MixToleranceComparison, "stat_rel_err": stat_rel_err.StatRelErrComparison,
            "cross_check": cross_check.CrossCheckComparison}, ""


def ttk_options(name: str) -> dict:
    """TTK's resolved options for a float32 output (resolve.py), the names compare_impl reads."""
    if name == "mix_tolerance":
        row = tol.mix_row("float32")
        return {"rtol": row.rtol, "atol": row.atol, "required_matched_ratio": row.required_matched_ratio,
                "max_abs_error_limit": row.max_abs_error_limit}
    if name == "stat_rel_err":
        return {"threshold": tol.stat_threshold("float32")}
    sv, level = tol.SMALL_VALUE["float32"], tol.LEVELS[tol.DEFAULT_LEVEL]
    return {"small_value": sv.small_value, "small_value_atol": sv.small_value_atol, "mare_ratio": level.mare,
            "mere_ratio": level.mere, "rmse_ratio": level.rmse, "level": tol.DEFAULT_LEVEL}


def _ttk_call(cls, name, dut, golden, third):
    judged = object.__new__(cls)  # TTK's __init__ only flattens and stores; compare_impl is the criterion
    judged.output, judged.golden = dut.numpy(), golden.numpy()
    judged.third_party = third.numpy() if name == "cross_check" else None
    judged.tol_options = ttk_options(name)
    result = judged.compare_impl()
    assert result.is_pass, (name, result.metrics)


def contenders(legs, ttk, peers: bool) -> dict:
    """name -> zero-argument call; the floor first."""
    out = {}
    if legs[0].is_cuda:
        targets = [torch.empty_like(leg) for leg in legs]
        out["read2"] = functools.partial(_copy, targets, legs, 2)
        out["read3"] = functools.partial(_copy, targets, legs, 3)
    else:
        for count in (2, 3):
            out[f"read{count}"] = out[f"read{count}{ONE_THREAD}"] = functools.partial(_read, legs, count)
    for name in CRITERIA:
        out[name] = functools.partial(criteria.judge, name, *legs)
    for name in CRITERIA:
        out[f"compare {name}"] = functools.partial(criteria.compare, name, *legs)
    if peers and ttk and not legs[0].is_cuda:
        for name, cls in ttk.items():
            out[f"ttk {name}"] = functools.partial(_ttk_call, cls, name, *legs)
    if peers:
        out["assert_close"] = functools.partial(torch.testing.assert_close, legs[0], legs[1], rtol=RTOL, atol=ATOL)
    return out


def median_times(calls: dict, rounds: int, cuda: bool, repeats: int) -> dict:
    """name -> (median wall seconds, median CPU seconds) per call, the calls interleaved round by
    round; each sample is the mean of ``repeats`` calls, so that small sizes are not all noise.
    A name ending in ONE_THREAD runs with torch on one thread (set outside the timed calls)."""
    wall = {name: [] for name in calls}
    cpu = {name: [] for name in calls}
    threads = torch.get_num_threads()
    for fn in calls.values():  # compile and warm every path first
        fn()
    for _ in range(rounds):
        for name, fn in calls.items():
            torch.set_num_threads(1 if name.endswith(ONE_THREAD) else threads)
            if cuda:
                torch.cuda.synchronize()
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(repeats):
                fn()
            if cuda:
                torch.cuda.synchronize()
            wall[name].append((time.perf_counter() - t0) / repeats)
            cpu[name].append((time.process_time() - c0) / repeats)
    torch.set_num_threads(threads)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in calls}


def _status_bytes(key: str) -> int:
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith(key))
    return int(line.split()[1]) * 1024


def child_peak(name: str, log2n: int, threads: int, ttk_dir: str | None) -> None:
    """Run in a child: print the peak extra RSS (bytes) of one call of contender ``name``."""
    torch.set_num_threads(threads)
    ttk, _ = load_ttk(ttk_dir)
    legs = inputs(1 << log2n)
    contenders([t[:4096] for t in legs], ttk, True)[name]()  # warm the code paths, not the data
    call = contenders(legs, ttk, True)[name]
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the RSS high-water mark to the current RSS
    before = _status_bytes("VmRSS:")
    call()
    print(json.dumps({"extra": _status_bytes("VmHWM:") - before}))


def peak_extra_rss(name: str, log2n: int, threads: int, ttk_dir: str | None) -> int:
    command = [sys.executable, __file__, "--child", name, "--log2n", str(log2n), "--threads", str(threads)]
    out = subprocess.run(command + (["--ttk", ttk_dir] if ttk_dir else []), capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["extra"]


def cuda_peak_extra(call) -> int:
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    call()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


def report(device: str, log2n: int, times: dict, extra: dict) -> list[dict]:
    """Rows of figures for one size, printed as they are made."""
    n = 1 << log2n
    floor_name = ("a device-to-device copy" if device == "cuda" else
                  "a sum over each leg, the cheaper of --threads threads and 1 thread, by CPU and by wall time")
    print(f"[{device}] 2^{log2n} float32 elements ({n * 4 / 2**20:.0f} MiB per leg), floor: {floor_name}")
    rows = []
    for name, (wall, cpu) in times.items():
        floor = f"read{legs_read(name)}"
        reads = [times[f] for f in (floor, floor + ONE_THREAD) if f in times]
        floor_wall, floor_cpu = min(r[0] for r in reads), min(r[1] for r in reads)
        criterion = name.split()[-1]
        row = {"device": device, "log2n": log2n, "contender": name, "wall_ms": wall * 1e3, "cpu_ms": cpu * 1e3,
               "floor": floor, "floor_wall_ms": floor_wall * 1e3, "floor_cpu_ms": floor_cpu * 1e3,
               "ratio_wall": wall / floor_wall, "ratio_cpu": cpu / floor_cpu,
               "aim": AIMS.get(name),  # the aims are the criteria's; compare holds itself to them too
               "aim_with_metrics": AIMS[criterion] if name == f"compare {criterion}" and criterion in AIMS else None}
        if name in extra:
            row["extra_bytes"] = extra[name]
            row["extra_share"] = extra[name] / (legs_read(name) * n * 4)
        rows.append(row)
        aim = row["aim"] or row["aim_with_metrics"]
        aim = f" (aim <= {aim:g})" if aim else ""
        mem = (f"  extra peak {row['extra_bytes'] / 2**20:6.2f} MiB = {100 * row['extra_share']:5.2f} % of its input"
               if "extra_bytes" in row else "")
        print(f"  {name:26s} wall {row['wall_ms']:9.2f} ms  cpu {row['cpu_ms']:9.2f} ms  "
              f"x {floor}: wall {row['ratio_wall']:5.2f} cpu {row['ratio_cpu']:5.2f}{aim}{mem}")
    for name in times:
        if name.startswith(("ttk ", "assert_close")):
            ours = name.removeprefix("ttk ") if name.startswith("ttk ") else "mix_tolerance"
            print(f"  peer {name}: {times[name][1] / times[ours][1]:.1f}x the CPU time of {ours}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--log2n", default="20,24,28", help="sizes, 2^N float32 elements each (default 20,24,28)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--ttk", default=os.environ.get("OPKB_TTK_SRC"), metavar="DIR",
                        help="folder holding a copy of TTK's ttk/core_modules/comparison/ (or $OPKB_TTK_SRC)")
    parser.add_argument("--peers-up-to", type=int, default=24, metavar="N", help="run the peers up to 2^N (default 24)")
    parser.add_argument("--memory-log2n", type=int, default=24, metavar="N",
                        help="measure peak memory at 2^N elements (default 24; 0: not at all)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--child")
    args = parser.parse_args()
    if os.environ.get("OMP_WAIT_POLICY", "").lower() != "passive":  # see the docstring: no spinning floor
        os.environ["OMP_WAIT_POLICY"] = "passive"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    sizes = [int(s) for s in args.log2n.split(",")]
    if args.child:
        child_peak(args.child, sizes[0], args.threads, args.ttk)
        return
    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        print(f"cuda: skipped (torch {torch.__version__} sees no CUDA device)")
        return
    ttk, why = load_ttk(args.ttk)
    if ttk is None:
        print(f"ttk: skipped ({why})")
    print(f"{args.threads} threads, median of {args.rounds} interleaved rounds; load average "
          f"{os.getloadavg()[0]:.1f} at start (a loaded machine inflates wall time more than CPU time)")
    rows = []
    for log2n in sizes:
        legs = inputs(1 << log2n, args.device)
        peers = log2n <= args.peers_up_to
        calls = contenders(legs, ttk, peers)
        times = median_times(calls, args.rounds, args.device == "cuda", repeats=min(16, 1 << max(0, 24 - log2n)))
        extra = {}
        if log2n == args.memory_log2n:
            for name in calls:
                if args.device == "cuda":
                    extra[name] = cuda_peak_extra(calls[name])
                elif not name.startswith("read"):
                    extra[name] = peak_extra_rss(name, log2n, args.threads, args.ttk)
        rows += report(args.device, log2n, times, extra)
        if not peers:
            print(f"  peers skipped above 2^{args.peers_up_to} (--peers-up-to)")
        del legs, calls
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
