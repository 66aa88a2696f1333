"""Strict JSON in (duplicate keys refused, every object and array knows its line) and
atomic JSON out (a temporary file renamed into place, so a crash never leaves half a file)."""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import time
from contextlib import contextmanager
from itertools import accumulate
from json.decoder import JSONArray, JSONObject
from json.scanner import py_make_scanner
from pathlib import Path

import orjson

from kb_tools.diagnostics import EXIT_USAGE, Diagnostic, KbError, fail, shortened
from kb_tools.limits import limit
from kb_tools.files.text import not_regular, read_text

try:  # POSIX; elsewhere writes into one folder are not serialised
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

# A filled KB_USAGE.json of 69 records is 30 KB. The pure-Python scanner that keeps lines
# reads a megabyte of tiny values in under a second and 70 MB, so 1 MiB (thirty times the
# largest real file) bounds what a runaway file can cost.
MAX_JSON_BYTES = limit("OPKB_MAX_JSON_BYTES")  # 1 MiB unless set


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


class _OutOfRange(Exception):
    """A number no reader can hold: an integer past Python's digit limit for text, or a
    float that overflows a double (``1e400`` reads as infinity and would be written back as null)."""

    def __init__(self, spelled: str, why: str):
        super().__init__(spelled)
        self.spelled, self.why = spelled, why


def _bounded_int(spelled: str) -> int:
    from kb_tools.files.yamlio import MAX_INT_DIGITS  # one bound for both readers

    digits = len(spelled.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _OutOfRange(spelled, f"an integer of {digits} digits; at most {MAX_INT_DIGITS} are read")
    return int(spelled)


def _finite_float(spelled: str) -> float:
    """The number, when a double holds it exactly as written: a merge writes back what it read,
    so 1e-400 (read as 0.0) or a 30-digit fraction would silently become another number."""
    from decimal import Decimal

    value = float(spelled)
    if value in (float("inf"), float("-inf")):
        raise _OutOfRange(spelled, "too large for a double (it reads as infinity); write it as text")
    if Decimal(spelled) != Decimal(repr(value)):
        raise _OutOfRange(spelled, f"not exactly a double (it reads as {value!r}); write it as text")
    return value


# A \uD800-\uDFFF escape not part of a pair: valid JSON, but no UTF-8 file can hold it.
_LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


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

        super().__init__(parse_constant=_refuse_constant, parse_int=_bounded_int, parse_float=_finite_float)
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
    return parse_json(read_text(path, code_prefix=code_prefix, limit=MAX_JSON_BYTES), path, code_prefix=code_prefix)


def parse_json(text: str, path, *, code_prefix: str = "JS"):
    """``load_json`` for text already read (a hook's standard input): the same nesting cap and
    strictness, each failure one KbError naming ``path`` and the line."""
    from kb_tools.files.yamlio import MAX_NESTING

    if not text.strip():
        raise KbError(Diagnostic(str(path), None, f"{code_prefix}010", "empty file, expected a JSON object"), EXIT_USAGE)
    line_of = _Lines(text)
    try:
        data = _LineDecoder(text, line_of).decode(text)
    except _DuplicateKey as dup:
        raise KbError(Diagnostic(str(path), line_of(dup.pos), f"{code_prefix}011", f"duplicate JSON key {dup.key!r}"), EXIT_USAGE) from None
    except _TooDeep as deep:
        raise KbError(Diagnostic(str(path), line_of(deep.pos), f"{code_prefix}013", f"JSON nested more than {MAX_NESTING} levels deep"), EXIT_USAGE) from None
    except _Constant as const:
        name = str(const)
        raise KbError(Diagnostic(str(path), line_of(max(text.find(name), 0)), f"{code_prefix}014",
                                 f"{name} is not JSON; write a number or null"), EXIT_USAGE) from None
    except _OutOfRange as big:
        raise KbError(Diagnostic(str(path), line_of(max(text.find(big.spelled), 0)), f"{code_prefix}016",
                                 f"number {shortened(big.spelled, 30)} is {big.why}"), EXIT_USAGE) from None
    except json.JSONDecodeError as exc:
        raise KbError(Diagnostic(str(path), exc.lineno, f"{code_prefix}012", f"invalid JSON: {exc.msg} (column {exc.colno})"), EXIT_USAGE) from None
    lone = _LONE_SURROGATE.search(text) if "\\u" in text else None
    if lone is not None and not _encodable(data):
        raise KbError(Diagnostic(str(path), line_of(lone.start()), f"{code_prefix}015",
                                 f"{lone.group()} is half of a UTF-16 pair, not a character; write the character itself or remove it"),
                      EXIT_USAGE)
    return data


def _encodable(data) -> bool:
    """Whether every string in ``data`` can be written as UTF-8 (a lone surrogate cannot)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
    Returns whether the file was written. ``write_together`` says the rest."""
    return bool(write_together([(path, text)], keep_equal=keep_equal))


def write_together(files, *, keep_equal: bool = False) -> list[Path]:
    """Write several ``(path, text)`` files: each is staged in full in a temporary file beside
    its target first, and only then are they all renamed into place, one right after the
    other, so a refusal or a failed write leaves every one of them as it was (an operator's
    selection and usage file change together). Returns the paths written.

    A symbolic link is written through: its target is replaced, the link stays. A FIFO,
    device or socket is never replaced (nor is a link to one): that is refused, exit 2.
    Temporary files are created with mode 0666 and the umask applied by the kernel, as a
    plain ``open`` would (``mkstemp``'s 0600 survived the rename: nobody else could read the
    file), and are named after the process that writes them, so that one left behind by a
    killed run is removed by the next write there. A path that cannot be written (a file
    where a folder is needed, a folder where the file goes, no permission) is one line,
    exit 2, and nothing there is touched. The folder is created only when the first
    attempt finds it missing: a build writes thousands of files into folders that already exist."""
    staged: list[tuple[Path, str, Path]] = []
    try:
        targets = [(Path(path), write_target(Path(path)), text) for path, text in files]
        _clear_leftovers([target for _, target, _ in targets])
        for path, target, text in targets:
            data = text.encode("utf-8") if isinstance(text, str) else text
            if keep_equal and written_already(target, data):
                continue
            staged.append((target, _stage(target, data, path), path))
        for target, tmp, shown in staged:
            try:
                os.replace(tmp, target)
            except OSError as exc:
                _refuse_write(shown, exc)
    finally:
        for _, tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)
    return [shown for _, _, shown in staged]


