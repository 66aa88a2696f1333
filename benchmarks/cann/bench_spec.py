"""Time ``kbt spec`` over a whole operator repository against its floor, in the same run.

Usage: python benchmarks/cann/bench_spec.py REPO_ROOT [--jobs N]
Floor: ast.parse of every tests/assets/golden.py plus one read of every C++ file under op_host/
and op_kernel/ and every tests/st/**/ttk_*.csv of the operator folders. Measured: the reader as
``kbt spec`` runs it (kb_tools.commands.spec.read_all, with its process pool) plus the JSON;
``kbt spec`` does not read the kernel (the widening is none of its facts), the floor still
reads every op_kernel C++ file once.
Best of 3 each, page cache warm; prints both times and the ratio; also checks the pooled output
equals a serial run byte for byte.
"""

from __future__ import annotations

import ast
import json
import sys
import time
from pathlib import Path

from kb_tools.cann import find_operators
from kb_tools.commands.spec import read_all

CPP = (".cpp", ".h", ".hpp", ".cc")


def floor(root: Path) -> int:
    n = 0
    for op in find_operators(root):
        golden = op / "tests" / "assets" / "golden.py"
        if golden.is_file():
            try:
                ast.parse(golden.read_bytes())
            except (SyntaxError, ValueError):
                pass
            n += 1
        for sub in ("op_host", "op_kernel"):
            if (op / sub).is_dir():
                for p in (op / sub).rglob("*"):
                    if p.suffix in CPP and p.is_file():
                        n += len(p.read_bytes()) > 0
        if (op / "tests" / "st").is_dir():
            for p in (op / "tests" / "st").rglob("ttk_*.csv"):
                n += len(p.read_bytes()) > 0
    return n


def spec(root: Path, jobs: int) -> str:
    return json.dumps({"operators": [f.as_json() for f in read_all(str(root), jobs)]}, indent=2)


def best(fn, *args) -> float:
    times = []
    for _ in range(3):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    jobs = int(argv[argv.index("--jobs") + 1]) if "--jobs" in argv else 0
    assert spec(root, jobs) == spec(root, 1), "pooled output differs from serial"
    t_floor = best(floor, root)
    print(f"operators: {len(find_operators(root))}")
    print(f"floor (ast.parse goldens + one read of C++ and CSV): {t_floor:.3f} s")
    for name, n in ((f"pool, jobs={jobs or 'cpus'}", jobs), ("serial", 1)):
        t = best(spec, root, n)
        print(f"kbt spec ({name}): {t:.3f} s  ratio {t / t_floor:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
