"""The rule pages: Markdown files with YAML front matter, loaded and validated.

Each page carries its own routing metadata (unlike the public KB, where a separate
topology-map.json drifts from the pages); ``load_kb`` is the only way tools read pages.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from kb_tools.diagnostics import Diagnostic, KbError, KbErrors
from kb_tools.files import warm
from kb_tools.files.text import read_text_and_bytes
from kb_tools.kb import vocabulary as V
from kb_tools.kb.page_cache import PageCache
from kb_tools.kb.page_files import page_files, shown_path  # shown_path: re-exported, how every tool names a page file

KEBAB = r"^[a-z0-9]+(-[a-z0-9]+)*$"
BODY_SECTIONS = ("Rule", "Trigger", "Why", "Do / Don't", "How it is checked", "Pitfalls")

PAGE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "title", "kind", "area", "routing", "trigger", "invariants", "sources"],
    "properties": {
        "id": {"type": "string", "pattern": KEBAB},
        "title": {"type": "string", "minLength": 3},
        "kind": {"enum": list(V.PAGE_KINDS)},
        "area": {"enum": list(V.AREAS)},
        "routing": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "topologies": {"oneOf": [
                    {"const": "all"},
                    {"type": "array", "uniqueItems": True, "items": {"enum": list(V.TOPOLOGIES)}},
                ]},
                "properties": {"type": "array", "uniqueItems": True, "items": {"enum": list(V.ROUTING_FACTS)}},
                "mandatory_for": {"type": "array", "uniqueItems": True, "items": {"enum": list(V.ROLES)}},
                "target_gate": {"enum": list(V.TARGETS)},
            },
        },
        "trigger": {"type": "string", "minLength": 10},
        "invariants": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "text", "check"],
                "properties": {
                    "id": {"type": "string", "pattern": KEBAB},
                    "text": {"type": "string", "minLength": 10},
                    "check": {"enum": list(V.CHECK_KINDS)},
                    "rule": {"type": "string", "pattern": r"^[A-Z]{2,4}[0-9]{3}$"},
                    "evidence": {"type": "string"},
                },
                "if": {"properties": {"check": {"const": "static"}}},
                "then": {"required": ["rule"]},
            },
        },
        "demonstrated_by": {"type": "array", "uniqueItems": True, "items": {"type": "string", "pattern": r"^notebooks/[a-z0-9_]+\.py$"}},
        # why no notebook demonstrates the page (nothing of it runs: a procedure, platform facts)
        "undemonstrated": {"type": "string", "minLength": 20},
        "sources": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["seed", "section"],
                "properties": {"seed": {"type": "string"}, "section": {"type": "string"}},
            },
        },
        "related": {"type": "array", "uniqueItems": True, "items": {"type": "string", "pattern": KEBAB}},
    },
}


@dataclass(frozen=True)
class Invariant:
    id: str
    text: str
    check: str
    rule: str | None = None
    evidence: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class Routing:
    topologies: tuple[str, ...] | str = "all"
    properties: tuple[str, ...] = ()
    mandatory_for: tuple[str, ...] = ()
    target_gate: str | None = None


@dataclass(frozen=True)
class Page:
    id: str
    title: str
    kind: str
    area: str
    routing: Routing
    trigger: str
    invariants: tuple[Invariant, ...]
    demonstrated_by: tuple[str, ...]
    sources: tuple[dict, ...]
    related: tuple[str, ...]
    path: Path  # on disk
    rel_path: str  # KB-relative, e.g. "constraints/wrapper-boundary.md"
    sha256: str  # "sha256:" + hex digest of the file's bytes
    body: str
    body_line: int  # file line where the body starts
    undemonstrated: str = ""  # the reason no notebook demonstrates it, when none does
    lines: dict = field(default_factory=dict, compare=False, repr=False)  # key -> line

    @property
    def is_pattern(self) -> bool:
        return self.kind == "pattern"


def split_front_matter(text: str, path) -> tuple[str, str, int]:
    """Return (front matter YAML, body, line where the body starts)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise KbError(Diagnostic(str(path), 1, "PG001", "no YAML front matter: the file must start with a '---' line"))
    for i in range(1, len(lines)):
        if lines[i].strip() == "---":
            return "".join(lines[1:i]), "".join(lines[i + 1:]), i + 2
    raise KbError(Diagnostic(str(path), 1, "PG002", "front matter is not closed by a second '---' line"))


