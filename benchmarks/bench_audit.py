"""Audit speed: ``kbt audit`` over >= 500 Python files against ``ast.parse`` of the same files
alone (aim: <= 1.5x), and against TorchFix on the same files.

The corpus: every fixture wrapper, variants of the seed 003 anti-pattern and compliant
wrapper, and real Python files from the installed torch package (most hold no wrapper, as a
real tree does). TorchFix is installed from PyPI into a temporary directory for this run
(never into the venv); if that fails the script says so and still prints the ast ratio.
Run: .venv/bin/python benchmarks/bench_audit.py [--no-torchfix]
"""

from __future__ import annotations

import ast
import os
import subprocess
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from kb_tools.audit import audit_source

ROOT = Path(__file__).resolve().parents[1]
N_FILES = 600


def corpus(tmp: Path) -> list[Path]:
    fixtures = sorted((ROOT / "tests" / "fixtures" / "audit").glob("*.py")) + sorted((ROOT / "ops" / "wrappers").glob("*.py"))
    files = list(fixtures)
    for i in range(100):  # wrapper variants: renamed copies so no two files are identical
        src = fixtures[i % len(fixtures)].read_text().replace("_wrapper(", f"{i}_wrapper(")
        path = tmp / f"variant_{i:03d}.py"
        path.write_text(src)
        files.append(path)
    torch_files = sorted(p for p in Path(torch.__file__).parent.rglob("*.py") if p.stat().st_size < 200_000)
    files += torch_files[: N_FILES - len(files)]
    return files


def paired_medians(first, second, repeats=7) -> tuple[float, float, float]:
    """Median time of each, and the median of their per-round ratio: the two run in turn,
    so a machine that is busier in one round slows both and the ratio stays honest."""
    a, b = [], []
    for _ in range(repeats):
        for fn, times in ((first, a), (second, b)):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(a), statistics.median(b), statistics.median(y / x for x, y in zip(a, b))


def run_cli(argv: list[str], env=None) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    return time.perf_counter() - t0


def main() -> None:
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        files = corpus(tmp)
        texts = [(str(p), p.read_text("utf-8")) for p in files]
        size = sum(len(t) for _, t in texts)
        print(f"corpus: {len(files)} files, {size / 1e6:.1f} MB of source")

        def parse_all():
            for p, t in texts:
                ast.parse(t, filename=p)

        def audit_all():
            for p, t in texts:
                audit_source(t, p)

        t_parse, t_audit, ratio = paired_medians(parse_all, audit_all)
        results = [audit_source(t, p) for p, t in texts]
        findings, wrappers = sum(len(r.findings) for r in results), sum(len(r.wrappers) for r in results)
        print(f"ast.parse alone: median {t_parse * 1e3:.0f} ms; kbt audit (in process, parse included): median "
              f"{t_audit * 1e3:.0f} ms; {wrappers} wrappers, {findings} findings")
        print(f"ratio audit / ast.parse = {ratio:.2f}x (median of 7 paired rounds; aim <= 1.5x)")

        if "--no-torchfix" in sys.argv:
            return
        kbt = [sys.executable, "-m", "kb_tools", "audit", *map(str, files)]
        t_kbt = run_cli(kbt)
        target = tmp / "torchfix"
        print(f"installing TorchFix into {target} (temporary, not the venv) ...", flush=True)
        install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--target", str(target), "torchfix"],
                                 capture_output=True, text=True)
        if install.returncode != 0:
            print(f"TorchFix: install failed, no ratio ({install.stderr.strip().splitlines()[-1] if install.stderr.strip() else 'pip error'})")
            return
        env = dict(os.environ, PYTHONPATH=str(target))
        probe = subprocess.run([sys.executable, "-m", "torchfix", "--help"], capture_output=True, text=True, env=env)
        if probe.returncode != 0:
            print(f"TorchFix: installed but does not run: {probe.stderr.strip().splitlines()[-1:]}")
            return
        t_fix = run_cli([sys.executable, "-m", "torchfix", *map(str, files)], env=env)
        print(f"kbt audit (CLI): {t_kbt:.2f} s; TorchFix (CLI, same files): {t_fix:.2f} s")
        print(f"ratio kbt audit / TorchFix = {t_kbt / t_fix:.4f}x (TorchFix takes {t_fix / t_kbt:.0f}x as long)")


if __name__ == "__main__":
    main()
