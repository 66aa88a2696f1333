"""Start-up cost of `kbt select` against a bare interpreter (`python -c pass`), measured in
the same run. The KB commands must not import torch, numpy or pandas; this prints the ratio
and which heavy modules, if any, the command imported.

    python benchmarks/bench_startup.py [--runs 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def median_seconds(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as out:
        select = [sys.executable, "-m", "kb_tools", "select", "ops/softmax.yaml", "-o", out]
        bare = [sys.executable, "-c", "pass"]
        subprocess.run(select, cwd=ROOT, check=True, capture_output=True)  # warm the file cache
        t_bare = median_seconds(bare, args.runs)
        t_select = median_seconds(select, args.runs)
    probe = ("import sys; from kb_tools.cli import main; import io, contextlib\n"
             "with contextlib.redirect_stdout(io.StringIO()): main(['select', 'ops/softmax.yaml', '-o', sys.argv[1]])\n"
             "print(','.join(m for m in ('torch', 'numpy', 'pandas', 'scipy') if m in sys.modules) or 'none')")
    with tempfile.TemporaryDirectory() as out:
        heavy = subprocess.run([sys.executable, "-c", probe, out], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    print(f"python -c pass      median {t_bare * 1000:7.1f} ms  ({args.runs} runs)")
    print(f"kbt select softmax  median {t_select * 1000:7.1f} ms  ({args.runs} runs)")
    print(f"ratio select / bare interpreter: {t_select / t_bare:.2f}x")
    print(f"heavy modules imported by kbt select: {heavy}")


if __name__ == "__main__":
    main()
