"""Time ``kbt review --format notebook --execute`` against its floor, in the same run.

The floor is what any executed notebook pays through the same runner: a fresh kernel that
imports what the review imports (pandas, torch, matplotlib, kb_tools) and does nothing else.
The review is the worked softmax's, end to end as a user runs it (a ``kbt`` process that
writes the notebook, then executes it: KB load, audit, kbt verify, three comparisons with
their plots, fourteen page tables). Both are run ``--rounds`` times, interleaved, each in a
fresh process; the medians and their ratio are printed, with the review's absolute median
for the issue's "well under a minute".

Run: .venv/bin/python benchmarks/bench_review.py [--rounds 5] [--spec ops/softmax.yaml]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FLOOR_CELLS = ["import pandas as pd\nimport torch\nimport matplotlib.pyplot as plt\nimport kb_tools.outputs.review_checks"]


def floor_notebook(folder: Path) -> Path:
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(src) for src in FLOOR_CELLS])
    path = folder / "floor.ipynb"
    nbformat.write(nb, path)
    return path


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {(proc.stdout + proc.stderr).strip()[-500:]}")
    return elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--spec", default="ops/softmax.yaml")
    args = parser.parse_args(argv)
    kbt = str(Path(sys.executable).parent / "kbt")
    runner = [sys.executable, "-c", "import sys; from kb_tools.outputs.notebook_runner import execute; "
              "r = execute(sys.argv[1], sys.argv[2], html=False); sys.exit(1 if r.error else 0)"]
    review, floor = [], []
    with tempfile.TemporaryDirectory(prefix="bench-review-") as tmp:
        tmp = Path(tmp)
        empty = floor_notebook(tmp)
        for i in range(args.rounds):
            floor.append(timed(runner + [str(empty), str(tmp / "floor-out")]))
            review.append(timed([kbt, "review", args.spec, "--format", "notebook", "--execute", "-o", str(tmp / f"r{i}.ipynb")]))
    r, f = statistics.median(review), statistics.median(floor)
    print(f"{args.rounds} rounds, interleaved, each a fresh process")
    print(f"  floor  (kernel + the review's imports, same runner): median {f:6.2f} s  (min {min(floor):.2f}, max {max(floor):.2f})")
    print(f"  review ({args.spec}, written and executed by kbt):   median {r:6.2f} s  (min {min(review):.2f}, max {max(review):.2f})")
    print(f"  ratio review / floor: {r / f:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