def write_target(path: Path) -> Path:
    """The file that writing ``path`` replaces: ``path``, or where its symbolic links end.
    Anything there but a regular file (or nothing) is refused before a byte is written."""
    try:
        status = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):  # a missing folder is made, a file in the way reported, by _stage
        return path
    except OSError as exc:
        fail(path, None, "IO012", f"cannot write: {exc.strerror or exc}", EXIT_USAGE)
    target = path
    if stat.S_ISLNK(status.st_mode):
        try:
            target = Path(os.path.realpath(path, strict=True))
        except FileNotFoundError:  # a dangling link: its target is created, in a folder that exists
            target = Path(os.path.realpath(path))
            if not target.parent.is_dir():
                fail(path, None, "IO013", f"is a symbolic link to {target}, whose folder does not exist; nothing was written", EXIT_USAGE)
            return target
        except OSError as exc:
            fail(path, None, "IO013", f"cannot be followed ({exc.strerror or exc}); nothing was written", EXIT_USAGE)
        status = os.stat(target)
    if not (stat.S_ISREG(status.st_mode) or stat.S_ISDIR(status.st_mode)):  # a folder is reported as IO011 on rename
        fail(path, None, "IO013", f"is {not_regular(status.st_mode)}{' (through a symbolic link)' if target != path else ''}, "
             "not a regular file: kbt will not replace it; leave out -o to write to standard output", EXIT_USAGE)
    return target


