"""Operator specs (``ops/<op>.yaml``): the facts routing needs about one operator class.

A spec states what the operator *is* (topologies, dtypes, properties, criteria, the DUT's
widening, the target); nothing in it names a rule, so routing never keys off an op name.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from kb_tools.contract.opspec import OpSpec
from kb_tools.diagnostics import Diagnostic, KbErrors
from kb_tools.files import cache
from kb_tools.files.text import read_text
from kb_tools.kb import vocabulary as V

_DTYPE_NAMES = sorted(set(V.DTYPES) | set(V.DTYPE_ALIASES))

SPEC_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["op", "topologies", "properties", "criteria"],
    "properties": {
        "op": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
        # "." or a relative folder under build/<op>/: no "..", no absolute path, nothing hidden
        "class_id": {"type": "string", "pattern": r"^(\.|[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*)$"},
        "description": {"type": "string"},
        "topologies": {"type": "array", "uniqueItems": True, "items": {"enum": list(V.TOPOLOGIES)}},
        "properties": {
            "type": "object",
            "additionalProperties": False,
            "required": ["dtypes"],
            "properties": {
                **{k: {"type": "boolean"} for k in V.PROPERTY_KEYS if k not in V.LIST_PROPERTY_KEYS},
                "dtypes": {"type": "array", "minItems": 1, "uniqueItems": True, "items": {"enum": _DTYPE_NAMES}},
                "index_dtypes": {"type": "array", "uniqueItems": True, "items": {"enum": _DTYPE_NAMES}},
                "ranks": {"type": "array", "uniqueItems": True, "items": {"type": "integer", "minimum": 0, "maximum": 8}},
            },
        },
        "target": {"enum": list(V.TARGETS)},
        "criteria": {
            "type": "object",
            "propertyNames": {"enum": _DTYPE_NAMES},
            "additionalProperties": {"enum": list(V.CRITERIA)},
        },
        "widening": {
            "type": "object",
            "propertyNames": {"enum": _DTYPE_NAMES},
            "additionalProperties": {"enum": _DTYPE_NAMES},
        },
        "wrapper": {"type": "string", "minLength": 1},
        "tensors": {"type": "string", "minLength": 1},
    },
}


def _canon_list(values):
    return [V.canonical_dtype(v) for v in values]


def load_spec(path: Path) -> OpSpec:
    path = Path(path)
    if (path / "op_host").is_dir():  # a CANN operator folder is read as its spec (issue 35)
        from kb_tools.contract.cann_spec import as_spec

        spec = as_spec(path)
        if spec is None:
            raise KbErrors([Diagnostic(str(path / "op_host"), 1, "SP013", "the CANN operator folder registers no "
                                       "output dtype opkb knows; pass an ops/<op>.yaml with --spec")])
        return spec
    text = read_text(path, code_prefix="SP")
    known = _remembered(text, path)  # an unchanged spec is not parsed or validated again
    if known is not None:
        return known
    from kb_tools.files.schema_check import schema_diagnostics
    from kb_tools.files.yamlio import load_yaml

    if not text.strip():
        raise KbErrors([Diagnostic(str(path), None, "SP010", "empty spec: expected op, topologies, properties and criteria")])
    data = load_yaml(text, path, code="SP011")
    if not isinstance(data, dict):
        raise KbErrors([Diagnostic(str(path), 1, "SP012", "a spec must be a mapping of keys to values")])
    diags = schema_diagnostics(data, SPEC_SCHEMA, path, "SP020")
    if diags:
        raise KbErrors(diags)
    diags = _spelt_twice(data, path)
    if diags:
        raise KbErrors(diags)
    props = dict(data["properties"])
    for key in ("dtypes", "index_dtypes"):
        if key in props:
            props[key] = _canon_list(props[key])
    criteria = {V.canonical_dtype(k): v for k, v in data["criteria"].items()}
    widening = {V.canonical_dtype(k): V.canonical_dtype(v) for k, v in data.get("widening", {}).items()}
    dtypes = set(props["dtypes"])
    for name, table in (("criteria", data["criteria"]), ("widening", data.get("widening", {}))):
        for key in table:
            if V.canonical_dtype(key) not in dtypes:
                diags.append(Diagnostic(str(path), table.line_of(key), "SP021", f"{name} names {key!r}, which is not in properties.dtypes; "
                                        f"add {key} to properties.dtypes or drop this entry"))
    if diags:
        raise KbErrors(diags)
    spec = OpSpec(
        op=data["op"],
        class_id=data.get("class_id", "."),
        topologies=tuple(data["topologies"]),
        properties=props,
        target=data.get("target"),
        criteria=criteria,
        widening=widening,
        wrapper=data.get("wrapper"),
        description=" ".join(str(data.get("description", "")).split()),
        path=path,
        tensors=data.get("tensors"),
        dtype_lines={dtype: data["properties"]["dtypes"].line_of(i) for i, dtype in enumerate(props["dtypes"])},
    )
    _remember(text, spec)
    return spec


def _spelt_twice(data: dict, path: Path) -> list[Diagnostic]:
    """A dtype named twice under two spellings (fp16 and float16): the schema's uniqueItems
    sees two names, the operator one dtype, and one of two criteria would silently win."""
    diags = []
    tables = [(f"properties.{key}", data["properties"][key], True) for key in ("dtypes", "index_dtypes") if key in data["properties"]]
    tables += [(key, data[key], False) for key in ("criteria", "widening") if key in data]
    for where, table, is_list in tables:
        seen: dict[str, str] = {}
        for i, name in enumerate(table):
            canonical = V.canonical_dtype(name)
            if canonical in seen:
                line = table.line_of(i) if is_list else table.line_of(name)
                diags.append(Diagnostic(str(path), line, "SP022", f"{where} names {canonical} twice ({seen[canonical]!r} and {name!r} "
                                        "are one dtype); keep one spelling"))
            seen.setdefault(canonical, name)
    return diags


def spec_files(ops_dir: Path) -> list[Path]:
    return sorted(Path(ops_dir).glob("*.yaml"))


# Specs already parsed and checked, by the content of their file: ``kbt select`` on an
# unchanged spec would otherwise import YAML and jsonschema to reach the same OpSpec again.
# The key covers the file's text and the code that reads it (files.cache); a record is used
# only when it rebuilds into an OpSpec that writes back to the same record, and only specs
# that loaded without error are remembered, so a broken spec is reported every run.
MEMO = cache.Memo("specs", max_items=256)
_CODE = ("contract/specs.py", "kb/vocabulary.py", "files/yamlio.py", "files/schema_check.py")
_FIELDS = ("op", "class_id", "topologies", "properties", "target", "criteria", "widening", "wrapper", "description", "tensors", "dtype_lines")


def _memo_key(text: str) -> str:
    return cache.content_key([("spec", text.encode("utf-8", "surrogatepass"))], cache.code_digest(*_CODE))


def _record(spec: OpSpec) -> dict:
    return {name: list(v) if isinstance(v := getattr(spec, name), tuple) else v for name in _FIELDS}


def _remembered(text: str, path: Path) -> OpSpec | None:
    record = MEMO.get(_memo_key(text))
    if not isinstance(record, dict) or set(record) != set(_FIELDS):
        return None
    try:
        spec = OpSpec(**{**record, "topologies": tuple(record["topologies"])}, path=Path(path))
    except TypeError:
        return None
    return spec if _record(spec) == record and isinstance(spec.op, str) and isinstance(spec.properties, dict) else None


def _remember(text: str, spec: OpSpec) -> None:
    """Remember ``spec`` if its record rebuilds it whole (a field added to OpSpec but not to
    _FIELDS would otherwise come back as its default)."""
    record = _record(spec)
    try:
        rebuilt = OpSpec(**{**record, "topologies": tuple(record["topologies"])}, path=spec.path)
    except TypeError:  # OpSpec gained a field _FIELDS does not name
        return
    if rebuilt == spec and rebuilt.dtype_lines == spec.dtype_lines:
        MEMO.put(_memo_key(text), record)


@contextmanager
def whole_catalog(n_specs: int):
    """Within the block, specs are remembered in a memo of their own that holds a whole
    catalog (``kbt build``): the shared memo keeps 256 so that ``kbt select`` starts fast,
    which made every build of 1,000 specs parse 744 of them again. Saved when the block ends."""
    global MEMO
    shared, MEMO = MEMO, cache.Memo("catalog-specs", max_items=max(n_specs, MEMO.max_items))
    try:
        yield
    finally:
        MEMO.save()
        MEMO = shared
