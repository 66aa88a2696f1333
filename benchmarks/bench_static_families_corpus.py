"""The golden, test and kernel families on real operator repositories: every finding they
report, per code, against the hand verdicts in ``audit_corpus/family_labels.yaml``.

The repositories and commits are those of ``audit_corpus/labels.yaml`` (the wrapper corpus).
Each whole tree is read from a local bare mirror (``git archive``, the layout the ``fetch``
tool leaves under /work/.mirror) into a temporary folder and audited with default settings
(roles told from the files, specs looked up beside them: these repositories have none).

* precision per family: labelled true findings / all findings of the family; a finding with
  no verdict counts against it (reported as "unjudged");
* TS105 (a warning) is checked mechanically instead of one verdict per finding: the line
  must draw random numbers and neither the function that holds it, the module's own
  statements, nor a conftest.py up to three folders above it may call a seeding function (a
  seed in another test does not cover this one).
Recall is not measured here: no independent labels of golden/test/kernel violations exist
for these trees (the fixtures in tests/fixtures/audit_families hold one per code).
Run: .venv/bin/python benchmarks/bench_static_families_corpus.py [--mirror /work/.mirror] [--details]
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

import yaml

from kb_tools.audit import audit_path
from kb_tools.audit.discover import python_files
from kb_tools.audit.families import FamilyOptions
from kb_tools.diagnostics import KbError

CORPUS = Path(__file__).resolve().parent / "audit_corpus"
FAMILIES = {"GD": "golden", "TS": "test", "KN": "kernel"}
DRAW = re.compile(r"\b(rand|randn|randint|rand_like|randn_like|randint_like|randperm|normal|bernoulli|multinomial|"
                  r"random|random_sample|permutation|uniform|choice|choices|shuffle|sample|standard_normal|integers)\s*\(")
SEED = re.compile(r"\b(manual_seed|seed_everything|set_seed|seed_all|seed)\s*\(|default_rng\s*\(\s*[^)\s]")


def repositories() -> list[tuple[str, str]]:
    labels = yaml.safe_load((CORPUS / "labels.yaml").read_text())
    return sorted({(item["repo"], item["commit"]) for item in labels})


def materialise(repo: str, commit: str, mirror: Path, dest: Path) -> Path:
    git_dir = mirror / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        sys.exit(f"{git_dir}: no mirror of {repo} (fetch it first, or give --mirror)")
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", commit, "--", "*.py"], capture_output=True)
    if archive.returncode != 0:
        sys.exit(f"{repo}@{commit[:10]}: {archive.stderr.decode().strip()}")
    root = dest / repo.replace("/", "+")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(root, filter="data")
    return root


def seeded_by_conftest(path: Path, root: Path) -> bool:
    for folder in [path.parent, *path.parents][:4]:
        conftest = folder / "conftest.py"
        if conftest.is_file() and SEED.search(conftest.read_text("utf-8", errors="replace")):
            return True
        if folder == root:
            break
    return False


def _enclosing_and_module_text(text: str, line: int) -> tuple[str, str]:
    """(the source of the innermost function holding ``line``, the module's own statements:
    every line outside a function), for the per-test seed check."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return text, ""
    lines = text.splitlines()
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    holding = [f for f in functions if f.lineno <= line <= (f.end_lineno or f.lineno)]
    inner = max(holding, key=lambda f: f.lineno, default=None)
    enclosing = "\n".join(lines[inner.lineno - 1:inner.end_lineno]) if inner else text
    covered = {i for f in functions for i in range(f.lineno, (f.end_lineno or f.lineno) + 1)}
    module = "\n".join(t for i, t in enumerate(lines, 1) if i not in covered)
    return enclosing, module


def ts105_holds(path: Path, root: Path, line: int) -> bool:
    """The line draws, and no seed is set in the function that holds it, at module level, or
    in a conftest.py above (a seed in another test does not cover this one)."""
    text = path.read_text("utf-8", errors="replace")
    enclosing, module = _enclosing_and_module_text(text, line)
    return bool(DRAW.search(text.splitlines()[line - 1])) and not SEED.search(enclosing) and not SEED.search(module) \
        and not seeded_by_conftest(path, root)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--details", action="store_true", help="print every finding without a true verdict")
    args = parser.parse_args()
    verdicts = {(v["repo"], v["path"], v["line"], v["code"]): v["verdict"]
                for v in yaml.safe_load((CORPUS / "family_labels.yaml").read_text())["findings"]}
    counts, true, unjudged, roles = Counter(), Counter(), [], Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for repo, commit in repositories():
            root = materialise(repo, commit, args.mirror, Path(tmp))
            for path in python_files([root]):
                try:
                    result = audit_path(path, families=FamilyOptions())
                except KbError:
                    continue
                roles.update(result.roles or ())
                rel = path.relative_to(root).as_posix()
                for f in result.findings:
                    if f.code[:2] not in FAMILIES:
                        continue
                    counts[f.code] += 1
                    if f.code == "TS105":
                        ok = ts105_holds(path, root, f.line)
                    else:
                        verdict = verdicts.get((repo, rel, f.line, f.code))
                        ok = verdict == "tp"
                        if verdict is None:
                            unjudged.append(f"{repo}:{rel}:{f.line} {f.code}")
                    true[f.code] += ok
                    if args.details and not ok:
                        print(f"  not true: {repo}:{rel}:{f.line}: {f.code} {f.message}")
    print(f"{len(repositories())} repositories; files by role: {dict(roles)}")
    for prefix, family in FAMILIES.items():
        codes = sorted(c for c in counts if c.startswith(prefix))
        n, t = sum(counts[c] for c in codes), sum(true[c] for c in codes)
        per_code = ", ".join(f"{c} {true[c]}/{counts[c]}" for c in codes) or "no findings"
        precision = f"{t / n:.3f}" if n else "n/a (no findings)"
        print(f"{family:7s} precision {precision}  ({per_code})")
    if unjudged:
        print(f"unjudged findings (counted as false): {len(unjudged)}")
        for item in unjudged[:20]:
            print(f"  {item}")


if __name__ == "__main__":
    main()
