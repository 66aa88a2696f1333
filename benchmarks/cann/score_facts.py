"""Score kb_tools.cann.read_operator against the hand labels (benchmarks/cann/labels-ops-math.yaml).

Usage: python benchmarks/cann/score_facts.py REPO_ROOT [--labels FILE] [--batch N]
(default labels-ops-math.yaml beside this script; a bare second argument is read as FILE too).
REPO_ROOT is a checkout of the labelled repository at the labelled commit. An operator is right
when all seven facts equal its label (lists compared as sets); the per-fact numbers and every
disagreement are printed too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


from kb_tools.cann import read_operator
from labels import load_labels  # benchmarks/cann/labels.py, beside this script

FACTS = ("dtypes", "criteria", "uncovered", "stale", "three_party", "untested", "golden_framework")


def _norm(value):
    return sorted(value) if isinstance(value, list) else value


def main(argv: list[str]) -> int:
    args = _parse(argv)
    root = Path(args.repo)
    labels_path = Path(args.labels or args.positional_labels or Path(__file__).with_name("labels-ops-math.yaml"))
    data = load_labels(labels_path)
    if data is None:
        return 2
    labels = data["operators"]
    if args.batch:
        labels = {op: want for op, want in labels.items() if want.get("batch", 1) == args.batch}
    right_ops, per_fact = 0, dict.fromkeys(FACTS, 0)
    for folder, want in labels.items():
        got = read_operator(root / folder, folder).as_json()
        wrong = [f for f in FACTS if _norm(got[f]) != _norm(want[f])]
        for f in FACTS:
            per_fact[f] += f not in wrong
        right_ops += not wrong
        for f in wrong:
            print(f"{folder}: {f}: got {_norm(got[f])} want {_norm(want[f])}")
    n = len(labels)
    print(f"operators with every fact right: {right_ops}/{n} = {right_ops / n:.3f}")
    for f in FACTS:
        print(f"  {f}: {per_fact[f]}/{n}")
    return 0


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo")
    parser.add_argument("positional_labels", nargs="?", help=argparse.SUPPRESS)
    parser.add_argument("--labels", help="labels file (default labels-ops-math.yaml)")
    parser.add_argument("--batch", type=int, help="score only the entries of this batch (no batch: field is batch 1)")
    return parser.parse_args(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
