"""Strict JSON in (duplicate keys refused, every object and array knows its line) and
atomic JSON out (a temporary file renamed into place, so a crash never leaves half a file)."""

from __future__ import annotations

import json
import os
import tempfile
from json.decoder import JSONArray, JSONObject
from json.scanner import py_make_scanner
from pathlib import Path

import orjson

from kb_tools.diagnostics import EXIT_USAGE, Diagnostic, KbError
from kb_tools.textfile import read_text
from kb_tools.yamlio import LineDict, LineList


class _DuplicateKey(Exception):
    def __init__(self, key, pos):
        super().__init__(key)
        self.key, self.pos = key, pos


def _line(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


class _LineDecoder(json.JSONDecoder):
    """The pure-Python scanner with object/array hooks that record where each one starts."""

    def __init__(self, text: str):
        super().__init__()
        self._text = text

        def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):
            start = s_and_end[1] - 1
            pairs, end = JSONObject(s_and_end, strict, scan_once, None, lambda p: p, memo)
            result = LineDict()
            result.line = _line(text, start)
            cursor = start
            for key, value in pairs:
                key_pos = text.find(json.dumps(key), cursor)
                if key_pos < 0:  # key spelled with escapes; fall back to the object's line
                    key_pos = cursor
                cursor = max(cursor, key_pos + 1)
                if key in result:
                    raise _DuplicateKey(key, key_pos)
                result[key] = value
                result.lines[key] = _line(text, key_pos)
            return result, end

        def parse_array(s_and_end, scan_once):
            start = s_and_end[1] - 1
            values, end = JSONArray(s_and_end, scan_once)
            result = LineList(values)
            result.line = _line(text, start)
            result.lines = [getattr(v, "line", result.line) for v in values]
            return result, end

        self.parse_object = parse_object
        self.parse_array = parse_array
        self.scan_once = py_make_scanner(self)


def load_json(path: Path, *, code_prefix: str = "JS"):
    """Load a JSON file strictly. Unreadable or malformed input raises KbError (exit 2)."""
    text = read_text(path, code_prefix=code_prefix)
    if not text.strip():
        raise KbError(Diagnostic(str(path), None, f"{code_prefix}010", "empty file, expected a JSON object"), EXIT_USAGE)
    try:
        return _LineDecoder(text).decode(text)
    except _DuplicateKey as dup:
        raise KbError(Diagnostic(str(path), _line(text, dup.pos), f"{code_prefix}011", f"duplicate JSON key {dup.key!r}"), EXIT_USAGE) from None
    except json.JSONDecodeError as exc:
        raise KbError(Diagnostic(str(path), exc.lineno, f"{code_prefix}012", f"invalid JSON: {exc.msg} (column {exc.colno})"), EXIT_USAGE) from None
    except RecursionError:
        raise KbError(Diagnostic(str(path), None, f"{code_prefix}013", "JSON nested too deeply"), EXIT_USAGE) from None


def dumps(data) -> str:
    """The one JSON spelling every generated file uses, so equal data gives equal bytes.

    orjson's two-space indent is byte-for-byte ``json.dumps(indent=2, ensure_ascii=False)``
    at C speed; the standard encoder drops to pure Python as soon as it indents, which made
    writing selections dominate ``kbt build`` on large catalogs.
    """
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode("utf-8") + "\n"


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename,
    so a reader (or a crash) never sees half a file. No fsync: the guarantee wanted is
    atomic replacement, not durability across power loss, and fsync per file cost more than
    the selection itself on a large catalog."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

