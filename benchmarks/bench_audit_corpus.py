"""`kbt audit` on real wrapper code: per-line precision and recall, and the share of wrappers
found with no ``--wrapper-pattern``, against the hand labels in ``audit_corpus/labels.yaml``.

The labelled repositories are not part of opkb. The script reads each labelled file at its
labelled commit from a local bare mirror (``git --git-dir MIRROR/owner+name/repo show
COMMIT:path``, the layout the ``fetch`` tool leaves under /work/.mirror) into a temporary
folder, audits it with default settings, and compares, function by function:

* a wrapper is found when the audit lists the labelled function among its wrappers;
* a line is predicted when any finding sits on it inside the labelled function's lines;
  each labelled line is one forbidden host operation (or a launch-count violation).

The tuning set and the held-out set (``heldout: true``, a quarter of the functions chosen
by position before the audit was run on them) are reported separately. A blind batch
(``audit_corpus/<name>.yaml``, labelled and committed before the audit first read its files)
is scored on its own with ``--batch <name>``.

A batch whose labels name ``reached`` lines (batch 3 on: forbidden lines in the helpers and
decorators a wrapper runs, in its own file or another) is scored on its whole repository,
audited as one tree the way ``kbt audit <folder>`` does: a wrapper's predicted lines are the
findings, in it or elsewhere, that name it among their wrappers (``--by-range`` also counts a
finding inside it made only for another wrapper that calls it, as batch 4's first run did). Such a
batch is scored under every policy (``--policy`` to choose one): against its strict labels,
and against the lenient ones (the labels less ``strict_only``, which from batch 4 on may name
reached lines as ``path:line``) for the lenient readings.
Run: .venv/bin/python benchmarks/bench_audit_corpus.py [--mirror /work/.mirror] [--details] [--heldout]
     [--batch blind-2 [--show-batch]] [--batch blind-3 [--policy strict]] [--batch blind-4]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from kb_tools.audit import audit_path
from kb_tools.audit.batch import audit_files
from kb_tools.audit.discover import python_files
from kb_tools.audit.policies import POLICIES
from kb_tools.diagnostics import KbError

CORPUS = Path(__file__).resolve().parent / "audit_corpus"
LABELS = CORPUS / "labels.yaml"
READ_SUFFIXES = (".py", ".yaml", ".yml", ".json", ".toml")


def materialise(labels: list[dict], mirror: Path, dest: Path) -> dict[tuple[str, str], Path]:
    """Each labelled (repo, path) as a file under ``dest``, read from the mirror at its commit."""
    files = {}
    for item in labels:
        key = (item["repo"], item["path"])
        if key in files:
            continue
        git_dir = mirror / item["repo"].replace("/", "+") / "repo"
        if not git_dir.is_dir():
            sys.exit(f"{git_dir}: no mirror of {item['repo']} (fetch it first, or give --mirror)")
        shown = subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{item['commit']}:{item['path']}"],
                               capture_output=True)
        if shown.returncode != 0:
            sys.exit(f"{item['repo']}@{item['commit'][:10]}:{item['path']}: {shown.stderr.decode().strip()}")
        target = dest / item["repo"].replace("/", "+") / item["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(shown.stdout)
        files[key] = target
    return files


def score(labels: list[dict], files: dict, details: bool) -> dict:
    tp = fp = fn = found = 0
    audits = {}
    for item in labels:
        path = files[(item["repo"], item["path"])]
        if path not in audits:
            try:  # these sets were labelled under the lenient reading (README.md, "What a label means")
                audits[path] = audit_path(path, policy="lenient")
            except KbError as exc:
                print(f"  unusable: {exc.diagnostic}")
                audits[path] = None
        result = audits[path]
        first, last = item["lines"]
        truth = set(item["forbidden"])
        predicted = {f.line for f in result.findings if first <= f.line <= last} if result else set()
        hit = bool(result) and item["function"] in result.wrappers
        found += hit
        tp += len(truth & predicted)
        fp += len(predicted - truth)
        fn += len(truth - predicted)
        if details and (predicted != truth or not hit):
            where = f"{item['repo']}:{item['path']}:{item['function']}"
            wrong = [f"{f.line} {f.code}" for f in (result.findings if result else []) if f.line in predicted - truth]
            print(f"  {where}: {'found' if hit else 'NOT FOUND'}; false {wrong}; missed {sorted(truth - predicted)}")
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"functions": len(labels), "found": found, "lines": tp + fn, "tp": tp, "fp": fp, "fn": fn,
            "precision": precision, "recall": recall}


def materialise_tree(repo: str, commit: str, mirror: Path, dest: Path) -> Path:
    """The whole repository at ``commit`` under ``dest`` (a tree batch audits it as one)."""
    git_dir = mirror / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        sys.exit(f"{git_dir}: no mirror of {repo} (fetch it first, or give --mirror)")
    target = dest / repo.replace("/", "+")
    target.mkdir(parents=True, exist_ok=True)
    # The files an audit of a folder reads (Python, and the specs and configs beside it), not the whole
    # tree: a mirror may lack the blobs of large data files (Liger-Kernel's test .arrow is absent).
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", "-z", commit],
                             capture_output=True, check=True).stdout.decode()
    wanted = [path for path in listing.split("\0") if path.endswith(READ_SUFFIXES)]
    for start in range(0, len(wanted), 500):
        archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", commit, "--", *wanted[start:start + 500]],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "x", "-C", str(target)], input=archive, check=True)
    return target


def namesakes_lines(item: dict, labels: list[dict]) -> set[tuple[str, int]]:
    """The lines of the other labelled functions of the same file and name (two classes' ``forward``):
    the audit names a wrapper by (file, name), so a finding inside one namesake also names the
    other; inside a namesake's lines it is that namesake's alone. A helper's line reached by both
    stays with both."""
    return {(other["path"], n) for other in labels if other is not item and other["repo"] == item["repo"]
            and other["path"] == item["path"] and other["function"] == item["function"]
            for n in range(other["lines"][0], other["lines"][1] + 1)}


def score_tree(labels: list[dict], mirror: Path, dest: Path, policy: str, lenient: bool, details: bool,
               by_range: bool = False) -> dict:
    """Score a batch with ``reached`` labels on its repositories, each audited as one tree. A
    wrapper's predicted lines are those of the findings that name it among their wrappers;
    ``by_range`` adds every finding inside its lines (the scorer of batch 4's first run, which
    also counted a finding made for another wrapper that calls this one)."""
    roots = {}
    for item in labels:
        key = (item["repo"], item["commit"])
        if key not in roots:
            roots[key] = materialise_tree(item["repo"], item["commit"], mirror, dest)
    tp = fp = fn = found = 0
    for (repo, commit), root in roots.items():
        results, _, _ = audit_files(python_files([str(root)]), roots=[root], policy=policy)
        by_file = {Path(r.path).relative_to(root).as_posix(): r for r in results}
        for item in (x for x in labels if (x["repo"], x["commit"]) == (repo, commit)):
            result = by_file.get(item["path"])
            first, last = item["lines"]
            strict_only = set(item["strict_only"]) if lenient else set()  # lines, and reached path:line
            own = {(item["path"], n) for n in item["forbidden"] if n not in strict_only}
            truth = own | {(r.rsplit(":", 1)[0], int(r.rsplit(":", 1)[1])) for r in item["reached"] if r not in strict_only}
            me = (str(root / item["path"]), item["function"])  # wrappers are named by (file, name): names repeat
            predicted = {(path, f.line) for path, other in by_file.items() for f in other.findings if me in f.reached_from}
            predicted -= namesakes_lines(item, labels)
            if by_range:  # also any finding inside the function's lines, whichever wrapper it was made for
                predicted |= {(item["path"], f.line) for f in (result.findings if result else []) if first <= f.line <= last}
            hit = bool(result) and item["function"] in result.wrappers
            found += hit
            tp += len(truth & predicted)
            fp += len(predicted - truth)
            fn += len(truth - predicted)
            if details and (predicted != truth or not hit):
                print(f"  {item['path']}:{item['function']}: {'found' if hit else 'NOT FOUND'}; "
                      f"false {sorted(predicted - truth)}; missed {sorted(truth - predicted)}")
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return {"functions": len(labels), "found": found, "lines": tp + fn, "tp": tp, "fp": fp, "fn": fn,
            "precision": precision, "recall": recall}


def line(name: str, s: dict) -> str:
    return (f"{name}: {s['functions']} wrappers, {s['found']} found with no pattern ({s['found'] / s['functions']:.0%}); "
            f"{s['lines']} labelled lines: precision {s['precision']:.3f}, recall {s['recall']:.3f} "
            f"(tp {s['tp']}, fp {s['fp']}, fn {s['fn']})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"), help="folder of owner+name/repo bare mirrors")
    parser.add_argument("--details", action="store_true", help="list the tuning set's false and missed lines")
    parser.add_argument("--heldout", action="store_true", help="also score the held-out set (once, at the end of tuning)")
    parser.add_argument("--show-heldout", action="store_true", help="with --heldout, list its false and missed lines too")
    parser.add_argument("--batch", action="append", default=[], help="also score the blind batch audit_corpus/NAME.yaml (repeatable)")
    parser.add_argument("--show-batch", action="store_true", help="with --batch, list its false and missed lines too")
    parser.add_argument("--policy", choices=sorted(POLICIES), help="score a tree batch under this policy only (default: each)")
    parser.add_argument("--by-range", action="store_true",
                        help="a tree batch: also count each finding inside a wrapper's lines made for another wrapper")
    args = parser.parse_args()
    labels = yaml.safe_load(LABELS.read_text())
    batches = {}
    for name in args.batch:
        path = CORPUS / f"{name}.yaml"
        if not path.is_file():
            sys.exit(f"{path}: no such batch")
        batches[name] = yaml.safe_load(path.read_text())
    trees = {name: batch for name, batch in batches.items() if any("reached" in x for x in batch)}
    with tempfile.TemporaryDirectory() as tmp:
        files = materialise(labels + [x for name, batch in batches.items() if name not in trees for x in batch],
                            args.mirror, Path(tmp))
        sets = [("tuning", [x for x in labels if not x["heldout"]], args.details)]
        if args.heldout:
            sets.append(("held-out", [x for x in labels if x["heldout"]], args.show_heldout))
        sets += [(name, batch, args.show_batch) for name, batch in batches.items() if name not in trees]
        for name, subset, show in sets:
            if show:
                print(f"{name}: disagreements")
            print(line(name, score(subset, files, show)))
        for name, batch in trees.items():
            for policy in [args.policy] if args.policy else list(POLICIES):
                for lenient in (False, True):
                    if args.show_batch:
                        print(f"{name} --policy {policy}, {'lenient' if lenient else 'strict'} labels: disagreements")
                    s = score_tree(batch, args.mirror, Path(tmp) / "trees", policy, lenient, args.show_batch, args.by_range)
                    print(line(f"{name} --policy {policy}, {'lenient' if lenient else 'strict'} labels", s))


if __name__ == "__main__":
    main()
