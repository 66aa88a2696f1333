"""The hand-label files the CANN scorers read, through kbt's own YAML reader: a broken file is
one `path:line` line on stderr (bad YAML, a duplicate key, a missing file), never a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

from kb_tools.diagnostics import KbError, KbErrors
from kb_tools.files.text import read_text
from kb_tools.files.yamlio import load_yaml


def load_labels(path: Path) -> dict | None:
    """The labels file's mapping, or None after one line on stderr."""
    try:
        data = load_yaml(read_text(path), path)
    except (KbError, KbErrors) as exc:
        print(exc, file=sys.stderr)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("operators"), dict):
        print(f"{path}:1: labels have no `operators:` mapping", file=sys.stderr)
        return None
    return data
