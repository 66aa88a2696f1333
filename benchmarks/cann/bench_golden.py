"""Time the golden rules over a CANN repository against their floor, in the same run.

Usage: python benchmarks/cann/bench_golden.py REPO
Floor: ast.parse of every operator's golden.py plus one read of its op_host/op_kernel C++
files. Measured: judge_golden on every golden (which parses it and reads the kernel). Prints
both times and the ratio (best of 3 each, serial, one process).
"""

from __future__ import annotations

import ast
import sys
import time
from pathlib import Path

from kb_tools.cann.golden_flow import golden_files, judge_golden
from kb_tools.cann.kernel import KERNEL_SUFFIXES


def _floor(goldens: list[Path]) -> None:
    for golden in goldens:
        ast.parse(golden.read_bytes())
        folder = golden.parents[2]
        for sub in ("op_host", "op_kernel"):
            for path in sorted((folder / sub).rglob("*")) if (folder / sub).is_dir() else []:
                if path.suffix in KERNEL_SUFFIXES:
                    path.read_bytes()


def _rules(goldens: list[Path]) -> None:
    for golden in goldens:
        judge_golden(golden, str(golden))


def _best(fn, goldens) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        fn(goldens)
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str]) -> int:
    goldens = golden_files(Path(argv[0]))
    floor, rules = _best(_floor, goldens), _best(_rules, goldens)
    print(f"{len(goldens)} goldens: floor (ast.parse + C++ reads) {floor:.3f} s, golden rules {rules:.3f} s, "
          f"ratio {rules / floor:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
