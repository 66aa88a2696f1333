"""Strict JSON in (duplicate keys refused, every object and array knows its line) and
atomic JSON out (a temporary file renamed into place, so a crash never leaves half a file)."""

from __future__ import annotations

import errno
import json
import os
from itertools import accumulate
from json.decoder import JSONArray, JSONObject
from json.scanner import py_make_scanner
from pathlib import Path

import orjson

from kb_tools.diagnostics import EXIT_USAGE, Diagnostic, KbError, fail
from kb_tools.files.text import read_text

# A filled KB_USAGE.json of 69 records is 30 KB. The pure-Python scanner that keeps lines
# reads a megabyte of tiny values in under a second and 70 MB, so 1 MiB (thirty times the
# largest real file) bounds what a runaway file can cost.
MAX_JSON_BYTES = 1024 * 1024


class _DuplicateKey(Exception):
    def __init__(self, key, pos):
        super().__init__(key)
        self.key, self.pos = key, pos


class _TooDeep(Exception):
    def __init__(self, pos):
        super().__init__(pos)
        self.pos = pos


class _Constant(Exception):
    """NaN or Infinity: Python's JSON reader takes them, JSON (and every other reader) does not."""


def _refuse_constant(name: str):
    raise _Constant(name)


class _Lines:
    """Line numbers of offsets in one text, each in time bounded by a block, not the text:
    counting from the start for every key made a megabyte of keys take half a minute."""

    BLOCK = 4096

    def __init__(self, text: str):
        self.text = text
        counts = [text.count("\n", i, i + self.BLOCK) for i in range(0, len(text), self.BLOCK)]
        self.before = [0, *accumulate(counts)]  # newlines before each block

    def __call__(self, pos: int) -> int:
        block = pos // self.BLOCK
        return self.before[block] + self.text.count("\n", block * self.BLOCK, pos) + 1


class _LineDecoder(json.JSONDecoder):
    """The pure-Python scanner with object/array hooks that record where each one starts."""

    def __init__(self, text: str, line_of: _Lines):
        from kb_tools.files.yamlio import MAX_NESTING, LineDict, LineList  # on use: writing JSON needs no YAML

        super().__init__(parse_constant=_refuse_constant)
        depth = 0

        def nested(parse, s_and_end, *args):
            nonlocal depth
            if depth >= MAX_NESTING:
                raise _TooDeep(s_and_end[1] - 1)
            depth += 1
            try:
                return parse(s_and_end, *args)
            finally:
                depth -= 1

        def object_with_lines(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):
            start = s_and_end[1] - 1
            pairs, end = JSONObject(s_and_end, strict, scan_once, None, lambda p: p, memo)
            result = LineDict()
            result.line = line_of(start)
            cursor, searching = start, True
            for key, value in pairs:
                # the key as written, searched only inside this object; after one miss (a key
                # spelled with escapes) the rest take the object's line, so a hostile file of
                # escaped keys cannot make every search run to the end
                key_pos = text.find(json.dumps(key, ensure_ascii=False), cursor, end) if searching else -1
                if key_pos < 0:
                    key_pos, searching = start, False
                cursor = max(cursor, key_pos + 1)
                if key in result:
                    raise _DuplicateKey(key, key_pos)
                result[key] = value
                result.lines[key] = line_of(key_pos)
            return result, end

        def array_with_lines(s_and_end, scan_once):
            start = s_and_end[1] - 1
            values, end = JSONArray(s_and_end, scan_once)
            result = LineList(values)
            result.line = line_of(start)
            result.lines = [getattr(v, "line", result.line) for v in values]
            return result, end

        self.parse_object = lambda *args: nested(object_with_lines, *args)
        self.parse_array = lambda *args: nested(array_with_lines, *args)
        self.scan_once = py_make_scanner(self)


def load_json(path: Path, *, code_prefix: str = "JS"):
    """Load a JSON file strictly. Unreadable or malformed input raises KbError (exit 2)."""
    from kb_tools.files.yamlio import MAX_NESTING

    text = read_text(path, code_prefix=code_prefix, limit=MAX_JSON_BYTES)
    if not text.strip():
        raise KbError(Diagnostic(str(path), None, f"{code_prefix}010", "empty file, expected a JSON object"), EXIT_USAGE)
    line_of = _Lines(text)
    try:
        return _LineDecoder(text, line_of).decode(text)
    except _DuplicateKey as dup:
        raise KbError(Diagnostic(str(path), line_of(dup.pos), f"{code_prefix}011", f"duplicate JSON key {dup.key!r}"), EXIT_USAGE) from None
    except _TooDeep as deep:
        raise KbError(Diagnostic(str(path), line_of(deep.pos), f"{code_prefix}013", f"JSON nested more than {MAX_NESTING} levels deep"), EXIT_USAGE) from None
    except _Constant as const:
        name = str(const)
        raise KbError(Diagnostic(str(path), line_of(max(text.find(name), 0)), f"{code_prefix}014",
                                 f"{name} is not JSON; write a number or null"), EXIT_USAGE) from None
    except json.JSONDecodeError as exc:
        raise KbError(Diagnostic(str(path), exc.lineno, f"{code_prefix}012", f"invalid JSON: {exc.msg} (column {exc.colno})"), EXIT_USAGE) from None


