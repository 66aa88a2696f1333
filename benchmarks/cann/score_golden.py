"""Per-line precision and recall of the golden rules against the hand labels.

Usage: python benchmarks/cann/score_golden.py REPO [--labels FILE] [--batch N]
(default golden-labels-ops-math.yaml beside this script; a bare second argument is read as FILE too).
REPO is a checkout of hicann/ops-math at the labels' commit (outside this repository).
Scored twice: errors only (certain findings), then errors and warnings.
A finding counts on a labelled operator only: on a violation line it is a true positive,
on any other line a false positive; a violation line without a finding is a miss.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


from kb_tools.cann.golden_flow import GOLDEN, judge_golden
from labels import load_labels  # benchmarks/cann/labels.py, beside this script

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("positional_labels", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--labels", help="labels file (default golden-labels-ops-math.yaml)")
    parser.add_argument("--batch", type=int, help="score only the entries of this batch (no batch: field is batch 1)")
    args = parser.parse_args(argv)
    repo = Path(args.repo)
    labels_file = args.labels or args.positional_labels or HERE / "golden-labels-ops-math.yaml"
    labels = load_labels(Path(labels_file))
    if labels is None:
        return 2
    if args.batch:
        labels["operators"] = {op: e for op, e in labels["operators"].items() if e.get("batch", 1) == args.batch}
    for severities in (("error",), ("error", "warning")):
        _score(repo, labels, severities)
    return 0


def _score(repo: Path, labels: dict, severities: tuple[str, ...]) -> None:
    """Print the disagreements and P/R counting findings of the given severities."""
    tp = fp = fn = 0
    for op, entry in sorted(labels["operators"].items()):
        want = {item["line"] for item in entry["lines"] if item["verdict"] == "violation"}
        findings, error = judge_golden(repo / op / GOLDEN, f"{op}/{GOLDEN.as_posix()}")
        if error:
            print(error)
        findings = [f for f in findings if f.severity in severities]
        got = {f.line for f in findings}
        tp += len(got & want)
        for line in sorted(got - want):
            print(f"FP {op}:{line} " + next(f.message for f in findings if f.line == line))
            fp += 1
        for line in sorted(want - got):
            print(f"FN {op}:{line}")
            fn += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    print(f"[{'+'.join(severities)}] operators {len(labels['operators'])}  tp {tp}  fp {fp}  fn {fn}  "
          f"precision {precision:.3f}  recall {recall:.3f}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