def parse_page(path: Path, kb_dir: Path) -> Page:
    """Load one page; every problem found is raised together as KbErrors."""
    from kb_tools.files.schema_check import schema_diagnostics  # on use: an unchanged KB comes from the page cache
    from kb_tools.files.yamlio import load_yaml

    path = Path(path)
    text, raw = read_text_and_bytes(path, code_prefix="PG")
    front, body, body_line = split_front_matter(text, path)
    data = load_yaml(front, path, line_offset=1, code="PG003")
    if not isinstance(data, dict):
        raise KbErrors([Diagnostic(str(path), 2, "PG004", "front matter must be a mapping of keys to values")])
    diags = schema_diagnostics(data, PAGE_SCHEMA, path, "PG010")
    stem = path.stem
    if isinstance(data.get("id"), str) and data["id"] != stem:
        diags.append(Diagnostic(str(path), data.line_of("id"), "PG011", f"id {data['id']!r} must equal the file stem {stem!r}"))
    kind = data.get("kind")
    expected_dir = V.PAGE_KINDS.get(kind) if isinstance(kind, str) else None
    if expected_dir and path.parent.name != expected_dir:
        diags.append(Diagnostic(str(path), data.line_of("kind"), "PG012", f"a {data['kind']} page belongs in kb/{expected_dir}/"))
    invariants = data.get("invariants") if isinstance(data.get("invariants"), list) else []
    seen = {}
    for i, inv in enumerate(invariants):
        if isinstance(inv, dict) and isinstance(inv.get("id"), str):
            if inv["id"] in seen:
                diags.append(Diagnostic(str(path), invariants.line_of(i), "PG013", f"invariant id {inv['id']!r} repeats (first at line {seen[inv['id']]})"))
            seen.setdefault(inv["id"], invariants.line_of(i))
    if diags:
        raise KbErrors(diags)
    routing = data.get("routing") or {}
    topologies = routing.get("topologies", "all")
    return Page(
        id=data["id"],
        title=data["title"],
        kind=data["kind"],
        area=data["area"],
        routing=Routing(
            topologies=topologies if topologies == "all" else tuple(topologies),
            properties=tuple(routing.get("properties", ())),
            mandatory_for=tuple(routing.get("mandatory_for", ())),
            target_gate=routing.get("target_gate"),
        ),
        trigger=" ".join(data["trigger"].split()),
        invariants=tuple(
            Invariant(inv["id"], " ".join(inv["text"].split()), inv["check"], inv.get("rule"), inv.get("evidence"), invariants.line_of(i))
            for i, inv in enumerate(invariants)
        ),
        demonstrated_by=tuple(data.get("demonstrated_by", ())),
        sources=tuple(dict(s) for s in data["sources"]),
        related=tuple(data.get("related", ())),
        path=path,
        rel_path=path.relative_to(kb_dir).as_posix(),
        sha256="sha256:" + hashlib.sha256(raw).hexdigest(),
        body=body,
        body_line=body_line,
        undemonstrated=" ".join(data.get("undemonstrated", "").split()),
        lines=dict(data.lines),
    )


@dataclass
class KnowledgeBase:
    root: Path  # the repository root holding ROUTER.md and kb/
    pages: dict[str, Page]  # by id, sorted
    diagnostics: list[Diagnostic]  # pages that failed to load
    unloadable: tuple[str, ...] = ()  # KB-relative paths of the page files that failed

    def exists(self, rel_path: str) -> bool:
        """A page file is there, loaded or not (lint reports a broken page once, not again
        at every router row and link that names it)."""
        return self.by_path(rel_path) is not None or rel_path in self.unloadable

    @property
    def kb_dir(self) -> Path:
        return self.root / "kb"

    def by_path(self, rel_path: str) -> Page | None:
        for page in self.pages.values():
            if page.rel_path == rel_path:
                return page
        return None


def _looping_folders(kb_dir: Path) -> list[Diagnostic]:
    """Page folders that are symbolic link loops: glob finds nothing in them, silently."""
    looping = []
    for sub in V.PAGE_KINDS.values():
        folder = kb_dir / sub
        try:
            folder.stat()
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                looping.append(Diagnostic(shown_path(folder), None, "PG007", "symbolic link loop: no page in it can be read"))
    return looping


