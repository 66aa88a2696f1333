"""Answer quality of `kbt route "<free text>"` on tests/route_eval.yaml: top-1 and top-3 hit
rates, for the questions the search was tuned on and, apart, for the held-out third that was
written before the search existed. Prints every question that misses the top 3.

    python benchmarks/bench_route.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kb_tools.search.evaluate import load_questions, rate, run_questions

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=ROOT / "tests" / "route_eval.yaml")
    args = parser.parse_args()
    outcomes = run_questions(ROOT, load_questions(args.questions))
    held = [o for o in outcomes if o.question.heldout]
    groups = [("tuning", [o for o in outcomes if not o.question.heldout]), ("held-out", held)]
    groups += [(f"  batch {b}", [o for o in held if o.question.batch == b]) for b in sorted({o.question.batch for o in held})]
    for label, group in [*groups, ("all", outcomes)]:
        print(f"{label:10} {len(group):3} questions  top-1 {rate(group, 1):6.1%}  top-3 {rate(group, 3):6.1%}")
    kinds = sorted({o.question.kind for o in outcomes})
    print("by kind:  " + "  ".join(f"{k} {rate([o for o in outcomes if o.question.kind == k], 3):.0%}" for k in kinds))
    for o in outcomes:
        if not o.hit_at(3):
            tag = "held-out" if o.question.heldout else "tuning"
            print(f"miss ({tag}): {o.question.text!r} -> {', '.join(o.ranked) or 'nothing'}; wanted {', '.join(o.question.answers)}")


if __name__ == "__main__":
    main()