def _stage(target: Path, data: bytes, shown: Path) -> str:
    """A temporary file beside ``target`` holding ``data`` (its name, for the rename)."""
    try:
        fd, tmp = _create_temporary(target)
    except FileNotFoundError:
        make_folder(target.parent)
        fd, tmp = _create_or_fail(target)
    except NotADirectoryError:
        fail(_first_non_folder(target.parent), None, "IO010", "exists and is not a directory; a folder is needed here", EXIT_USAGE)
    except OSError as exc:
        fail(shown, None, "IO012", f"cannot write: {exc.strerror or exc}", EXIT_USAGE)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            _refuse_write(shown, exc)
        raise
    return tmp


def _refuse_write(path: Path, exc: OSError):
    if isinstance(exc, IsADirectoryError) or Path(path).is_dir():
        fail(path, None, "IO011", "is a directory; a file is written here", EXIT_USAGE)
    fail(path, None, "IO012", f"cannot write: {exc.strerror or exc}", EXIT_USAGE)


# Leftovers of a run killed between creating its temporary file and renaming it.
OLD_TEMPORARY_S = 3600  # a temporary named before names carried a pid is abandoned after this


def _clear_leftovers(targets: list[Path]) -> None:
    """Remove the temporaries of ``targets`` whose writer is gone: one listing per folder,
    which for kbt's outputs holds a handful of files."""
    by_folder: dict[str, set[str]] = {}
    for target in targets:
        folder, name = os.path.split(os.fspath(target))
        by_folder.setdefault(folder or ".", set()).add(name)
    for folder, names in by_folder.items():
        ours = re.compile(rf"\.({'|'.join(map(re.escape, sorted(names)))})\.(?:(\d+)\.)?[0-9a-f]{{8}}\.tmp")
        try:
            entries = os.scandir(folder)
        except OSError:
            continue
        with entries:
            for entry in entries:
                found = ours.fullmatch(entry.name)
                if found and _abandoned(found.group(2), entry):
                    try:
                        os.unlink(entry.path)
                    except OSError:
                        pass


def _abandoned(pid: str | None, entry: os.DirEntry) -> bool:
    if pid is None:
        try:
            return time.time() - entry.stat(follow_symlinks=False).st_mtime > OLD_TEMPORARY_S
        except OSError:
            return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):  # alive but not ours to signal, or no such number
        return False
    return False


@contextmanager
def folder_lock(folder: Path):
    """Hold an exclusive lock on ``folder`` for the block, made if missing: two kbt runs
    writing one folder take turns, so the second reads what the first wrote instead of
    both reading the old files. The lock is on the folder itself (flock), so no lock file is
    ever left behind; where the folder cannot be opened or locked the block runs unlocked
    and its writes report what is wrong."""
    fd = _open_folder(Path(folder))
    try:
        if fd is not None and fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError:
                pass
        yield
    finally:
        if fd is not None:
            os.close(fd)


def _open_folder(folder: Path) -> int | None:
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        return os.open(folder, flags)
    except FileNotFoundError:
        make_folder(folder)
    except NotADirectoryError:
        fail(_first_non_folder(folder), None, "IO010", "exists and is not a directory; a folder is needed here", EXIT_USAGE)
    except OSError:
        return None
    try:
        return os.open(folder, flags)
    except OSError:
        return None


def written_already(path: Path, data: bytes) -> bool:
    """Whether ``path`` is a plain file whose bytes are ``data`` (read no further than needed;
    opened without blocking, so a FIFO there is "no", not a hang)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size != len(data):  # a folder, a FIFO: not this file
            return False
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(len(data) + 1) == data
    except OSError:
        return False
    finally:
        os.close(fd)


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
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(path.parent))


def _first_non_folder(folder: Path) -> Path:
    """The component of ``folder`` that exists but is not a directory (what the user must move)."""
    for candidate in (*reversed(folder.parents), folder):
        try:
            if candidate.exists() and not candidate.is_dir():
                return candidate
        except OSError:  # a name too long to look up: the folder as given is the best name
            break
    return folder