def dump_bytes(data) -> bytes:
    """The one JSON spelling every generated file uses, so equal data gives equal bytes.

    orjson's two-space indent is byte-for-byte ``json.dumps(indent=2, ensure_ascii=False)``
    at C speed; the standard encoder drops to pure Python as soon as it indents, which made
    writing selections dominate ``kbt build`` on large catalogs.
    """
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    except orjson.JSONEncodeError:  # an integer past 64 bits that a person kept in their file
        return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def dumps(data) -> str:
    """``dump_bytes`` as text."""
    return dump_bytes(data).decode("utf-8")


def write_atomic(path: Path, text: str | bytes, *, keep_equal: bool = False) -> bool:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename,
    so a reader (or a crash) never sees half a file. No fsync: the guarantee wanted is
    atomic replacement, not durability across power loss, and fsync per file cost more than
    the selection itself on a large catalog. With ``keep_equal``, a file that already holds
    exactly these bytes is left as it is (a rebuild that changes nothing rewrites nothing).
    Returns whether the file was written.

    The temporary file is created with mode 0666 and the umask applied by the kernel, as a
    plain ``open`` would (``mkstemp``'s 0600 survived the rename: nobody else could read the
    file). A path that cannot be written (a file where a folder is needed, a folder where the
    file goes, no permission) is one line, exit 2, and nothing there is touched. The folder
    is created only when the first attempt finds it missing: a build writes thousands of
    files into folders that already exist."""
    path = Path(path)
    data = text.encode("utf-8") if isinstance(text, str) else text
    if keep_equal and written_already(path, data):
        return False
    try:
        fd, tmp = _create_temporary(path)
    except FileNotFoundError:
        make_folder(path.parent)
        fd, tmp = _create_or_fail(path)
    except NotADirectoryError:
        fail(_first_non_folder(path.parent), None, "IO010", "exists and is not a directory; a folder is needed here", EXIT_USAGE)
    except OSError as exc:
        fail(path, None, "IO012", f"cannot write: {exc.strerror or exc}", EXIT_USAGE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, IsADirectoryError) or (isinstance(exc, OSError) and path.is_dir()):
            fail(path, None, "IO011", "is a directory; a file is written here", EXIT_USAGE)
        if isinstance(exc, OSError):
            fail(path, None, "IO012", f"cannot write: {exc.strerror or exc}", EXIT_USAGE)
        raise
    return True


def written_already(path: Path, data: bytes) -> bool:
    """Whether ``path`` is a plain file whose bytes are ``data`` (read no further than needed)."""
    try:
        with open(path, "rb") as handle:
            return os.fstat(handle.fileno()).st_size == len(data) and handle.read(len(data) + 1) == data
    except OSError:
        return False


def make_folder(folder: Path) -> None:
    """``folder`` and its parents made if missing; a file in the way is one line, exit 2."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        fail(_first_non_folder(folder), None, "IO010", "exists and is not a directory; a folder is needed here", EXIT_USAGE)
    except OSError as exc:
        fail(folder, None, "IO010", f"cannot create the folder: {exc.strerror or exc}", EXIT_USAGE)


def _create_or_fail(path: Path) -> tuple[int, str]:
    try:
        return _create_temporary(path)
    except OSError as exc:
        fail(path, None, "IO012", f"cannot write: {exc.strerror or exc}", EXIT_USAGE)


def _create_temporary(path: Path) -> tuple[int, str]:
    """A new file beside ``path`` opened for writing, mode 0666 less the umask."""
    folder, name = os.path.split(os.fspath(path))
    for _ in range(100):
        tmp = os.path.join(folder, f".{name}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path.parent))


def _first_non_folder(folder: Path) -> Path:
    """The component of ``folder`` that exists but is not a directory (what the user must move)."""
    for candidate in (*reversed(folder.parents), folder):
        if candidate.exists() and not candidate.is_dir():
            return candidate
    return folder
