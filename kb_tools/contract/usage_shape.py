"""The shape every reader of a KB_USAGE.json relies on, checked before anything walks it.

The contract check (``kbt check-usage``) reports a hand-edited file's every fault through
the JSON Schema; the merge (``kbt usage``) and the review only need the records to be
records: a list of objects whose reference, invariant id and status are text. A file
that is not even that is reported here, line by line, and left untouched.
"""

from __future__ import annotations

from pathlib import Path

from kb_tools.contract import upstream
from kb_tools.diagnostics import EXIT_USAGE, Diagnostic, KbErrors, capped
from kb_tools.files.jsonio import load_json

_TEXT_FIELDS = ("reference", "invariant_id", "invariant", "justification")
_IMPLEMENTATION_FIELDS = ("file", "symbol", "status")


def _kind(value) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "text"


def shape_problems(doc, shown: str) -> list[Diagnostic]:
    """What makes ``doc`` unusable as records, one diagnostic per problem (empty when usable)."""
    if not isinstance(doc, dict):
        return [Diagnostic(shown, getattr(doc, "line", 1), "US020", f"KB_USAGE.json must be a JSON object, not {_kind(doc)}")]
    problems = []
    for key in ("invariants", "stale"):
        if key in doc and not isinstance(doc[key], list):
            problems.append(Diagnostic(shown, doc.line_of(key), "US022", f"{key} must be a list of records, not {_kind(doc[key])}"))
    records = doc.get("invariants") if isinstance(doc.get("invariants"), list) else []
    for i, record in enumerate(records):
        if not isinstance(record, dict):
            problems.append(Diagnostic(shown, records.line_of(i), "US022", f"invariants.{i} must be an object, not {_kind(record)}"))
            continue
        named = _named(record)
        problems += _wrong_types(record, _TEXT_FIELDS, f"invariants.{i}", named, shown)
        impl = record.get("implementation")
        if isinstance(impl, dict):
            problems += _wrong_types(impl, _IMPLEMENTATION_FIELDS, f"invariants.{i}.implementation", named, shown)
        elif impl is not None:
            problems.append(Diagnostic(shown, record.line_of("implementation"), "US022",
                                       f"invariants.{i}.implementation{named} must be an object, not {_kind(impl)}"))
    return problems


def _named(record: dict) -> str:
    """The record by what it answers, beside its place in the list (which an edit shifts)."""
    parts = [record.get(k) for k in ("reference", "invariant_id") if isinstance(record.get(k), str)]
    return f" (the record for {' '.join(parts)})" if parts else ""


def _wrong_types(obj: dict, fields, where: str, named: str, shown: str) -> list[Diagnostic]:
    return [Diagnostic(shown, obj.line_of(key), "US022", f"{where}.{key}{named} must be text or null, not {_kind(obj[key])}")
            for key in fields if obj.get(key) is not None and not isinstance(obj[key], str)]


def load_usage(path: Path) -> dict:
    """A KB_USAGE.json whose records can be walked; otherwise every shape problem, exit 2."""
    doc = load_json(path, code_prefix="US")
    problems = shape_problems(doc, str(path))
    if problems:
        raise KbErrors(capped(problems, path, "US060"), EXIT_USAGE)
    upstream.normalise(doc, str(path))  # read the public template's encoded invariants as ours; check-usage reports its faults
    return doc
