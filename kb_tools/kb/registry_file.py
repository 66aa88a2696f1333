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


def load_entries(path: Path, key: str, code: str, parse, id_of, duplicate: str) -> list:
    """The entries of a registry file whose list ``key`` holds one item per entry, in file order;
    ``[]`` when there is no file. ``parse(entry, line)`` gives ``(item or None, problems)``; an
    item whose ``id_of`` an earlier one has is refused with ``duplicate`` (formatted with the id
    and the earlier line). Codes are ``code`` + 0..4: YAML, frame, top-level key, entry, duplicate;
    any problem raises KbErrors with one line each."""
    if not path.exists():
        return []
    shown, data, diags = read_registry(path, key, (f"{code}0", f"{code}1", f"{code}2"))
    items, seen = [], {}
    for index, entry in enumerate(data[key]):
        item, problems = parse(entry, data[key].line_of(index))
        diags.extend(Diagnostic(shown, where, f"{code}3", message) for where, message in problems)
        if item is None:
            continue
        if id_of(item) in seen:
            diags.append(Diagnostic(shown, item.line, f"{code}4", duplicate.format(id_of(item), seen[id_of(item)])))
            continue
        seen[id_of(item)] = item.line
        items.append(item)
    if diags:
        raise KbErrors(diags)
    return items
