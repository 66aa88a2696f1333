"""Audit speed on a whole repository: ``kbt audit`` of a folder of thousands of real Python
files against ``ast.parse`` of the same files, in the same run (issue 24's aim: <= 1.5x).

The folder is one the caller names (``--tree``) or one materialised from a local bare mirror
(``--mirror``, the layout the ``fetch`` tool leaves): by default the 4,065 Python files of
``Ascend/ModelZoo-PyTorch`` at ``6a2804a3`` under ``PyTorch/built-in/cv/detection``, or any
mirrored repository (``--repo FlagOpen/FlagGems --commit HEAD --subtree .``). Those files are
read here, never kept in opkb.

Three contenders run in turn, round after round, so that a machine busier in one round
slows all of them: the floor (read and ``ast.parse`` every file ``kbt audit`` would read, one
process, with the collector set as the audit sets it), ``kbt audit --jobs 1`` and ``kbt audit`` with its default jobs (both cores). Wall
time and CPU time (this process and the job processes it waited for: on a machine shared
with other work, CPU time moves less than wall time), median of each, and the median of the
per-round ratios to the floor. The serial and the parallel JSON reports must be
byte-identical; the script exits 1 if they are not.
Run: .venv/bin/python benchmarks/bench_audit_scale.py [--tree DIR | --mirror /work/.mirror [--repo R --commit C --subtree S]]
     [--rounds 3]
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import gc
import io
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kb_tools.audit.batch import GC_THRESHOLDS
from kb_tools.audit.discover import python_files
from kb_tools.cli import main as kbt

DEFAULT_REPO = "Ascend/ModelZoo-PyTorch"
DEFAULT_COMMIT = "6a2804a358a5b18e3dac1ab902f41f88e240b00f"
DEFAULT_SUBTREE = "PyTorch/built-in/cv/detection"


def materialise(mirror: Path, dest: Path, repo: str = DEFAULT_REPO, commit: str = DEFAULT_COMMIT,
                subtree: str = DEFAULT_SUBTREE) -> Path:
    git_dir = mirror / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        sys.exit(f"{git_dir}: no mirror of {repo} (fetch it first, or give --tree)")
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", commit, subtree],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "x", "-C", str(dest)], input=archive, check=True)
    return dest / subtree


def floor(files: list[Path]) -> None:
    """Read and parse every file under the collector settings the audit itself runs with: under
    Python's defaults, the objects this process already holds (the audit's modules, the last
    reports) made the floor about 1.6 times slower than in a fresh process, and every ratio
    to it looked that much better than it is."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        for path in files:
            try:
                ast.parse(path.read_bytes(), filename=str(path))
            except (SyntaxError, ValueError):
                pass
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def audit(tree: Path, jobs: str | None) -> str:
    out = io.StringIO()
    argv = ["audit", "--format", "json", str(tree)] + (["--jobs", jobs] if jobs else [])
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        try:
            kbt(argv)
        except SystemExit:
            pass
    return out.getvalue()


def cpu_seconds() -> float:
    """User and system time of this process and of its children that have ended."""
    own = time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own + children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, help="a folder to audit (default: materialise the ModelZoo subtree)")
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"), help="folder of owner+name/repo bare mirrors")
    parser.add_argument("--repo", default=DEFAULT_REPO, help="the mirrored repository to materialise")
    parser.add_argument("--commit", default=DEFAULT_COMMIT, help="its commit (HEAD: the mirror's newest)")
    parser.add_argument("--subtree", default=DEFAULT_SUBTREE, help="the folder of it to audit (. for all of it)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tree = args.tree or materialise(args.mirror, Path(tmp), args.repo, args.commit, args.subtree)
        files = list(python_files([str(tree)], []))
        reports = {}
        names = ("ast.parse", "audit --jobs 1", "audit (default jobs)")
        times: dict[str, list[float]] = {name: [] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        runs = {"ast.parse": lambda: floor(files),
                "audit --jobs 1": lambda: reports.__setitem__("serial", audit(tree, "1")),
                "audit (default jobs)": lambda: reports.__setitem__("parallel", audit(tree, None))}
        load = os.getloadavg()[0]
        for _ in range(args.rounds):
            for name, run in runs.items():
                t0, c0 = time.perf_counter(), cpu_seconds()
                run()
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(cpu_seconds() - c0)
        print(f"{len(files)} files under {tree}; {args.rounds} rounds, medians; load average {load:.1f} at the start, "
              f"{os.getloadavg()[0]:.1f} at the end, on {os.cpu_count()} cores")
        print(f"  {'':22s} {'wall':>9s} {'ratio':>6s}   {'cpu':>9s} {'ratio':>6s}")
        for name in names:
            wall = statistics.median(t / b for t, b in zip(times[name], times["ast.parse"]))
            used = statistics.median(t / b for t, b in zip(cpu[name], cpu["ast.parse"]))
            print(f"  {name:22s} {statistics.median(times[name]):7.2f} s {wall:5.2f}x   "
                  f"{statistics.median(cpu[name]):7.2f} s {used:5.2f}x")
        same = reports["serial"] == reports["parallel"]
        print(f"  serial and parallel JSON reports byte-identical: {same} ({len(reports['serial'])} bytes)")
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
