"""Repeated numbers nothing registers: a significant number that two pages state is one fact
that can drift apart, so it must be registered (kb/values.yaml, judged by values.py), or be
stated on pages that link the one page where it is explained (its home), or be declared by a
page as its own number, with the reason, in ``<!-- own-numbers: 4,096; 0.5 -- why -->`` (LN144).
An integer one digit away from a registered value or from another page's number (69,207,940
beside 69,207,040) is a copy that drifted, whether or not it is repeated (LN145).

Significant, by rule (see ``significant``): an integer of three or more significant digits
that is not a year, a non-integer (decimal, percentage, fraction), a dotted version, an n/n
count of two-digit size or a sequence such as 16/8/4/2, written in digits. Never read as
numbers: code (fenced, indented and inline), names such as SHA-256, link targets and
addresses, seed citations (``§3.5.1``, ``001 §2``, ``001:340``), ``path:line`` places and
commit hashes.
"""

from __future__ import annotations

import os
import re
from fractions import Fraction
from pathlib import Path

from kb_tools.diagnostics import Diagnostic
from kb_tools.kb.numbers import numbers
from kb_tools.kb.pages import shown_path

_OWN = re.compile(r"<!--\s*own-numbers:(.*?)(?:--\s(.*?))?-->", re.S)
_FENCE = re.compile(r"^[ \t]*```.*?^[ \t]*```[^\n]*$", re.S | re.M)
_INDENTED = re.compile(r"(?:^[ \t]*\n)((?: {4,}\S[^\n]*\n?)+)", re.M)  # a code block by indentation
# What is not prose: inline code, link targets, addresses, seed citations, path:line, hashes.
_NOT_PROSE = re.compile(
    r"`[^`\n]*`"
    r"|\]\([^)\s]*\)"
    r"|https?://\S+"
    r"|(?:\b\d{3}\s*)?§\s*\d+(?:\.\d+)*(?:[-–]\d+(?:\.\d+)*)?"
    r"|\b\d{3}:\d+(?:[-–]\d+)?\b"
    r"|(?<![\w./-])[\w./-]+\.\w+:\d+(?:[-–]\d+)?"
    r"|\b[A-Za-z]+-\d+\b"  # a name: SHA-256, UTF-8
    r"|\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"
)
_YEAR = re.compile(r"(?:19[89]\d|20[0-3]\d)")


def _blank(m: re.Match) -> str:
    return re.sub(r"[^\n]", " ", m.group(0))


def prose(body: str) -> str:
    """The body with everything that is not prose blanked, lines kept where they were."""
    body = re.sub(r"<!--.*?-->", _blank, body, flags=re.S)
    return _NOT_PROSE.sub(_blank, _INDENTED.sub(_blank, _FENCE.sub(_blank, body)))


def _digits(value: Fraction) -> int:
    """Significant digits of an integer: 35652608 has 8, 4096 has 4, 1000 has 1."""
    return len(str(abs(value.numerator)).rstrip("0"))


def significant(key: tuple, text: str) -> bool:
    """Whether a number (one key of it, with its written text) is a fact worth guarding."""
    kind = key[0]
    if not re.search(r"\d", text):
        return False  # "a quarter", "四次": a number in words is never a measured fact
    if kind in ("v", "s"):
        return True
    if kind == "c":
        return key[2] >= 10
    if kind == "n":
        value = key[1]
        if value.denominator != 1:
            return True
        return _digits(value) >= 3 and not _YEAR.fullmatch(text.strip())
    return False  # a ratio a:b is a time, a proportion or a place more often than a fact


def stated(body: str) -> dict:
    """key -> (written text, body line offset) of the first statement of each significant
    number in the page's prose."""
    text = prose(body)
    found = {}
    for n in numbers(text):
        for key in n.keys:
            if key not in found and significant(key, n.text):
                found[key] = (n.text, text.count("\n", 0, n.start))
    return found


def own_numbers(body: str) -> tuple[list, list]:
    """(text, keys, line offset) of each number a page declares its own, and (line offset,
    problem) for a declaration that gives no reason or holds something that is not one number."""
    owned, problems = [], []
    for m in _OWN.finditer(body):
        offset = body.count("\n", 0, m.start())
        if not (m.group(2) or "").strip():
            problems.append((offset, "an own-numbers comment needs its reason after ' -- '"))
        for item in (i.strip() for i in m.group(1).split(";")):
            parsed = numbers(item)
            if len(parsed) != 1 or parsed[0].text.strip() != item:
                problems.append((offset, f"own-numbers entry {item!r} is not one number"))
            else:
                owned.append((item, parsed[0].keys, offset))
    return owned, problems


