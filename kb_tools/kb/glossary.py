"""The bilingual glossary: the Chinese and English names of a term, and the pages that treat it.

Developers search the KB by the words of the seeds (非连续, 余弦相似度, 累加 ...) or by the
error string they are looking at; ``kb/glossary.yaml`` maps both to page ids, so that lint,
the site and free-text routing read one list instead of each keeping its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kb_tools.files.yamlio import LineDict
from kb_tools.kb.registry_file import load_entries

GLOSSARY_FILE = "glossary.yaml"
_REQUIRED = ("zh", "en", "pages")
_OPTIONAL_LISTS = ("aliases", "errors")
_KEYS = set(_REQUIRED) | set(_OPTIONAL_LISTS)


@dataclass(frozen=True)
class GlossaryTerm:
    zh: str
    en: str
    aliases: tuple[str, ...]
    pages: tuple[str, ...]
    errors: tuple[str, ...]
    line: int  # line of the entry in glossary.yaml


def glossary_path(root: Path) -> Path:
    return Path(root) / "kb" / GLOSSARY_FILE


def load_glossary(root: Path) -> list[GlossaryTerm]:
    """The terms of ``<root>/kb/glossary.yaml`` in file order; ``[]`` when there is no glossary.

    A malformed file raises KbErrors with one line per bad entry (code GL0xx).
    """
    return load_entries(glossary_path(root), "terms", "GL01", _term, lambda term: term.zh,
                        "term {!r} is already defined on line {}")


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v.strip() for v in value)


def _term(entry, line: int):
    """One GlossaryTerm, or None and the (line, message) problems that prevent it."""
    if not isinstance(entry, LineDict):
        return None, [(line, "a term must be a mapping with zh, en and pages")]
    problems = [(entry.line_of(k), f"unknown key {k!r} (allowed: {', '.join(sorted(_KEYS))})") for k in entry if k not in _KEYS]
    for key in ("zh", "en"):
        if not isinstance(entry.get(key), str) or not entry[key].strip():
            problems.append((entry.line_of(key), f"{key!r} must be a non-empty string"))
    if not _strings(entry.get("pages")) or not entry.get("pages"):
        problems.append((entry.line_of("pages"), "'pages' must be a non-empty list of page ids"))
    for key in _OPTIONAL_LISTS:
        if key in entry and not _strings(entry[key]):
            problems.append((entry.line_of(key), f"{key!r} must be a list of non-empty strings"))
    if problems:
        return None, problems
    return GlossaryTerm(
        zh=entry["zh"].strip(),
        en=entry["en"].strip(),
        aliases=tuple(a.strip() for a in entry.get("aliases", ())),
        pages=tuple(p.strip() for p in entry["pages"]),
        errors=tuple(e.strip() for e in entry.get("errors", ())),
        line=entry.line,
    ), []


def glossary_markdown(terms: list[GlossaryTerm], rel_of: dict[str, str]) -> str:
    """The glossary as one Markdown page of the site; ``rel_of`` maps page id to its KB path."""
    def cell(text: str) -> str:
        return text.replace("|", "/")

    def page_links(term: GlossaryTerm) -> str:
        return ", ".join(f"[{pid}](kb/{rel_of[pid]})" if pid in rel_of else pid for pid in term.pages)

    rows = "\n".join(
        f"| {cell(t.zh)} | {cell(t.en)} | {cell(', '.join(t.aliases)) or '—'} | {page_links(t)} | "
        f"{cell(', '.join(f'`{e}`' for e in t.errors)) or '—'} |"
        for t in sorted(terms, key=lambda t: t.en.lower()))
    return ("# Glossary — 术语表\n\n"
            "The words of the seeds beside the words of the pages: search by either, or by the error string "
            "or API name you are holding. Kept in `kb/glossary.yaml`; `kbt lint` checks that every page named "
            "exists and carries both terms.\n\n"
            "| 中文 | English | also | pages | error strings and APIs |\n|---|---|---|---|---|\n" + rows + "\n")
