"""Time ``kbt spec`` plus ``kbt audit`` over a whole CANN repository against its floor, in one run.

Usage: python benchmarks/cann/bench_spec_audit.py REPO [--rounds N]
Floor (issue 35, Performance): ast.parse of every Python file under REPO plus one read of every
C++ (.cpp .h .hpp .cc) and CSV file under it, in this process. Measured: the two commands as a
user runs them (``kbt spec REPO --format json`` then ``kbt audit REPO``, each a fresh process,
output discarded), so interpreter start and imports count against them; and the one run that
does both, ``kbt build REPO -o TMP`` (every folder's facts and every file's findings, in one
process with its jobs, written as the JSON, Markdown and HTML report). Floor and commands
alternate round by round and the best round of each is kept, so a machine busy with other work
weighs on both alike. Prints the times and the ratio (target: at most 2), and the load average.

The commands import their modules as an installed package does, from compiled bytecode: this
environment sets PYTHONDONTWRITEBYTECODE, under which every fresh ``kbt`` compiled its 56
modules again (about 0.08 s a command). The bytecode goes to a temporary PYTHONPYCACHEPREFIX,
never into the checkout; the first round compiles it, and the best round is kept.
``--compile-each-run`` measures as before (no bytecode kept).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
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


def commands(root: Path, env: dict, out: str) -> tuple[float, float, float]:
    """(seconds of kbt spec, of kbt audit, of kbt build: both in one run)."""
    times = []
    for argv in ([str(KBT), "spec", str(root), "--format", "json"], [str(KBT), "audit", str(root)],
                 [str(KBT), "build", str(root), "-o", out]):
        times.append(timed(subprocess.run, argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env))
    return times[0], times[1], times[2]


def startup(env: dict) -> float:
    """One ``kbt --help``: what a fresh process costs before it reads anything."""
    return timed(subprocess.run, [str(KBT), "--help"], stdout=subprocess.DEVNULL, check=False, env=env)


def command_env(cache: str | None) -> dict:
    """The commands' environment: bytecode kept under ``cache`` (None: none kept, as before)."""
    env = dict(os.environ)
    if cache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def timed(fn, *args, **kwargs) -> float:
    start = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 3
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
        return measure(root, rounds, command_env(None if "--compile-each-run" in argv else cache), out)


def measure(root: Path, rounds: int, env: dict, out: str) -> int:
    py, other = files(root)
    floors, runs, starts = [], [], []
    load = os.getloadavg()[0]
    for _ in range(rounds):
        floors.append(timed(floor, py, other))
        runs.append(commands(root, env, out))
        starts.append(startup(env))
    t_floor = min(floors)
    best = min(runs, key=lambda t: t[0] + t[1])
    t_run = best[0] + best[1]
    t_one = min(t[2] for t in runs)
    print(f"files: {len(py)} Python, {len(other)} C++/CSV; cpus {os.cpu_count()}")
    print(f"floor (ast.parse of the Python + one read of C++ and CSV): {t_floor:.3f} s  (rounds {', '.join(f'{t:.2f}' for t in floors)})")
    print(f"kbt spec --format json + kbt audit: {t_run:.3f} s  (spec {best[0]:.2f} + audit {best[1]:.2f}; "
          f"rounds {', '.join(f'{t[0] + t[1]:.2f}' for t in runs)}; one process start {min(starts):.2f})")
    print(f"ratio {t_run / t_floor:.2f} (target <= 2)")
    print(f"kbt build (spec and audit in one run, report written): {t_one:.3f} s  "
          f"(rounds {', '.join(f'{t[2]:.2f}' for t in runs)})")
    print(f"ratio {t_one / t_floor:.2f} (target <= 2); bytecode {'kept' if 'PYTHONPYCACHEPREFIX' in env else 'compiled each run'}; "
          f"load average {load:.2f} at the start, {os.getloadavg()[0]:.2f} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
