"""Repeated numbers nothing registers: a significant number that two pages state is one fact
that can drift apart, so it must be registered (kb/values.yaml, judged by values.py), or be
stated on pages that link the one page where it is explained (its home), or be declared by a
page as its own number, with the reason, in ``<!-- own-numbers: 4,096; 0.5 -- why -->``.

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
    r"|[\w./-]+\.\w+:\d+(?:[-–]\d+)?"
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
    if kind == "v":
        return True
    if kind == "s":
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
    """(text, keys) of each number a page declares its own, and the problems of a declaration
    that gives no reason or holds something that is not one number."""
    owned, problems = [], []
    for m in _OWN.finditer(body):
        if not (m.group(2) or "").strip():
            problems.append("an own-numbers comment needs its reason after ' -- '")
        for item in (i.strip() for i in m.group(1).split(";")):
            parsed = numbers(item)
            if len(parsed) != 1 or parsed[0].text.strip() != item:
                problems.append(f"own-numbers entry {item!r} is not one number")
            else:
                owned.append((item, parsed[0].keys))
    return owned, problems


def _targets(page) -> set:
    """The files a page's Markdown links resolve to."""
    return {os.path.normpath(page.path.parent / t) for t in re.findall(r"\]\(([^)\s#]+)(?:#[^)]*)?\)", page.body)}


def _document_states(path: str, key: tuple, cache: dict) -> bool:
    """Whether a linked Markdown file outside the pages (docs/...) states the number."""
    if path not in cache:
        file = Path(path)
        cache[path] = set(stated(file.read_text(encoding="utf-8"))) if file.suffix == ".md" and file.is_file() else set()
    return key in cache[path]


def repeat_drift(pages: dict, registered: set) -> list[Diagnostic]:
    """One line per page that states a significant, unregistered number another page states
    too, when it neither links the number's home nor declares the number its own; and one
    per own-numbers declaration that is malformed or stale.

    ``pages``: page id -> loaded page; ``registered``: the keys of every registered number
    value. The home of a number is a page stating it, or a linked document (docs/...) that
    states it, which the most of the pages stating it link (the first by path on a tie)."""
    where, diags, links, docs = {}, [], {}, {}
    for pid in sorted(pages, key=lambda p: pages[p].rel_path):
        page = pages[pid]
        shown = shown_path(page.path)
        links[pid] = _targets(page)
        owned, problems = own_numbers(page.body)
        diags += [Diagnostic(shown, page.body_line, "LN144", problem) for problem in problems]
        found = stated(page.body)
        diags += [Diagnostic(shown, page.body_line, "LN144", f"own number {text} is not a significant number this page states; drop it from own-numbers")
                  for text, keys in owned if not keys & set(found)]
        mine = {key for _, keys in owned for key in keys}
        for key, (text, offset) in found.items():
            if key not in registered and key not in mine:
                where.setdefault(key, []).append((pid, text.strip(), page.body_line + offset))
    page_files = {os.path.normpath(p.path): pid for pid, p in pages.items()}
    for key, places in where.items():
        if len(places) < 2:
            continue
        ids = [pid for pid, _, _ in places]
        stating = {os.path.normpath(pages[pid].path) for pid in ids}
        homes = sorted(stating | {t for pid in ids for t in links[pid] if t not in page_files and _document_states(t, key, docs)})
        home = max(homes, key=lambda h: sum(h in links[pid] or h == os.path.normpath(pages[pid].path) for pid in ids))
        home_shown = shown_path(Path(home))
        home_line = next((f":{line}" for pid, _, line in places if os.path.normpath(pages[pid].path) == home), "")
        diags += [Diagnostic(shown_path(pages[pid].path), line, "LN144",
                             f"{text} is also stated on {home_shown}{home_line}, which this page does not link; "
                             f"register it in kb/values.yaml with a home, link the page that explains it, "
                             f"or declare it this page's own in <!-- own-numbers: {text} -- why -->")
                  for pid, text, line in places if home not in links[pid] and home != os.path.normpath(pages[pid].path)]
    return diags
