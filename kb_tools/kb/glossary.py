"""The bilingual glossary: the Chinese and English names of a term, and the pages that treat it.

Developers search the KB by the words of the seeds (非连续, 余弦相似度, 累加 ...) or by the
error string they are looking at; ``kb/glossary.yaml`` maps both to page ids, so that lint,
the site and free-text routing read one list instead of each keeping its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from kb_tools.files.yamlio import LineDict
from kb_tools.kb.registry_file import load_entries

GLOSSARY_FILE = "glossary.yaml"
_REQUIRED = ("zh", "en", "pages")
_OPTIONAL_LISTS = ("aliases", "errors")
_KEYS = set(_REQUIRED) | set(_OPTIONAL_LISTS) | {"source"}

# A gloss's source: a seed section ("001 §3.2.3", "003 boundary-rule": the seed file's number and
# a section key of kb/sources.yaml) or a public file ("owner/repo@commit path"); several are
# separated by "; ".
_SEED_CITE = re.compile(r"^(\d{3}) (\S+)$")
_FILE_CITE = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{7,40} \S+$")


@dataclass(frozen=True)
class GlossaryTerm:
    zh: str
    en: str
    aliases: tuple[str, ...]
    pages: tuple[str, ...]
    errors: tuple[str, ...]
    line: int  # line of the entry in glossary.yaml
    source: str = ""  # where the gloss comes from; lint requires one (source_problems)


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
    for key in ("zh", "en") + (("source",) if "source" in entry else ()):
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
        source=entry.get("source", "").strip(),
    ), []


def source_problems(term: GlossaryTerm, seed_sections: dict[str, set[str]]) -> list[str]:
    """Why ``term``'s source does not hold up, or ``[]``. A gloss nobody can trace to a seed or a
    public file is the KB's own invention (review 4, T1-T3). ``seed_sections`` maps a seed file
    name to its section keys (kb/sources.yaml)."""
    if not term.source:
        return [f"term {term.zh!r} has no source: cite the seed section (\"001 §3.2.3\") or public file (\"owner/repo@commit path\") its gloss rests on"]
    problems = []
    for cite in (c.strip() for c in term.source.split(";")):
        seed = _SEED_CITE.match(cite)
        if seed:
            files = [f for f in seed_sections if f.startswith(seed.group(1) + "_")]
            if not files:
                problems.append(f"term {term.zh!r} cites seed {seed.group(1)}, which kb/sources.yaml does not list")
            elif seed.group(2) not in seed_sections[files[0]]:
                problems.append(f"term {term.zh!r} cites {cite!r}: seed {seed.group(1)} has no section {seed.group(2)!r} in kb/sources.yaml")
        elif not _FILE_CITE.match(cite):
            problems.append(f"term {term.zh!r} cites {cite!r}: neither a seed section (\"001 §3.2.3\") nor a public file (\"owner/repo@commit path\")")
    return problems


def glossary_markdown(terms: list[GlossaryTerm], rel_of: dict[str, str]) -> str:
    """The glossary as one Markdown page of the site; ``rel_of`` maps page id to its KB path."""
    def cell(text: str) -> str:
        return text.replace("|", "/")

    def page_links(term: GlossaryTerm) -> str:
        return ", ".join(f"[{pid}](kb/{rel_of[pid]})" if pid in rel_of else pid for pid in term.pages)

    rows = "\n".join(
        f"| {cell(t.zh)} | {cell(t.en)} | {cell(', '.join(t.aliases)) or '—'} | {page_links(t)} | "
        f"{cell(', '.join(f'`{e}`' for e in t.errors)) or '—'} | {cell(t.source) or '—'} |"
        for t in sorted(terms, key=lambda t: t.en.lower()))
    return ("# Glossary — 术语表\n\n"
            "The words of the seeds beside the words of the pages: search by either, or by the error string "
            "or API name you are holding. Kept in `kb/glossary.yaml`; `kbt lint` checks that every page named "
            "exists and carries both terms, and that each gloss cites its source: a seed section (seed number "
            "and section) or a public file.\n\n"
            "| 中文 | English | also | pages | error strings and APIs | source |\n|---|---|---|---|---|---|\n" + rows + "\n")
