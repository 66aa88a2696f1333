"""Parsed, validated pages kept between runs, so that loading an unchanged KB neither parses
YAML nor imports jsonschema.

One entry per state of the page files: its key covers every page file's path and bytes and
the parsing code (kbcache.content_key). Only pages that loaded cleanly are stored; a page
that failed is parsed again on every run, so its diagnostics are always reported afresh.
A record that does not rebuild into a Page, or whose hash differs from the file's, is
ignored and the page is parsed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from kb_tools import kbcache
from kb_tools.pages import Invariant, Page, Routing
from kb_tools.textfile import MAX_TEXT_BYTES

KIND = "pages"
FORMAT = 1
_CODE = ("pagecache.py", "pages.py", "vocabulary.py", "yamlio.py", "schema_check.py", "textfile.py")


def _record(page: Page) -> dict:
    r = page.routing
    return {
        "id": page.id, "title": page.title, "kind": page.kind, "area": page.area,
        "routing": {"topologies": r.topologies if r.topologies == "all" else list(r.topologies),
                    "properties": list(r.properties), "mandatory_for": list(r.mandatory_for), "target_gate": r.target_gate},
        "trigger": page.trigger,
        "invariants": [[i.id, i.text, i.check, i.rule, i.evidence, i.line] for i in page.invariants],
        "demonstrated_by": list(page.demonstrated_by), "sources": [dict(s) for s in page.sources],
        "related": list(page.related), "rel_path": page.rel_path, "sha256": page.sha256,
        "body": page.body, "body_line": page.body_line, "lines": dict(page.lines),
    }


def _page(rec: dict, path: Path) -> Page:
    r = rec["routing"]
    topologies = r["topologies"]
    return Page(
        id=rec["id"], title=rec["title"], kind=rec["kind"], area=rec["area"],
        routing=Routing(topologies if topologies == "all" else tuple(topologies), tuple(r["properties"]),
                        tuple(r["mandatory_for"]), r["target_gate"]),
        trigger=rec["trigger"],
        invariants=tuple(Invariant(*fields) for fields in rec["invariants"]),
        demonstrated_by=tuple(rec["demonstrated_by"]), sources=tuple(dict(s) for s in rec["sources"]),
        related=tuple(rec["related"]), path=path, rel_path=rec["rel_path"], sha256=rec["sha256"],
        body=rec["body"], body_line=rec["body_line"], lines=dict(rec["lines"]),
    )


class PageCache:
    """The cached pages of one set of page files; ``get`` before parsing, ``put`` after,
    ``save`` once at the end."""

    def __init__(self, kb_dir: Path, files: list[Path]):
        self.kb_dir = kb_dir
        named = [(p.relative_to(kb_dir).as_posix(), kbcache.file_bytes(p, MAX_TEXT_BYTES)) for p in files]
        self.hashes = {name: "sha256:" + hashlib.sha256(data).hexdigest() for name, data in named if data is not None}
        self.key = kbcache.content_key(named, kbcache.code_digest(*_CODE))
        self.records = self._load()
        self.served: set[str] = set()  # pages get() answered from the entry
        self.added = False

    def _load(self) -> dict:
        raw = kbcache.read_entry(KIND, self.key)
        try:
            doc = json.loads(raw) if raw else None
        except ValueError:  # half-written by another tool, or not ours: rebuilt
            return {}
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("pages"), dict):
            return {}
        return doc["pages"]

    def get(self, path: Path) -> Page | None:
        rel = path.relative_to(self.kb_dir).as_posix()
        rec = self.records.get(rel)
        if not isinstance(rec, dict) or rec.get("sha256") != self.hashes.get(rel) or rec.get("rel_path") != rel:
            return None
        try:
            page = _page(rec, path)
        except (KeyError, TypeError, ValueError):
            return None
        text_fields = (page.id, page.title, page.kind, page.area, page.trigger, page.body)
        if not all(isinstance(v, str) for v in text_fields) or _record(page) != rec:
            return None  # well-formed JSON that is not what we wrote
        self.served.add(rel)
        return page

    def put(self, page: Page) -> None:
        if page.rel_path in self.served:
            return
        record = _record(page)
        try:
            rebuilt = _page(record, page.path)
        except TypeError:  # Page gained a required field the record does not carry
            return
        # unchanged since we hashed it, and carried whole (a field added to Page but not to
        # _record would come back as its default: such a page is never cached)
        if self.hashes.get(page.rel_path) == page.sha256 and rebuilt == page and rebuilt.lines == page.lines:
            self.records[page.rel_path] = record
            self.added = True

    def save(self) -> None:
        if self.added:
            kbcache.write_entry(KIND, self.key, json.dumps({"format": FORMAT, "pages": self.records}, ensure_ascii=False).encode())
