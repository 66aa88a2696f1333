"""Start-up of the everyday KB commands against a bare interpreter (`python -c pass`), in the
same run: `kbt route "<free text>"`, `kbt route <task-id>`, `kbt select` and `kbt usage`.
Runs are interleaved (bare, route, route, select, usage, bare, ...) so that a busy machine
slows all of them alike; each command's median is divided by the bare median. The KB cache
is warm (one run of each first, which also compiles the modules), which is the state every
run after the first meets. Also prints which heavy modules, if any, the commands imported.

    python benchmarks/bench_startup.py [--runs 21]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 3.0  # the bound on every ratio
HEAVY = ("torch", "numpy", "pandas", "scipy", "jsonschema", "yaml")


def commands(out: str) -> dict[str, list[str]]:
    kbt = [sys.executable, "-m", "kb_tools"]
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        'kbt route "<free text>"': [*kbt, "route", "aclnnInplaceCopy failed, error code is 561103"],
        "kbt route <task-id>": [*kbt, "route", "decide-host-work"],
        "kbt select softmax": [*kbt, "select", "ops/softmax.yaml", "-o", out],
        "kbt usage softmax": [*kbt, "usage", "ops/softmax.yaml", "-o", out],
    }


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def interleaved_medians(cmds: dict[str, list[str]], runs: int, env: dict) -> dict[str, tuple[float, float]]:
    """Per command, the median wall time and the median CPU time (user + system) of a run:
    on a shared machine the CPU time is the steadier measure of the work a start-up does."""
    wall: dict[str, list[float]] = {name: [] for name in cmds}
    cpu: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, cmd in cmds.items():
            start, start_cpu = time.perf_counter(), _child_cpu()
            subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, env=env)
            wall[name].append(time.perf_counter() - start)
            cpu[name].append(_child_cpu() - start_cpu)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in cmds}


def heavy_imports(argv: list[str], env: dict) -> str:
    probe = ("import sys, io, contextlib; from kb_tools.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()): main(sys.argv[1:])\n"
             f"print(','.join(m for m in {HEAVY!r} if m in sys.modules) or 'none')")
    done = subprocess.run([sys.executable, "-c", probe, *argv], cwd=ROOT, check=True, capture_output=True, text=True, env=env)
    return done.stdout.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "OPKB_CACHE_DIR": str(Path(tmp) / "cache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's kbt runs from compiled modules
        cmds = commands(str(Path(tmp) / "out"))
        for cmd in cmds.values():  # fill the cache and the file-system cache
            subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, env=env)
        medians = interleaved_medians(cmds, args.runs, env)
        heavy = {name: heavy_imports(cmd[3:], env) for name, cmd in cmds.items() if name.startswith("kbt")}
    bare, bare_cpu = medians.pop("python -c pass")
    print(f"{'python -c pass':26} wall {bare * 1000:6.1f} ms  cpu {bare_cpu * 1000:6.1f} ms  ({args.runs} interleaved runs, medians)")
    for name, (t, c) in medians.items():
        verdict = "ok" if t / bare <= LIMIT else f"over {LIMIT:g}x"
        print(f"{name:26} wall {t * 1000:6.1f} ms  cpu {c * 1000:6.1f} ms  ratio wall {t / bare:4.2f}x ({verdict}), "
              f"cpu {c / bare_cpu:4.2f}x  heavy imports: {heavy[name]}")


if __name__ == "__main__":
    main()