def _targets(page) -> set:
    """The files a page's Markdown links resolve to."""
    return {os.path.normpath(page.path.parent / t) for t in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", page.body)}


def _document_states(path: str, key: tuple, cache: dict) -> bool:
    """Whether a linked Markdown file outside the pages (docs/...) states the number."""
    if path not in cache:
        try:  # a link too long to name a file, or not text, is the links check's finding
            cache[path] = set(stated(Path(path).read_text(encoding="utf-8"))) if path.endswith(".md") else set()
        except (OSError, UnicodeDecodeError):
            cache[path] = set()
    return key in cache[path]


def _unclaimed(page, registered: set, diags: list) -> dict:
    """key -> (text, file line) of the significant numbers the page states that are neither
    registered nor declared its own; a malformed or stale declaration is added to ``diags``."""
    shown, found = shown_path(page.path), stated(page.body)
    owned, problems = own_numbers(page.body)
    diags += [Diagnostic(shown, page.body_line + offset, "LN144", problem) for offset, problem in problems]
    diags += [Diagnostic(shown, page.body_line + offset, "LN144", f"own number {text} is not a significant number this page states; drop it from own-numbers")
              for text, keys, offset in owned if not keys & set(found)]
    mine = {key for _, keys, _ in owned for key in keys}
    return {key: (text.strip(), page.body_line + offset) for key, (text, offset) in found.items() if key not in registered | mine}


def near(a: int, b: int) -> bool:
    """Whether two integers of four or more significant digits are written alike but for one
    digit (69,207,552 and 69,207,940): the mark of a copy that drifted."""
    da, db = str(a), str(b)
    return (a != b and len(da) == len(db) and min(len(da.rstrip("0")), len(db.rstrip("0"))) >= 4
            and sum(x != y for x, y in zip(da, db)) == 1)


def _integers(keys) -> set:
    return {int(k[1]) for k in keys if k[0] == "n" and k[1].denominator == 1}


def near_copies(stating: dict, registered: set) -> list[tuple]:
    """(integer, the one it nearly copies, pages stating that one or None when registered):
    ``stating`` maps each integer a page states to the ids of the pages stating it."""
    known = _integers(registered)
    found = []
    for a in sorted(set(stating) - known):
        for b in sorted(known | set(stating)):
            if near(a, b) and (b in known or (len(stating[a]), a) < (len(stating[b]), b)):
                found.append((a, b, None if b in known else stating[b]))
                break
    return found


def repeat_drift(pages: dict, registered: set) -> list[Diagnostic]:
    """One line per page that states a significant, unregistered number another page states
    too, when it neither links the number's home nor declares the number its own; and one
    per own-numbers declaration that is malformed or stale.

    ``pages``: page id -> loaded page; ``registered``: the keys of every registered number
    value. The home of a number is a page stating it, or a linked document (docs/...) that
    states it, which the most of the pages stating it link (the first by path on a tie)."""
    where, diags, links, docs = {}, [], {}, {}
    for pid in sorted(pages, key=lambda p: pages[p].rel_path):
        links[pid] = _targets(pages[pid])
        for key, (text, line) in _unclaimed(pages[pid], set(), diags).items():
            where.setdefault(key, []).append((os.path.normpath(pages[pid].path), pid, text, line))
    diags += _near_copy_lines(where, registered)
    where = {key: places for key, places in where.items() if key not in registered}
    page_files = {os.path.normpath(p.path) for p in pages.values()}
    for key, places in where.items():
        if len(places) < 2:
            continue
        homes = sorted({file for file, *_ in places} | {t for _, pid, *_ in places for t in links[pid]
                                                         if t not in page_files and _document_states(t, key, docs)})
        home = max(homes, key=lambda h: sum(h == file or h in links[pid] for file, pid, *_ in places))
        home_at = shown_path(Path(home)) + next((f":{line}" for file, _, _, line in places if file == home), "")
        diags += [Diagnostic(shown_path(Path(file)), line, "LN144",
                             f"{text} is also stated on {home_at}, which this page does not link; "
                             f"register it in kb/values.yaml with a home, link the page that explains it, "
                             f"or declare it this page's own in <!-- own-numbers: {text} -- why -->")
                  for file, pid, text, line in places if home != file and home not in links[pid]]
    return diags


def _near_copy_lines(where: dict, registered: set) -> list[Diagnostic]:
    """LN145: one line per page stating an integer one digit away from a registered value or
    from an integer that more pages state (the first page of the other on a tie)."""
    places = {}
    for key, at in where.items():
        for n in _integers({key}):
            places.setdefault(n, []).extend(at)
    stating = {n: [pid for _, pid, _, _ in at] for n, at in places.items()}
    diags = []
    for a, b, others in near_copies(stating, registered):
        other = "a registered value (kb/values.yaml)" if others is None else \
            next(f"{shown_path(Path(file))}:{line} ({text})" for file, pid, text, line in places[b] if pid == others[0])
        diags += [Diagnostic(shown_path(Path(file)), line, "LN145",
                             f"{text} differs in one digit from {b:,}, stated on {other}: correct the copy, "
                             f"or declare it this page's own in <!-- own-numbers: {text} -- why -->")
                  for file, pid, text, line in places[a]]
    return diags
