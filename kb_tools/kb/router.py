"""ROUTER.md: the human-readable task table, parsed.

Rows look like ``| Decide what may run on the host `decide-host-work` | `pypto-pro-op-design` /
`pypto-pro-op-develop` | [constraints/wrapper-boundary.md](kb/constraints/wrapper-boundary.md) |``.
The code span in the Task cell is the task's stable id; without one, the id is the slug of
the wording.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kb_tools.diagnostics import Diagnostic, KbErrors
from kb_tools.files.text import read_text

HEADER = ("task", "skill", "focused reference")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
_CODE = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Task:
    id: str
    wording: str
    skills: tuple[str, ...]
    references: tuple[str, ...]  # KB-relative page paths, e.g. constraints/wrapper-boundary.md
    line: int


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _kb_relative(target: str) -> str:
    target = target.split("#", 1)[0]
    target = target.removeprefix("./")
    return target.removeprefix("kb/")


def parse_router(path: Path) -> list[Task]:
    """All task rows of the first ``| Task | Skill | Focused reference |`` table."""
    from kb_tools.kb.pages import shown_path  # on use: `kbt route` reads tasks from its index, not pages

    text = read_text(path, code_prefix="RT")
    path = shown_path(path)
    lines = text.splitlines()
    tasks, diags = [], []
    header_at = next((i for i, l in enumerate(lines) if l.lstrip().startswith("|") and tuple(c.lower() for c in _cells(l)) == HEADER), None)
    if header_at is None:
        raise KbErrors([Diagnostic(str(path), None, "RT010", "no '| Task | Skill | Focused reference |' table")])
    seen = {}
    for i in range(header_at + 2, len(lines)):
        line = lines[i]
        if not line.lstrip().startswith("|"):
            break
        cells = _cells(line)
        n = i + 1
        if len(cells) != 3:
            diags.append(Diagnostic(str(path), n, "RT011", f"a task row needs 3 cells, found {len(cells)}"))
            continue
        task_cell, skill_cell, ref_cell = cells
        codes = _CODE.findall(task_cell)
        wording = _CODE.sub("", task_cell).strip()
        task_id = codes[-1].strip() if codes else slug(wording)
        skills = tuple(_CODE.findall(skill_cell)) or tuple(s.strip() for s in re.split(r"[/,]", skill_cell) if s.strip())
        refs = tuple(_kb_relative(t) for t in _LINK.findall(ref_cell))
        if not wording:
            diags.append(Diagnostic(str(path), n, "RT012", "task row has no wording"))
        if not refs:
            diags.append(Diagnostic(str(path), n, "RT013", f"task {task_id!r} links no page"))
        if task_id in seen:
            diags.append(Diagnostic(str(path), n, "RT014", f"task id {task_id!r} repeats (first at line {seen[task_id]})"))
        seen.setdefault(task_id, n)
        tasks.append(Task(task_id, wording, skills, refs, n))
    if diags:
        raise KbErrors(diags)
    return tasks


def find_task(tasks: list[Task], query: str) -> Task | None:
    """A task by id, exact wording, or the slug of the wording (case-insensitive)."""
    q = query.strip()
    for task in tasks:
        if q == task.id or q.lower() == task.wording.lower() or slug(q) == slug(task.wording):
            return task
    return None


def nearest(tasks: list[Task], query: str, n: int = 3) -> list[Task]:
    """The tasks whose wording or id reads most like ``query``."""
    import difflib

    scored = []
    q = query.lower()
    for task in tasks:
        score = max(difflib.SequenceMatcher(None, q, task.wording.lower()).ratio(),
                    difflib.SequenceMatcher(None, slug(q), task.id).ratio())
        words = set(re.findall(r"[a-z0-9]+", q)) & set(re.findall(r"[a-z0-9]+", task.wording.lower()))
        scored.append((score + 0.1 * len(words), task.wording, task))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [t for _, _, t in scored[:n]]
