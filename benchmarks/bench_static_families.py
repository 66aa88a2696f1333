"""Static-audit speed with every family on (wrapper, golden, test, kernel) against ``ast.parse``
of the same files alone, in the same run (aim: <= 2x), and against the wrapper family alone.

Two corpora, both read into memory first so that only parsing and auditing are timed:
- "role files": every file the families work on here (this project's tests, the family and
  wrapper fixtures, the worked example, the catalogue wrappers, and torch's own test helpers)
  — the worst case, since every file gets at least one family;
- "mixed tree": those plus ordinary torch source files up to 600 files, as a real checkout is.
Each configuration runs three times, interleaved; the medians are compared (CPU time of this
process, so a busy machine slows every configuration alike).
Run: .venv/bin/python benchmarks/bench_static_families.py
"""

from __future__ import annotations

import ast
import statistics
import time
from pathlib import Path

import torch

from kb_tools.audit import audit_source
from kb_tools.audit.families import FamilyOptions

ROOT = Path(__file__).resolve().parents[1]
N_MIXED = 600
REPEATS = 3


def role_files() -> list[Path]:
    ours = [*sorted((ROOT / "tests").glob("test_*.py")), *sorted((ROOT / "tests" / "fixtures").rglob("*.py")),
            *sorted((ROOT / "examples").rglob("*.py")), *sorted((ROOT / "ops" / "wrappers").glob("*.py"))]
    torch_tests = sorted(p for p in (Path(torch.__file__).parent / "testing").rglob("*.py") if p.stat().st_size < 400_000)
    return ours + torch_tests


def mixed_files(roles: list[Path]) -> list[Path]:
    others = sorted(p for p in Path(torch.__file__).parent.rglob("*.py") if p.stat().st_size < 200_000 and p not in set(roles))
    return roles + others[: max(0, N_MIXED - len(roles))]


def cpu(fn) -> float:
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def measure(texts: list[tuple[str, str]]) -> dict[str, float]:
    options = FamilyOptions()
    def each(work):  # nothing kept alive between files, in every configuration alike
        def run():
            for p, t in texts:
                work(p, t)
        return run

    configs = {
        "ast.parse": each(lambda p, t: ast.parse(t, filename=p)),
        "wrapper family": each(lambda p, t: audit_source(t, p)),
        "all families": each(lambda p, t: audit_source(t, p, families=options)),
    }
    for fn in configs.values():  # warm caches (spec lookups, imports) once
        fn()
    times = {name: [] for name in configs}
    for _ in range(REPEATS):
        for name, fn in configs.items():
            times[name].append(cpu(fn))
    return {name: statistics.median(ts) for name, ts in times.items()}


def load(paths: list[Path]) -> list[tuple[str, str]]:
    out = []
    for p in paths:
        try:
            text = p.read_text("utf-8")
            ast.parse(text)
        except (UnicodeDecodeError, SyntaxError, ValueError):
            continue
        out.append((str(p), text))
    return out


def main() -> None:
    roles = role_files()
    for label, paths in (("role files", roles), ("mixed tree", mixed_files(roles))):
        texts = load(paths)
        size = sum(len(t) for _, t in texts) / 1e6
        audited = [audit_source(t, p, families=FamilyOptions()) for p, t in texts]
        by_role = {r: sum(r in (a.roles or ()) for a in audited) for r in ("impl", "golden", "third_party", "test")}
        m = measure(texts)
        base = m["ast.parse"]
        print(f"{label}: {len(texts)} files, {size:.1f} MB; roles {by_role}; CPU medians of {REPEATS}")
        for name, t in m.items():
            print(f"  {name:15s} {t * 1000:8.1f} ms  {t / base:5.2f}x ast.parse")
        verdict = "within" if m["all families"] <= 2 * base else "OVER"
        print(f"  all families / ast.parse = {m['all families'] / base:.2f} ({verdict} the 2x budget); "
              f"families beyond the wrapper add {(m['all families'] - m['wrapper family']) / base:.2f}x")


if __name__ == "__main__":
    main()
