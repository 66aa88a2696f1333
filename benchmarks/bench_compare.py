"""Compare speed and memory: each TTK criterion through ``criteria.judge`` on 2^24 float32
elements against ``torch.testing.assert_close`` on the same tensors, in the same run, 2 threads.

Targets (issue 12): mix_tolerance, close and stat_rel_err at most 2x assert_close's time,
cross_check at most 3x, and peak extra memory at most 1x the input.

Time: 9 rounds, the contenders interleaved in this process so machine noise hits all alike; the
median of each is printed with the ratio to assert_close's median, for wall-clock time and for
the process's CPU time (both threads together) — on a shared, loaded machine the CPU-time ratio
is the steadier of the two, since waiting for a core is not counted. Memory: the peak extra resident
set size while one call runs — the kernel's high-water mark (VmHWM in /proc/self/status) is reset
through /proc/self/clear_refs after the inputs exist, then read after the call — in a fresh child
process per contender, as a multiple of the input size (every leg's bytes). torch's CPU allocator
keeps no peak statistics and tracemalloc does not see torch's allocations, hence RSS. On CUDA, if
present, torch.cuda.max_memory_allocated instead.
Run: .venv/bin/python benchmarks/bench_compare.py [--threads 2] [--rounds 9]
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import subprocess
import sys
import time

import torch

from kb_tools.numerics import criteria

N = 1 << 24
RTOL, ATOL = 1e-3, 1e-5  # loose enough that assert_close passes and builds no failure message
PEER = "torch.testing.assert_close"
LIMITS = {"mix_tolerance": 2.0, "close": 2.0, "stat_rel_err": 2.0, "cross_check": 3.0}


def inputs(device="cpu"):
    """DUT, golden and third party without temporaries: three tensors, filled in place."""
    gen = torch.Generator(device=device).manual_seed(0)
    golden = torch.empty(N, device=device).normal_(generator=gen)
    dut = torch.empty(N, device=device).normal_(generator=gen).mul_(1e-6).add_(golden)
    third = torch.empty(N, device=device).normal_(generator=gen).mul_(1e-6).add_(golden)
    return dut, golden, third


CONTENDERS = {name: functools.partial(criteria.judge, name) for name in LIMITS}
CONTENDERS[PEER] = lambda d, g, t: torch.testing.assert_close(d, g, rtol=RTOL, atol=ATOL)


def median_times(legs, rounds) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall-clock and CPU seconds of each contender."""
    wall = {name: [] for name in CONTENDERS}
    cpu = {name: [] for name in CONTENDERS}
    for _ in range(rounds):
        for name, fn in CONTENDERS.items():
            if legs[0].is_cuda:
                torch.cuda.synchronize()
            t0, c0 = time.perf_counter(), time.process_time()
            fn(*legs)
            if legs[0].is_cuda:
                torch.cuda.synchronize()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    return ({name: statistics.median(t) for name, t in wall.items()},
            {name: statistics.median(t) for name, t in cpu.items()})


def _status_bytes(key: str) -> int:
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith(key))
    return int(line.split()[1]) * 1024


def child_peak(name: str, threads: int) -> None:
    """Run in a child: print the peak extra RSS (bytes) of one call of contender ``name``."""
    torch.set_num_threads(threads)
    legs = inputs()
    CONTENDERS[name](*(t[:4096] for t in legs))  # warm the code paths, not the data
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the RSS high-water mark to the current RSS
    before = _status_bytes("VmRSS:")
    CONTENDERS[name](*legs)
    print(json.dumps({"extra": _status_bytes("VmHWM:") - before}))


def peak_extra_rss(name: str, threads: int) -> int:
    out = subprocess.run([sys.executable, __file__, "--child", name, "--threads", str(threads)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["extra"]


def cuda_peak_extra(name: str, legs) -> int:
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    CONTENDERS[name](*legs)
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        child_peak(args.child, args.threads)
        return
    torch.set_num_threads(args.threads)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if "cuda" not in devices:
        print("cuda: skipped (no CUDA device)")
    for device in devices:
        legs = inputs(device)
        times, cpu = median_times(legs, args.rounds)
        if device == "cpu":
            extra = {name: peak_extra_rss(name, args.threads) for name in CONTENDERS}
            how = "peak extra RSS"
        else:
            extra = {name: cuda_peak_extra(name, legs) for name in CONTENDERS}
            how = "peak extra CUDA allocation"
        print(f"[{device}] 2^24 float32 elements, {args.threads} threads, median of {args.rounds}; "
              f"input 64 MiB per leg")
        for name in CONTENDERS:
            legs_read = 3 if name == "cross_check" else 2
            input_bytes = legs_read * N * 4
            ratio = "" if name == PEER else (f"  ratio wall {times[name] / times[PEER]:.2f}, "
                                             f"cpu {cpu[name] / cpu[PEER]:.2f} (target <= {LIMITS[name]:g})")
            print(f"  {name:28s} wall {times[name] * 1e3:7.1f} ms  cpu {cpu[name] * 1e3:7.1f} ms  "
                  f"{how} {extra[name] / 2**20:6.1f} MiB = {extra[name] / input_bytes:.2f} x its input{ratio}")


if __name__ == "__main__":
    main()
