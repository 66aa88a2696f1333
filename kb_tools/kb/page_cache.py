"""Parsed, validated pages kept between runs, so that loading an unchanged KB neither parses
YAML nor imports jsonschema.

One entry per state of the page files: its key covers every page file's path and bytes and
the parsing code (cache.content_key). Only pages that loaded cleanly are stored; a page
that failed is parsed again on every run, so its diagnostics are always reported afresh.
A record that does not rebuild into a Page, or whose hash differs from the file's, is
ignored and the page is parsed.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from kb_tools.files import cache
from kb_tools.files.text import MAX_TEXT_BYTES

KIND = "pages"
FORMAT = 1
_CODE = ("kb/page_cache.py", "kb/pages.py", "kb/vocabulary.py", "files/yamlio.py", "files/schema_check.py", "files/text.py")


class PageCache:
    """The cached pages of one set of page files; ``get`` before parsing, ``put`` after,
    ``save`` once at the end. The owner of the pages hands it their codec: ``to_record``
    turns a page into JSON-able data, ``from_record(record, path)`` rebuilds it (or raises
    KeyError, TypeError or ValueError), so this store never imports what it stores."""

    def __init__(self, kb_dir: Path, files: list[Path], to_record, from_record):
        self.kb_dir = kb_dir
        self.to_record, self.from_record = to_record, from_record
        named = [(p.relative_to(kb_dir).as_posix(), cache.file_bytes(p, MAX_TEXT_BYTES)) for p in files]
        self.hashes = {name: "sha256:" + hashlib.sha256(data).hexdigest() for name, data in named if data is not None}
        self.key = cache.content_key(named, cache.code_digest(*_CODE))
        self.records = self._load()
        self.served: set[str] = set()  # pages get() answered from the entry
        self.added = False

    def _load(self) -> dict:
        raw = cache.read_entry(KIND, self.key)
        try:
            doc = json.loads(raw) if raw else None
        except ValueError:  # half-written by another tool, or not ours: rebuilt
            return {}
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("pages"), dict):
            return {}
        return doc["pages"]

    def get(self, path: Path):
        rel = path.relative_to(self.kb_dir).as_posix()
        rec = self.records.get(rel)
        if not isinstance(rec, dict) or rec.get("sha256") != self.hashes.get(rel) or rec.get("rel_path") != rel:
            return None
        try:
            page = self.from_record(rec, path)
        except (KeyError, TypeError, ValueError):
            return None
        if self.to_record(page) != rec:
            return None  # well-formed JSON that is not what we wrote
        self.served.add(rel)
        return page

    def put(self, page) -> None:
        if page.rel_path in self.served:
            return
        record = self.to_record(page)
        try:
            rebuilt = self.from_record(record, page.path)
        except TypeError:  # Page gained a required field the record does not carry
            return
        # unchanged since we hashed it, and carried whole (a field added to the page but not to
        # its record would come back as its default: such a page is never cached)
        if self.hashes.get(page.rel_path) == page.sha256 and rebuilt == page and rebuilt.lines == page.lines:
            self.records[page.rel_path] = record
            self.added = True

    def save(self) -> None:
        if self.added:
            cache.write_entry(KIND, self.key, json.dumps({"format": FORMAT, "pages": self.records}, ensure_ascii=False).encode())
