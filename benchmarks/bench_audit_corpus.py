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
Run: .venv/bin/python benchmarks/bench_audit_corpus.py [--mirror /work/.mirror] [--details] [--heldout]
     [--batch blind-2 [--show-batch]]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from kb_tools.audit import audit_path
from kb_tools.diagnostics import KbError

CORPUS = Path(__file__).resolve().parent / "audit_corpus"
LABELS = CORPUS / "labels.yaml"


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
            try:
                audits[path] = audit_path(path)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"), help="folder of owner+name/repo bare mirrors")
    parser.add_argument("--details", action="store_true", help="list the tuning set's false and missed lines")
    parser.add_argument("--heldout", action="store_true", help="also score the held-out set (once, at the end of tuning)")
    parser.add_argument("--show-heldout", action="store_true", help="with --heldout, list its false and missed lines too")
    parser.add_argument("--batch", action="append", default=[], help="also score the blind batch audit_corpus/NAME.yaml (repeatable)")
    parser.add_argument("--show-batch", action="store_true", help="with --batch, list its false and missed lines too")
    args = parser.parse_args()
    labels = yaml.safe_load(LABELS.read_text())
    batches = {}
    for name in args.batch:
        path = CORPUS / f"{name}.yaml"
        if not path.is_file():
            sys.exit(f"{path}: no such batch")
        batches[name] = yaml.safe_load(path.read_text())
    with tempfile.TemporaryDirectory() as tmp:
        files = materialise(labels + [x for batch in batches.values() for x in batch], args.mirror, Path(tmp))
        sets = [("tuning", [x for x in labels if not x["heldout"]], args.details)]
        if args.heldout:
            sets.append(("held-out", [x for x in labels if x["heldout"]], args.show_heldout))
        sets += [(name, batch, args.show_batch) for name, batch in batches.items()]
        for name, subset, show in sets:
            if show:
                print(f"{name}: disagreements")
            s = score(subset, files, show)
            print(f"{name}: {s['functions']} wrappers, {s['found']} found with no pattern ({s['found'] / s['functions']:.0%}); "
                  f"{s['lines']} labelled lines: precision {s['precision']:.3f}, recall {s['recall']:.3f} "
                  f"(tp {s['tp']}, fp {s['fp']}, fn {s['fn']})")


if __name__ == "__main__":
    main()
