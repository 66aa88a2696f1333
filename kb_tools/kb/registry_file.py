"""The frame shared by the KB's registry files (facts.yaml, values.yaml, glossary.yaml):
a YAML mapping whose one list holds the entries. Each loader checks its own entries;
reading the frame lives here once, so the three report a broken frame alike."""

from __future__ import annotations

from pathlib import Path

from kb_tools.diagnostics import Diagnostic, KbErrors
from kb_tools.files.text import read_text
from kb_tools.files.yamlio import LineDict, LineList, load_yaml
from kb_tools.kb.pages import shown_path


def read_registry(path: Path, key: str, codes: tuple[str, str, str], also: tuple[str, ...] = ()):
    """``(shown path, mapping, diagnostics)`` of a registry file whose entries are the list ``key``.

    ``codes`` name, in order: YAML that does not parse, a file that is not a mapping with that
    list (raised as KbErrors), and each top-level key other than ``key`` and ``also`` (returned).
    """
    shown = shown_path(path)
    data = load_yaml(read_text(path, code_prefix=codes[0][:2]), shown, code=codes[0])
    if not isinstance(data, LineDict) or not isinstance(data.get(key), LineList):
        raise KbErrors([Diagnostic(shown, getattr(data, "line", 1), codes[1], f"expected a mapping with a {key!r} list")])
    diags = [Diagnostic(shown, data.line_of(k), codes[2], f"unknown top-level key {k!r}") for k in data if k != key and k not in also]
    return shown, data, diags
