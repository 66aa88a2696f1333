"""Scoring the search against a set of questions with known answers (tests/route_eval.yaml).

A question is answered at rank k when one of its answer pages is among the first k pages
the search returns. The held-out questions (``heldout: true``) are scored apart from the
ones the search was tuned on, so that tuning cannot pass for quality.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kb_tools.diagnostics import Diagnostic, KbErrors
from kb_tools.files.text import read_text
from kb_tools.files.yamlio import load_yaml
from kb_tools.search.answer import answer


@dataclass(frozen=True)
class Question:
    text: str
    kind: str
    answers: tuple[str, ...]
    heldout: bool
    batch: int  # when it was written (held-out questions come in batches)
    line: int


@dataclass(frozen=True)
class Outcome:
    question: Question
    ranked: tuple[str, ...]  # page ids, best first

    def hit_at(self, k: int) -> bool:
        return any(page in self.question.answers for page in self.ranked[:k])


def load_questions(path: Path) -> list[Question]:
    data = load_yaml(read_text(path), path)
    items = data.get("questions") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise KbErrors([Diagnostic(str(path), 1, "EV001", "expected a mapping with a 'questions' list")])
    questions, diags = [], []
    for i, item in enumerate(items):
        line = items.line_of(i)
        ok = isinstance(item, dict) and isinstance(item.get("q"), str) and isinstance(item.get("answers"), list) and item["answers"]
        if not ok:
            diags.append(Diagnostic(str(path), line, "EV002", "a question needs q (text) and answers (page ids)"))
            continue
        questions.append(Question(item["q"], str(item.get("kind", "")), tuple(item["answers"]), bool(item.get("heldout")),
                                  int(item.get("batch", 1)), line))
    if diags:
        raise KbErrors(diags)
    return questions


def run_questions(root: Path, questions: list[Question], depth: int = 3) -> list[Outcome]:
    """Each question asked as free text (its exact-task answer counts too, in task order)."""
    return [Outcome(q, tuple(h.id for h in answer(root, q.text, limit=depth).hits)) for q in questions]


def rate(outcomes: list[Outcome], k: int) -> float:
    return sum(o.hit_at(k) for o in outcomes) / len(outcomes) if outcomes else 0.0
