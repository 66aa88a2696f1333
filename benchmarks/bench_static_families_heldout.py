"""The golden, test and kernel families on held-out code: precision AND recall per family
against the blind hand labels of ``audit_corpus/family_heldout.yaml``.

The labels were written before the families ever ran on these files (repositories the rules
were not tuned on). Each source is read from a local bare mirror (``git archive`` at the
labelled commit, the layout the ``fetch`` tool leaves under /work/.mirror), restricted to its
``paths``, and audited with default settings (roles told from the files, no spec).

* a finding counts only when its code is in the source's ``scope`` (the codes labelled there);
* TS101 and TS105 are one finding per file and match a label by file; other codes by line;
* precision = matched findings / findings; recall = matched labels / labels, per family,
  for each batch (each labelled before the rules of its time ran on it; the header of the
  labels file says which fixes followed which batch) and for all together.
Run: .venv/bin/python benchmarks/bench_static_families_heldout.py [--mirror /work/.mirror] [--details]
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from fnmatch import fnmatchcase
from pathlib import Path

import yaml

from kb_tools.audit import audit_path
from kb_tools.audit.families import FamilyOptions
from kb_tools.diagnostics import KbError

LABELS = Path(__file__).resolve().parent / "audit_corpus" / "family_heldout.yaml"
FAMILIES = {"GD": "golden", "TS": "test", "KN": "kernel"}
PER_FILE = frozenset({"TS101", "TS105"})


def materialise(source: dict, mirror: Path, dest: Path) -> list[Path]:
    """The source's selected .py files, extracted under ``dest``."""
    git_dir = mirror / source["repo"].replace("/", "+") / "repo"
    if not git_dir.is_dir():
        sys.exit(f"{git_dir}: no mirror of {source['repo']} (fetch it first, or give --mirror)")
    archive = subprocess.run(["git", "--git-dir", str(git_dir), "archive", source["commit"], "--", "*.py"], capture_output=True)
    if archive.returncode != 0:
        sys.exit(f"{source['repo']}@{source['commit'][:10]}: {archive.stderr.decode().strip()}")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")
    return sorted(p for p in dest.rglob("*.py")
                  if any(fnmatchcase(p.relative_to(dest).as_posix(), pattern) for pattern in source["paths"]))


def key(repo: str, path: str, line: int, code: str) -> tuple:
    return (repo, path, code) if code in PER_FILE else (repo, path, line, code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--details", action="store_true", help="print every false alarm and every miss")
    args = parser.parse_args()
    data = yaml.safe_load(args.labels.read_text())
    batch_of = {}
    found, files = set(), Counter()
    with tempfile.TemporaryDirectory() as tmp:
        for number, source in enumerate(data["sources"]):
            root = Path(tmp) / str(number)
            for path in materialise(source, args.mirror, root):
                files[source["batch"]] += 1
                rel = path.relative_to(root).as_posix()
                batch_of[(source["repo"], rel)] = source["batch"]
                try:
                    result = audit_path(path, families=FamilyOptions())
                except KbError:
                    continue
                found |= {key(source["repo"], rel, f.line, f.code) for f in result.findings
                          if f.code[:2] in FAMILIES and f.code in source["scope"]}
    labels = {key(x["repo"], x["path"], x["line"], x["code"]) for x in data["labels"]}
    for batch in sorted(files):
        mine = {k for k in found if batch_of[k[:2]] == batch}
        truth = {k for k in labels if batch_of.get(k[:2]) == batch}
        print(f"batch {batch}: {files[batch]} files, {len(truth)} labels, {len(mine)} findings")
        report(mine, truth, args.details)
    print(f"all batches: {sum(files.values())} files, {len(labels)} labels, {len(found)} findings")
    report(found, labels, args.details)


def report(found: set, labels: set, details: bool) -> None:
    for prefix, family in FAMILIES.items():
        mine = {k for k in found if k[-1].startswith(prefix)}
        truth = {k for k in labels if k[-1].startswith(prefix)}
        hits = mine & truth
        precision = f"{len(hits) / len(mine):.3f}" if mine else "n/a"
        recall = f"{len(hits) / len(truth):.3f}" if truth else "n/a"
        codes = sorted({k[-1] for k in mine | truth})
        per_code = ", ".join(f"{c} {sum(1 for k in hits if k[-1] == c)}/{sum(1 for k in mine if k[-1] == c)} found, "
                             f"{sum(1 for k in truth if k[-1] == c)} labelled" for c in codes) or "nothing found or labelled"
        print(f"  {family:7s} precision {precision} ({len(hits)}/{len(mine)})  recall {recall} ({len(hits)}/{len(truth)})  [{per_code}]")
        if details:
            for k in sorted(mine - truth, key=str):
                print(f"    false alarm: {k}")
            for k in sorted(truth - mine, key=str):
                print(f"    miss:        {k}")

if __name__ == "__main__":
    main()