def page_record(page: Page) -> dict:
    """A page as the JSON the page cache keeps (page_from_record rebuilds it)."""
    r = page.routing
    return {
        "id": page.id, "title": page.title, "kind": page.kind, "area": page.area,
        "routing": {"topologies": r.topologies if r.topologies == "all" else list(r.topologies),
                    "properties": list(r.properties), "mandatory_for": list(r.mandatory_for), "target_gate": r.target_gate},
        "trigger": page.trigger,
        "invariants": [[i.id, i.text, i.check, i.rule, i.evidence, i.line] for i in page.invariants],
        "demonstrated_by": list(page.demonstrated_by), "sources": [dict(s) for s in page.sources],
        "related": list(page.related), "rel_path": page.rel_path, "sha256": page.sha256,
        "body": page.body, "body_line": page.body_line, "undemonstrated": page.undemonstrated, "lines": dict(page.lines),
    }


def page_from_record(rec: dict, path: Path) -> Page:
    """The page a page_record holds; ValueError when its text fields are not text."""
    r = rec["routing"]
    topologies = r["topologies"]
    page = Page(
        id=rec["id"], title=rec["title"], kind=rec["kind"], area=rec["area"],
        routing=Routing(topologies if topologies == "all" else tuple(topologies), tuple(r["properties"]),
                        tuple(r["mandatory_for"]), r["target_gate"]),
        trigger=rec["trigger"],
        invariants=tuple(Invariant(*fields) for fields in rec["invariants"]),
        demonstrated_by=tuple(rec["demonstrated_by"]), sources=tuple(dict(s) for s in rec["sources"]),
        related=tuple(rec["related"]), path=path, rel_path=rec["rel_path"], sha256=rec["sha256"],
        body=rec["body"], body_line=rec["body_line"], undemonstrated=rec["undemonstrated"], lines=dict(rec["lines"]),
    )
    if not all(isinstance(v, str) for v in (page.id, page.title, page.kind, page.area, page.trigger, page.body)):
        raise ValueError("a cached page's text field is not text")
    return page


def load_kb(root: Path) -> KnowledgeBase:
    """Load every page under ``root/kb``; a page that fails is reported, not fatal. A
    long-lived process (files.warm) gets the same KB back while no page file changed."""
    root = Path(root)
    return warm.remembered("kb", os.path.abspath(root), lambda: page_files(root / "kb"), lambda: _load_kb(root))


def _load_kb(root: Path) -> KnowledgeBase:
    kb_dir = root / "kb"
    pages, diags, unloadable = {}, _looping_folders(kb_dir), []
    files = page_files(kb_dir)
    cache = PageCache(kb_dir, files, page_record, page_from_record)  # pages whose bytes are unchanged since they last loaded
    for path in files:
        if not _utf8_name(path.name):
            diags.append(Diagnostic(_escaped(shown_path(path)), None, "PG015", "file name is not UTF-8 (its odd bytes shown as \\xNN); "
                                    "rename the page to its id"))
            unloadable.append(path.relative_to(kb_dir).as_posix())
            continue
        page = cache.get(path)
        try:
            page = page or parse_page(path, kb_dir)
        except (KbErrors, KbError) as exc:
            found = exc.diagnostics if isinstance(exc, KbErrors) else [exc.diagnostic]
            diags.extend(_reshown(d, shown_path(path)) for d in found)
            unloadable.append(path.relative_to(kb_dir).as_posix())
            continue
        cache.put(page)
        if page.id in pages:
            diags.append(Diagnostic(shown_path(path), page.lines.get("id"), "PG014", f"duplicate page id {page.id!r} (also {pages[page.id].rel_path})"))
            continue
        pages[page.id] = page
    cache.save()
    return KnowledgeBase(root, dict(sorted(pages.items())), diags, tuple(unloadable))


def _utf8_name(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # bytes the file system gave that are not UTF-8 (surrogate escapes)
        return False
    return True


def _escaped(name: str) -> str:
    """A file name as text, its bytes that are not UTF-8 written as \\xNN."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def _reshown(d: Diagnostic, shown: str) -> Diagnostic:
    return Diagnostic(shown, d.line, d.code, d.message, d.severity)


def body_sections(body: str) -> list[str]:
    """The level-2 headings of a page body, in order."""
    return [m.group(1).strip() for m in re.finditer(r"^##\s+(.+?)\s*$", body, flags=re.M)]
