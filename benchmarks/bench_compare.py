"""Compare speed and memory: ``metrics.compute`` (every metric and every criterion's counts in one
pass) on 2^24 float32 elements against ``torch.testing.assert_close`` on the same tensors.

Time: best of 7, the two contenders interleaved in this process, printed as a ratio. Memory: the
peak extra resident set size (RSS) while one call runs — the kernel's high-water mark (VmHWM in
/proc/self/status) is reset through /proc/self/clear_refs after the inputs exist, then read after
the call — in a fresh child process per contender, printed as a multiple of the input size (the
DUT's plus the golden's bytes). torch's CPU allocator keeps no peak statistics and tracemalloc does
not see torch's allocations, hence RSS. On CUDA, if present, the same is
done with torch.cuda.max_memory_allocated.
Run: .venv/bin/python benchmarks/bench_compare.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import torch

from kb_tools.numerics import metrics

N = 1 << 24
RTOL, ATOL = 1e-3, 1e-5  # loose enough that assert_close passes and builds no failure message


def inputs(device="cpu"):
    """DUT and golden without temporaries: two tensors, filled in place."""
    gen = torch.Generator(device=device).manual_seed(0)
    golden = torch.empty(N, device=device).normal_(generator=gen)
    dut = torch.empty(N, device=device).normal_(generator=gen).mul_(1e-6).add_(golden)
    return dut, golden


CONTENDERS = {
    "kbt metrics.compute": lambda d, g: metrics.compute(d, g, "float32"),
    "torch.testing.assert_close": lambda d, g: torch.testing.assert_close(d, g, rtol=RTOL, atol=ATOL),
}


def best_times(dut, golden, repeats=7) -> dict[str, float]:
    """Best time of each contender, run alternately so machine noise hits both alike."""
    times = {name: [] for name in CONTENDERS}
    for _ in range(repeats):
        for name, fn in CONTENDERS.items():
            if dut.is_cuda:
                torch.cuda.synchronize()
            t0 = time.perf_counter()
            fn(dut, golden)
            if dut.is_cuda:
                torch.cuda.synchronize()
            times[name].append(time.perf_counter() - t0)
    return {name: min(t) for name, t in times.items()}


def _hwm_bytes() -> int:
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def _rss_bytes() -> int:
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmRSS:"))
    return int(line.split()[1]) * 1024


def child_peak(name: str) -> None:
    """Run in a child: print the peak extra RSS (bytes) of one call of contender ``name``."""
    dut, golden = inputs()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset the RSS high-water mark to the current RSS
    before = _rss_bytes()
    CONTENDERS[name](dut, golden)
    print(json.dumps({"extra": _hwm_bytes() - before}))


def peak_extra_rss(name: str) -> int:
    out = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["extra"]


def cuda_peak_extra(name: str, dut, golden) -> int:
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    CONTENDERS[name](dut, golden)
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base


def main() -> None:
    torch.set_num_threads(max(1, torch.get_num_threads()))
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    if "cuda" not in devices:
        print("cuda: skipped (no CUDA device)")
    input_bytes = 2 * N * 4
    for device in devices:
        dut, golden = inputs(device)
        times = best_times(dut, golden)
        if device == "cpu":
            extra = {name: peak_extra_rss(name) for name in CONTENDERS}
            how = "peak extra RSS"
        else:
            extra = {name: cuda_peak_extra(name, dut, golden) for name in CONTENDERS}
            how = "peak extra CUDA allocation"
        print(f"[{device}] 2^24 float32 elements, input size {input_bytes / 2**20:.0f} MiB (DUT + golden)")
        for name in CONTENDERS:
            print(f"  {name:28s} best of 7 {times[name] * 1e3:8.1f} ms   {how} {extra[name] / 2**20:7.1f} MiB "
                  f"= {extra[name] / input_bytes:.2f} x input")
        ours, peer = times["kbt metrics.compute"], times["torch.testing.assert_close"]
        print(f"  time ratio metrics.compute / assert_close = {ours / peer:.2f}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child_peak(sys.argv[2])
    else:
        main()
