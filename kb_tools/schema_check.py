"""Validate loaded YAML/JSON against a JSON Schema and turn each error into a Diagnostic
that names the line of the offending key (via yamlio.LineDict) or of the JSON value."""

from __future__ import annotations

from kb_tools.diagnostics import Diagnostic
from kb_tools.yamlio import line_at


def _describe(error) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
        return f"unknown key {', '.join(map(repr, extra))}" + (f" in {where}" if where else "")
    if error.validator == "required":
        return error.message.replace("is a required property", "is required") + (f" in {where}" if where else "")
    message = error.message
    if error.validator == "enum":
        message = f"{error.instance!r} is not one of {', '.join(map(str, error.validator_value))}"
    return f"{where}: {message}" if where else message


def schema_diagnostics(data, schema: dict, path, code: str, *, line_of=None) -> list[Diagnostic]:
    """All schema errors in ``data`` as diagnostics, sorted by line."""
    from jsonschema import Draft202012Validator  # imported on use: keeps start-up short

    validator = Draft202012Validator(schema)
    diags = []
    for error in validator.iter_errors(data):
        parts = list(error.absolute_path)
        if error.validator == "additionalProperties":
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})))
            parts = parts + extra[:1]
        line = line_of(parts) if line_of else line_at(data, parts)
        diags.append(Diagnostic(str(path), line, code, _describe(error)))
    return sorted(set(diags))
