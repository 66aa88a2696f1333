"""Time ``kbt spec`` plus ``kbt audit`` over a whole CANN repository against its floor, in one run.

Usage: python benchmarks/cann/bench_spec_audit.py REPO [--rounds N]
Floor (issue 35, Performance): ast.parse of every Python file under REPO plus one read of every
C++ (.cpp .h .hpp .cc) and CSV file under it, in this process. Measured: the two commands as a
user runs them (``kbt spec REPO --format json`` then ``kbt audit REPO``, each a fresh process,
output discarded), so interpreter start and imports count against them. Floor and commands
alternate round by round and the best round of each is kept, so a machine busy with other work
weighs on both alike. Prints the times and the ratio (target: at most 2).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

CPP = (".cpp", ".h", ".hpp", ".cc")
KBT = Path(sys.executable).with_name("kbt")


def files(root: Path) -> tuple[list[Path], list[Path]]:
    """(Python files, C++ and CSV files) under ``root``; symlinks and dot folders skipped."""
    py, other = [], []
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in names:
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            if name.endswith(".py"):
                py.append(path)
            elif name.endswith(CPP) or name.endswith(".csv"):
                other.append(path)
    return py, other


def floor(py: list[Path], other: list[Path]) -> None:
    for path in py:
        try:
            ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            pass
    for path in other:
        path.read_bytes()


def commands(root: Path) -> tuple[float, float]:
    """(seconds of kbt spec, seconds of kbt audit)."""
    times = []
    for argv in ([str(KBT), "spec", str(root), "--format", "json"], [str(KBT), "audit", str(root)]):
        times.append(timed(subprocess.run, argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False))
    return times[0], times[1]


def startup() -> float:
    """One ``kbt --help``: what a fresh process costs before it reads anything."""
    return timed(subprocess.run, [str(KBT), "--help"], stdout=subprocess.DEVNULL, check=False)


def timed(fn, *args, **kwargs) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    py, other = files(root)
    floors, runs, starts = [], [], []
    for _ in range(rounds):
        floors.append(timed(floor, py, other))
        runs.append(commands(root))
        starts.append(startup())
    t_floor = min(floors)
    best = min(runs, key=sum)
    t_run = sum(best)
    print(f"files: {len(py)} Python, {len(other)} C++/CSV; cpus {os.cpu_count()}")
    print(f"floor (ast.parse of the Python + one read of C++ and CSV): {t_floor:.3f} s  (rounds {', '.join(f'{t:.2f}' for t in floors)})")
    print(f"kbt spec --format json + kbt audit: {t_run:.3f} s  (spec {best[0]:.2f} + audit {best[1]:.2f}; "
          f"rounds {', '.join(f'{sum(t):.2f}' for t in runs)}; one process start {min(starts):.2f})")
    print(f"ratio {t_run / t_floor:.2f} (target <= 2)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
