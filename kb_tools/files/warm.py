"""What a long-lived process (``kbt mcp``) keeps in memory between requests, keyed by the
identity of the files it came from.

A one-shot ``kbt`` command never turns this on: each run reads the KB (through the content
cache) once anyway. A server that answers many questions would otherwise re-read and re-hash
every page per question. An entry is served only while every file it was built from keeps its
device, inode, size and modification time, so an edited, replaced or deleted page is seen on
the next request.
"""

from __future__ import annotations

import os

_STORE: dict | None = None  # None: this process keeps nothing


def enable() -> None:
    """From now on, this process keeps what ``remembered`` builds."""
    global _STORE
    if _STORE is None:
        _STORE = {}


def _identity(paths) -> tuple:
    marks = []
    for path in paths:
        try:
            s = os.stat(path)
            marks.append((str(path), s.st_dev, s.st_ino, s.st_size, s.st_mtime_ns))
        except OSError:
            marks.append((str(path), None))
    return tuple(marks)


def remembered(kind: str, key, paths, build):
    """``build()``, or what it returned last time for the same ``kind`` and ``key`` while the
    files ``paths`` (a callable listing them, or a list) are unchanged."""
    if _STORE is None:
        return build()
    listed = paths() if callable(paths) else paths
    identity = _identity(listed)
    held = _STORE.get((kind, key))
    if held is not None and held[0] == identity:
        return held[1]
    value = build()
    _STORE[(kind, key)] = (identity, value)
    return value
