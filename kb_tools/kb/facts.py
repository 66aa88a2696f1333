"""Registered facts: a statement several pages need, with one home page that owns its wording.

``kb/facts.yaml`` names each fact, its home page and the retired forms a stale copy would
still carry. The home page holds the statement between ``<!-- fact: ID -->`` and
``<!-- /fact -->``; another page that needs it quotes it between the same markers and links to
the home page. So a correction made on the home page either reaches every quote or makes the
quotes fail: a quote that differs from its home, or a retired form left anywhere, is a second
statement of the fact, and lint names both pages and the fact in one line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from kb_tools.diagnostics import Diagnostic
from kb_tools.files.yamlio import LineDict
from kb_tools.kb.links import links_to
from kb_tools.kb.pages import shown_path
from kb_tools.kb.registry_file import load_entries

FACTS_FILE = "facts.yaml"
_KEYS = {"id", "home", "about", "retired"}
_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
# <!-- fact: some-id --> statement <!-- /fact -->; the statement may wrap lines, never nest.
_BLOCK = re.compile(r"<!--\s*fact:\s*([^\s>]*)\s*-->(.*?)<!--\s*/fact\s*-->", re.S)
_OPEN = re.compile(r"<!--\s*fact:")


@dataclass(frozen=True)
class Fact:
    id: str
    home: str  # page id
    about: str  # one line: what the fact is
    retired: tuple[str, ...]  # phrases a stale copy still carries, matched (case and line breaks aside) anywhere but the home page
    line: int


@dataclass(frozen=True)
class Statement:
    fact_id: str
    text: str  # whitespace collapsed
    offset: int  # body line (0-based) where the opening marker is


def facts_path(kb_dir: Path) -> Path:
    return Path(kb_dir) / FACTS_FILE


def load_facts(kb_dir: Path) -> list[Fact]:
    """The facts of ``kb/facts.yaml`` in file order; ``[]`` when the KB registers none.

    A malformed file raises KbErrors with one line per bad entry (code FA0xx).
    """
    return load_entries(facts_path(kb_dir), "facts", "FA01", _fact, lambda fact: fact.id,
                        "fact {!r} is already registered on line {}")


def _fact(entry, line: int):
    """One Fact, or None and the (line, message) problems that prevent it."""
    if not isinstance(entry, LineDict):
        return None, [(line, "a fact must be a mapping with id, home and about")]
    problems = [(entry.line_of(k), f"unknown key {k!r} (allowed: {', '.join(sorted(_KEYS))})") for k in entry if k not in _KEYS]
    for key in ("id", "home", "about"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            problems.append((entry.line_of(key), f"{key!r} must be a non-empty string"))
    if isinstance(entry.get("id"), str) and not _ID.match(entry["id"].strip()):
        problems.append((entry.line_of("id"), f"id {entry['id']!r} must be lower-case words joined by '-'"))
    retired = entry.get("retired", [])
    if not isinstance(retired, list) or not all(isinstance(r, str) and r.strip() for r in retired):
        problems.append((entry.line_of("retired"), "'retired' must be a list of non-empty phrases"))
    if problems:
        return None, problems
    phrases = tuple(" ".join(r.split()) for r in retired)
    return Fact(entry["id"].strip(), entry["home"].strip(), " ".join(entry["about"].split()), phrases, entry.line), []


def statements(body: str) -> tuple[list[Statement], list[int]]:
    """The fact blocks of a page body, and the body lines of opening markers left unclosed."""
    found, closed = [], set()
    for m in _BLOCK.finditer(body):
        offset = body.count("\n", 0, m.start())
        found.append(Statement(m.group(1), " ".join(m.group(2).split()), offset))
        closed.add(m.start())
    unclosed = [body.count("\n", 0, m.start()) for m in _OPEN.finditer(body) if m.start() not in closed]
    return found, unclosed


def fact_drift(pages: dict, facts: list[Fact], unloadable: tuple[str, ...] = ()) -> list[Diagnostic]:
    """Every registered fact stated once, on its home page; every other statement of it a quote.

    ``pages`` maps page id to a loaded page (``path``, ``body``, ``body_line``, ``trigger``,
    ``invariants``, ``lines``); a home page among ``unloadable`` (page ids that failed to load)
    is left to the front-matter check that reports it.
    """
    by_id = {f.id: f for f in facts}
    blocks = {pid: statements(page.body) for pid, page in pages.items()}
    diags: list[Diagnostic] = []
    homes: dict[str, Statement] = {}
    for fact in facts:
        home = pages.get(fact.home)
        if home is None and fact.home in unloadable:
            continue
        if home is None:
            diags.append(Diagnostic("kb/facts.yaml", fact.line, "LN120", f"fact {fact.id!r}: home page {fact.home!r} does not exist"))
            continue
        own = [s for s in blocks[fact.home][0] if s.fact_id == fact.id]
        if len(own) != 1:
            what = "has no" if not own else f"has {len(own)}"
            diags.append(Diagnostic(shown_path(home.path), home.body_line, "LN121",
                                    f"home page of fact {fact.id!r} {what} <!-- fact: {fact.id} --> statement (it needs exactly one)"))
            continue
        homes[fact.id] = own[0]
    for pid, page in pages.items():
        shown = shown_path(page.path)
        found, unclosed = blocks[pid]
        diags.extend(Diagnostic(shown, page.body_line + o, "LN125", "a <!-- fact: --> marker is not closed by <!-- /fact -->") for o in unclosed)
        for s in found:
            fact = by_id.get(s.fact_id)
            if fact is None:
                diags.append(Diagnostic(shown, page.body_line + s.offset, "LN125", f"fact {s.fact_id!r} is not registered in kb/facts.yaml"))
                continue
            if pid == fact.home or fact.id not in homes:
                continue
            home_shown = shown_path(pages[fact.home].path)
            if s.text != homes[fact.id].text:
                diags.append(Diagnostic(shown, page.body_line + s.offset, "LN122",
                                        f"states fact {fact.id!r} differently from its home page {home_shown}; quote it as written there"))
            elif not links_to(page, pages[fact.home]):
                diags.append(Diagnostic(shown, page.body_line + s.offset, "LN124",
                                        f"quotes fact {fact.id!r} without linking its home page {home_shown}"))
        diags.extend(_retired_forms(pid, page, facts, pages))
    return diags


def _retired_forms(pid: str, page, facts: list[Fact], pages: dict) -> list[Diagnostic]:
    """A retired wording of a fact left on a page other than its home: in the body (prose and
    code), the trigger or an invariant's text."""
    places = [(_Words(page.body), page.body_line)]
    front_line = page.lines.get("invariants") or page.lines.get("trigger")
    places += [(_Words(text), front_line) for text in [page.trigger, *(i.text for i in page.invariants)]]
    shown, diags = shown_path(page.path), []
    for fact in facts:
        if pid == fact.home or fact.home not in pages:
            continue
        for phrase in fact.retired:
            for words, first_line in places:
                offset = words.find(phrase)
                if offset is None:
                    continue
                line = first_line + offset if words is places[0][0] else first_line
                diags.append(Diagnostic(shown, line, "LN123",
                                        f"states fact {fact.id!r} differently from its home page {shown_path(pages[fact.home].path)}: "
                                        f"{phrase!r} is a retired form ({fact.about})"))
                break
    return diags


class _Words:
    """A body with its whitespace collapsed, so that a phrase is found across line breaks and
    reported on the line where it starts (computed only for a match, which is rare)."""

    def __init__(self, body: str):
        self.body = body
        self.text = " ".join(body.split()).lower()

    def find(self, phrase: str) -> int | None:
        """Body line (0-based) where ``phrase`` starts, or None."""
        at = self.text.find(phrase.lower())  # phrases arrive with their whitespace collapsed
        if at < 0:
            return None
        words_before = self.text.count(" ", 0, at)  # the match starts in the next word
        word = next(islice(re.finditer(r"\S+", self.body), words_before, None))
        return self.body.count("\n", 0, word.start())
