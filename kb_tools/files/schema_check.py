"""Validate loaded YAML/JSON against a JSON Schema and turn each error into a Diagnostic
that names the line of the offending key (via yamlio.LineDict) or of the JSON value."""

from __future__ import annotations

from kb_tools.diagnostics import Diagnostic

# A file that breaks the schema everywhere (a megabyte of empty records) would otherwise
# print a million lines; the first few name what to fix.
MAX_SCHEMA_ERRORS = 50
# A value is quoted in its message; a 200 KB string must not make a 200 KB line.
MAX_MESSAGE = 300

_JSON_TYPES = {bool: "boolean", int: "integer", float: "number", str: "string", type(None): "null"}


def _json_type(value) -> str:
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _describe(error) -> str:
    """The error in the file's terms, short enough to read on one line."""
    text = _explain(error)
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def _explain(error) -> str:
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        extra = sorted(set(error.instance) - set(error.schema.get("properties", {})), key=str)
        names = ", ".join(map(repr, extra[:5])) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
        return f"unknown key {names}" + (f" in {where}" if where else "")
    if error.validator == "required":
        return error.message.replace("is a required property", "is required") + (f" in {where}" if where else "")
    message = error.message
    if error.validator == "enum":
        message = f"{error.instance!r} is not one of {', '.join(map(str, error.validator_value))}"
    if error.validator == "type":
        wanted = error.validator_value if isinstance(error.validator_value, list) else [error.validator_value]
        got = "null" if error.instance is None else f"{error.instance!r} (a {_json_type(error.instance)})"
        message = f"{got}, expected {' or '.join(wanted)}"
    if error.validator == "const" and _json_type(error.instance) != _json_type(error.validator_value):
        want = error.validator_value
        message = f"{error.instance!r} is a {_json_type(error.instance)}; the {_json_type(want)} {want!r} was expected"
    return f"{where}: {message}" if where else message


_ANCHORED: dict[int, tuple[dict, dict]] = {}


def _anchored(schema):
    """``schema`` with each pattern's closing ``$`` made ``\\Z``: Python's ``$`` also matches
    before a final newline, so ``op: "softmax\\n"`` passed ``^[A-Za-z_]\\w*$`` and made a
    folder whose name ends in a newline. Kept per schema, so it is built once."""
    if isinstance(schema, dict):
        return {k: (v[:-1] + r"\Z" if k == "pattern" and isinstance(v, str) and v.endswith("$") and not v.endswith("\\$")
                    else _anchored(v)) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_anchored(v) for v in schema]
    return schema


def schema_diagnostics(data, schema: dict, path, code: str, *, line_of=None, skip=None) -> list[Diagnostic]:
    """Schema errors in ``data`` as diagnostics, sorted by line; at most MAX_SCHEMA_ERRORS
    and a line saying more were left out. ``skip(error)`` drops errors a caller reports
    in its own words (one line per problem, not two)."""
    from jsonschema import Draft202012Validator  # imported on use: keeps start-up short

    from kb_tools.files.yamlio import line_at  # on use too: `kbt usage` imports this module, never YAML

    kept = _ANCHORED.get(id(schema))
    if kept is None or kept[0] is not schema:
        kept = _ANCHORED[id(schema)] = (schema, _anchored(schema))
    validator = Draft202012Validator(kept[1])
    diags = set()
    for error in validator.iter_errors(data):
        if skip and skip(error):
            continue
        if len(diags) == MAX_SCHEMA_ERRORS:
            diags.add(Diagnostic(str(path), getattr(data, "line", 1), code,
                                 f"more schema errors not shown (stopped after {MAX_SCHEMA_ERRORS}); fix these first"))
            break
        parts = list(error.absolute_path)
        if error.validator == "additionalProperties":
            extra = sorted(set(error.instance) - set(error.schema.get("properties", {})), key=str)
            parts = parts + extra[:1]
        line = line_of(parts) if line_of else line_at(data, parts)
        diags.add(Diagnostic(str(path), line, code, _describe(error)))
    return sorted(diags)
