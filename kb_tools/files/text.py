"""Reading a user's text file with one clear error for every way it can be unusable."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from kb_tools.diagnostics import EXIT_USAGE, fail
from kb_tools.limits import limit

MAX_TEXT_BYTES = limit("OPKB_MAX_TEXT_BYTES")  # 16 MiB unless set


def _stat(path: Path, code_prefix: str) -> os.stat_result:
    """The file's status, or one line saying why there is none (a loop or a dangling link
    is named as such: "no such file" next to a link the user can see would mislead)."""
    try:
        return path.stat()
    except ValueError:  # a NUL byte: no file can be named so
        fail(path, None, f"{code_prefix}009", "the path holds a NUL byte; no file can be named so", EXIT_USAGE)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            fail(path, None, f"{code_prefix}007", "symbolic link loop", EXIT_USAGE)
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            if path.is_symlink():
                fail(path, None, f"{code_prefix}001", f"dangling symbolic link (to {os.readlink(path)})", EXIT_USAGE)
            fail(path, None, f"{code_prefix}001", "no such file", EXIT_USAGE)
        fail(path, None, f"{code_prefix}004", f"cannot read: {exc.strerror or exc}", EXIT_USAGE)


def read_text(path: Path, *, code_prefix: str = "IO", limit: int = MAX_TEXT_BYTES) -> str:
    """Return the file's text, or raise a KbError (exit 2) saying why it cannot be read."""
    return read_text_and_bytes(path, code_prefix=code_prefix, limit=limit)[0]


def read_text_and_bytes(path: Path, *, code_prefix: str = "IO", limit: int = MAX_TEXT_BYTES) -> tuple[str, bytes]:
    """``read_text`` with the bytes the text came from, for a caller that hashes the file:
    one read, so the hash is always of the text that was parsed."""
    path = Path(path)
    data = read_bytes(path, code_prefix=code_prefix, limit=limit)
    if b"\x00" in data:
        fail(path, None, f"{code_prefix}005", "binary file (NUL byte found), expected UTF-8 text", EXIT_USAGE)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        fail(path, line, f"{code_prefix}006", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})", EXIT_USAGE)
    return text.removeprefix("\ufeff"), data


def read_bytes(path: Path, *, code_prefix: str = "IO", limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, or a KbError (exit 2) saying
    why not. The file is opened without blocking and judged by what was opened, so a FIFO
    put there after a check cannot hang the read."""
    path = Path(path)
    _stat(path, code_prefix)  # a loop, a dangling link or a missing file, said as such
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except IsADirectoryError:
        fail(path, None, f"{code_prefix}002", "is a directory, expected a file", EXIT_USAGE)
    except OSError as exc:
        fail(path, None, f"{code_prefix}004", f"cannot read: {exc.strerror or exc}", EXIT_USAGE)
    try:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            fail(path, None, f"{code_prefix}002", "is a directory, expected a file", EXIT_USAGE)
        if not stat.S_ISREG(status.st_mode):  # a FIFO would block and /dev/zero never ends
            fail(path, None, f"{code_prefix}008", f"is {not_regular(status.st_mode)}, not a regular file", EXIT_USAGE)
        if status.st_size > limit:
            fail(path, None, f"{code_prefix}003", f"file is {status.st_size} bytes, over the {limit}-byte limit", EXIT_USAGE)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)  # the file may have grown since fstat
    except OSError as exc:
        fail(path, None, f"{code_prefix}004", f"cannot read: {exc.strerror or exc}", EXIT_USAGE)
    finally:
        os.close(fd)
    if len(data) > limit:
        fail(path, None, f"{code_prefix}003", f"file is over the {limit}-byte limit", EXIT_USAGE)
    return data


def read_head(path: Path, limit: int) -> str | None:
    """At most the first ``limit`` bytes of a regular file, as text (bad bytes replaced), or None
    when it is not one or cannot be read: for a file only glanced at (a sibling module, a
    conftest.py), where a FIFO must not block and a 1 GiB file must not be read whole."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def not_regular(mode: int) -> str:
    """What a file that is not a regular file is, in words ("a FIFO")."""
    for test, words in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                        (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return words
    return "not a plain file"


def is_file(path) -> bool:
    """``Path.is_file`` that says False, not OSError, for a name too long to look up or a
    folder that cannot be entered: an optional file that cannot be reached is not there."""
    try:
        return Path(path).is_file()
    except OSError:
        return False


def is_dir(path) -> bool:
    """``Path.is_dir``, False where ``is_file`` is."""
    try:
        return Path(path).is_dir()
    except OSError:
        return False
