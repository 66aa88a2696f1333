"""What ``kbt route`` answers: the pages of a task named exactly (by id or wording), in the
task's order, or else the pages ranked for the question as a search.

A question is refused with one line (exit 2) when it is empty, longer than MAX_QUERY_CHARS
or not text; a cached index that turns out to be corrupt is rebuilt and asked again.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from kb_tools.diagnostics import EXIT_USAGE, fail
from kb_tools.kb.router import Task, find_task
from kb_tools.search.index import open_index
from kb_tools.search.rank import Hit, search

MAX_QUERY_CHARS = 8192  # room for a pasted error with its context, not for a log file
_WHO = "kbt route"


class Answer:
    """What a question found. A plain class: a dataclass costs a millisecond of start-up."""

    __slots__ = ("task", "hits", "tasks", "unloadable")

    def __init__(self, task: Task | None, hits: list[Hit], tasks: list[Task], unloadable: list[str]):
        self.task = task  # the task named exactly, if any
        self.hits = hits
        self.tasks = tasks  # every task of the router, for "nearest" when nothing matched
        self.unloadable = unloadable  # page files that failed to load, so are not searched


def check_query(text: str) -> str:
    """The question, stripped; a KbError (exit 2) when it cannot be one."""
    if len(text) > MAX_QUERY_CHARS:
        fail(_WHO, None, "RQ002", f"the question is {len(text)} characters, over the {MAX_QUERY_CHARS}-character limit; "
             "paste the error line, not the whole log", EXIT_USAGE)
    if any((c < " " and c not in "\t\r\n") or "\ud800" <= c <= "\udfff" for c in text):
        fail(_WHO, None, "RQ003", "the question is binary data (control bytes or bytes that are not UTF-8), not text", EXIT_USAGE)
    text = text.strip()
    if not text:
        fail(_WHO, None, "RQ001", "the question is empty: give a task id, a task's wording or any question", EXIT_USAGE)
    return text


def read_stdin_query(stream) -> str:
    """A question from standard input (``kbt route -``), read no further than the limit."""
    data = stream.read(MAX_QUERY_CHARS * 4 + 1)  # at most 4 UTF-8 bytes per character
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        fail(_WHO, None, "RQ003", "the question is binary data (bytes that are not UTF-8), not text", EXIT_USAGE)
    return text


def answer(root: Path, query: str, *, limit: int = 5, skill: str | None = None) -> Answer:
    try:
        return _answer(open_index(root), query, limit, skill)
    except sqlite3.DatabaseError:  # a cached index that read back but is damaged inside
        return _answer(open_index(root, fresh=True), query, limit, skill)


def _answer(conn: sqlite3.Connection, query: str, limit: int, skill: str | None) -> Answer:
    tasks = [Task(i, w, tuple(json.loads(s)), tuple(json.loads(r)), line)
             for i, w, s, r, line in conn.execute("SELECT id, wording, skills, refs, line FROM tasks ORDER BY ord")]
    unloadable = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'unloadable'").fetchone()[0])
    task = find_task(tasks, query)
    if task is not None:
        return Answer(task, _task_pages(conn, task), tasks, unloadable)
    return Answer(None, search(conn, query, limit=limit, skill=skill), tasks, unloadable)


def _task_pages(conn: sqlite3.Connection, task: Task) -> list[Hit]:
    hits = []
    for ref in task.references:
        row = conn.execute("SELECT id, title, tasks FROM pages WHERE path = ?", (f"kb/{ref}",)).fetchone()
        page_id, title, tasks = row if row else (Path(ref).stem, None, "[]")
        hits.append(Hit(page_id, f"kb/{ref}", title, None, (task.id,), tuple(json.loads(tasks))))
    return hits


def format_hits(query: str, hits: list[Hit]) -> str:
    lines = [f"pages for {query!r}, best first:"]
    for rank, hit in enumerate(hits, start=1):
        lines.append(f"{rank:2}. {hit.path}  {hit.title}")
        detail = [f"score {hit.score:g}", f"matched: {', '.join(hit.matched) or '-'}"]
        if hit.tasks:
            detail.append(f"tasks: {', '.join(hit.tasks)}")
        lines.append("    " + " · ".join(detail))
    return "\n".join(lines) + "\n"


def format_task(task: Task, hits: list[Hit]) -> str:
    lines = [f"{task.wording} [{task.id}] -- skills: {', '.join(task.skills)}"]
    lines += [f"  {h.path}" + (f"  {h.title}" if h.title else "  (missing page)") for h in hits]
    return "\n".join(lines) + "\n"
