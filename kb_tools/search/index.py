"""The search index: the pages, the router's tasks and the glossary in one SQLite database
with an FTS5 table, cached as bytes under files.cache and keyed by the content of every file it
was built from.

Why FTS5: it is in Python's standard library (no dependency, nothing to download, no numpy
to import at start-up, which rank-bm25 and bm25s both need), it ranks by BM25 with a weight
per column, and a database serialises to one blob, so the cached index is read back with no
parsing at all. FTS5 only splits text on spaces here (``ascii`` with ``.`` and ``_`` as
word characters): the tokens are made by kb_tools.search.tokens, the same for page and query.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from kb_tools.diagnostics import EXIT_USAGE, fail
from kb_tools.files import cache, warm
from kb_tools.files.text import MAX_TEXT_BYTES
from kb_tools.kb.page_files import page_files
from kb_tools.search.tokens import key_tokens_of, tokens

KIND = "search"
FORMAT = 1
# Columns of the FTS table, each with its BM25 weight: a word in a title or in a glossary
# entry for the page says more about the page than the same word somewhere in its body.
COLUMNS = {"title": 4.0, "trigger": 2.0, "rules": 1.5, "body": 1.0, "terms": 3.0, "tasks": 2.5}
# the index's own code and all that decides which pages load and what they hold (the page cache's list)
_CODE = ("search/index.py", "search/tokens.py", "kb/pages.py", "kb/router.py", "kb/glossary.py", "kb/page_cache.py",
         "kb/vocabulary.py", "files/yamlio.py", "files/schema_check.py", "files/text.py")
_SCHEMA = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE pages(n INTEGER PRIMARY KEY, id TEXT UNIQUE, path TEXT, title TEXT, tasks TEXT);
CREATE TABLE vocab(n INTEGER, token TEXT, PRIMARY KEY(n, token)) WITHOUT ROWID;
CREATE INDEX vocab_token ON vocab(token);
CREATE TABLE tasks(ord INTEGER PRIMARY KEY, id TEXT, wording TEXT, skills TEXT, refs TEXT, line INTEGER, said TEXT);
CREATE TABLE glossary(ord INTEGER PRIMARY KEY, names TEXT);
CREATE VIRTUAL TABLE docs USING fts5({", ".join(COLUMNS)}, tokenize="ascii tokenchars '._'");
"""


def _inputs(root: Path) -> list[tuple[str, bytes | None]]:
    return [(p.relative_to(root).as_posix(), cache.file_bytes(p, MAX_TEXT_BYTES)) for p in _input_files(root)]


def open_index(root: Path, *, fresh: bool = False) -> sqlite3.Connection:
    """The index of the KB at ``root``: the cached one when its key matches and it reads
    back as a database, else one built now (and cached). ``fresh`` skips the cache read.
    A long-lived process (files.warm) keeps the open index while none of its files changed."""
    if fresh:
        return _open_index(root, fresh=True)
    return warm.remembered("search-index", os.path.abspath(root), lambda: _input_files(root), lambda: _open_index(root))


def _input_files(root: Path) -> list[Path]:
    return [root / "ROUTER.md", root / "kb" / "glossary.yaml", *page_files(root / "kb")]


def _open_index(root: Path, *, fresh: bool = False) -> sqlite3.Connection:
    key = cache.content_key(_inputs(root), cache.code_digest(*_CODE))
    raw = None if fresh else cache.read_entry(KIND, key, ".sqlite")
    if raw:
        conn = sqlite3.connect(":memory:")
        try:
            conn.deserialize(raw)
            if conn.execute("SELECT value FROM meta WHERE key = 'key'").fetchone() == (key,):
                return conn
        except sqlite3.DatabaseError:
            pass
        conn.close()
    conn = build_index(root, key)
    cache.write_entry(KIND, key, conn.serialize(), ".sqlite")
    return conn


def build_index(root: Path, key: str) -> sqlite3.Connection:
    from kb_tools.kb.glossary import load_glossary
    from kb_tools.kb.pages import load_kb
    from kb_tools.kb.router import parse_router

    kb = load_kb(root)
    tasks = parse_router(root / "ROUTER.md")
    glossary = load_glossary(root)
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(_SCHEMA)
    except sqlite3.OperationalError as exc:  # an SQLite built without FTS5
        fail("kbt route", None, "RQ010", f"this Python's SQLite {sqlite3.sqlite_version} cannot build the search index ({exc}): "
             "kbt route needs SQLite with FTS5", EXIT_USAGE)
    conn.executemany("INSERT INTO meta VALUES (?, ?)", [("key", key), ("format", str(FORMAT)),
                                                        ("unloadable", json.dumps([f"kb/{p}" for p in kb.unloadable]))])
    conn.executemany("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?)", [
        (i, t.id, t.wording, json.dumps(t.skills), json.dumps(t.references), t.line, json.dumps(sorted(set(tokens(t.wording)))))
        for i, t in enumerate(tasks)])
    conn.executemany("INSERT INTO glossary VALUES (?, ?)", [  # each name with its key tokens (rank.py)
        (i, json.dumps([(n, key_tokens_of(n)) for n in (g.zh, g.en, *g.aliases, *g.errors)], ensure_ascii=False))
        for i, g in enumerate(glossary)])
    for n, page in enumerate(kb.pages.values(), start=1):
        listing = [t for t in tasks if page.rel_path in t.references]
        terms = [g for g in glossary if page.id in g.pages]
        fields = {
            "title": f"{page.title} {page.id}",
            "trigger": page.trigger,
            "rules": " ".join(f"{i.id} {i.rule or ''} {i.text}" for i in page.invariants),
            "body": page.body,
            "terms": " ".join(" ".join((g.zh, g.en, *g.aliases, *g.errors)) for g in terms),
            "tasks": " ".join(f"{t.wording} {t.id}" for t in listing),
        }
        columns = {name: tokens(text) for name, text in fields.items()}
        conn.execute("INSERT INTO pages VALUES (?, ?, ?, ?, ?)",
                     (n, page.id, f"kb/{page.rel_path}", page.title, json.dumps([t.id for t in listing])))
        conn.execute(f"INSERT INTO docs(rowid, {', '.join(COLUMNS)}) VALUES (?, {', '.join('?' * len(COLUMNS))})",
                     (n, *(" ".join(columns[c]) for c in COLUMNS)))
        conn.executemany("INSERT INTO vocab VALUES (?, ?)", [(n, t) for t in sorted({t for ts in columns.values() for t in ts})])
    conn.commit()
    return conn
