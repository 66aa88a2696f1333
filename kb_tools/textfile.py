"""Reading a user's text file with one clear error for every way it can be unusable."""

from __future__ import annotations

from pathlib import Path

from kb_tools.diagnostics import EXIT_USAGE, fail

MAX_TEXT_BYTES = 16 * 1024 * 1024


def read_text(path: Path, *, code_prefix: str = "IO", limit: int = MAX_TEXT_BYTES) -> str:
    """Return the file's text, or raise a KbError (exit 2) saying why it cannot be read."""
    path = Path(path)
    if not path.exists():
        fail(path, None, f"{code_prefix}001", "no such file", EXIT_USAGE)
    if path.is_dir():
        fail(path, None, f"{code_prefix}002", "is a directory, expected a file", EXIT_USAGE)
    try:
        size = path.stat().st_size
        if size > limit:
            fail(path, None, f"{code_prefix}003", f"file is {size} bytes, over the {limit}-byte limit", EXIT_USAGE)
        data = path.read_bytes()
    except OSError as exc:
        fail(path, None, f"{code_prefix}004", f"cannot read: {exc.strerror or exc}", EXIT_USAGE)
    if b"\x00" in data:
        fail(path, None, f"{code_prefix}005", "binary file (NUL byte found), expected UTF-8 text", EXIT_USAGE)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        fail(path, line, f"{code_prefix}006", f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})", EXIT_USAGE)
    return text.removeprefix("\ufeff")
