"""Operator specs already parsed and checked, by the content of their file.

``kbt select`` on an unchanged spec would otherwise import YAML and jsonschema to reach the
same OpSpec again. The key covers the file's text and the code that reads it (kbcache); a
record is used only when it rebuilds into an OpSpec that writes back to the same record, and
only specs that loaded without error are remembered, so a broken spec is reported every run.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

from kb_tools import kbcache
from kb_tools.specs import OpSpec

MEMO = kbcache.Memo("specs", max_items=256)
_CODE = ("specmemo.py", "specs.py", "vocabulary.py", "yamlio.py", "schema_check.py")
_FIELDS = ("op", "class_id", "topologies", "properties", "target", "criteria", "widening", "wrapper", "description", "tensors", "dtype_lines")


def _key(text: str) -> str:
    return kbcache.content_key([("spec", text.encode("utf-8", "surrogatepass"))], kbcache.code_digest(*_CODE))


def _record(spec: OpSpec) -> dict:
    return {name: list(v) if isinstance(v := getattr(spec, name), tuple) else v for name in _FIELDS}


def get(text: str, path: Path) -> OpSpec | None:
    record = MEMO.get(_key(text))
    if not isinstance(record, dict) or set(record) != set(_FIELDS):
        return None
    try:
        spec = OpSpec(**{**record, "topologies": tuple(record["topologies"])}, path=Path(path))
    except TypeError:
        return None
    return spec if _record(spec) == record and isinstance(spec.op, str) and isinstance(spec.properties, dict) else None


def put(text: str, spec: OpSpec) -> None:
    """Remember ``spec`` if its record rebuilds it whole (a field added to OpSpec but not to
    _FIELDS would otherwise come back as its default)."""
    record = _record(spec)
    try:
        rebuilt = OpSpec(**{**record, "topologies": tuple(record["topologies"])}, path=spec.path)
    except TypeError:  # OpSpec gained a field _FIELDS does not name
        return
    if rebuilt == spec and rebuilt.dtype_lines == spec.dtype_lines:
        MEMO.put(_key(text), record)


@contextmanager
def whole_catalog(n_specs: int):
    """Within the block, specs are remembered in a memo of their own that holds a whole
    catalog (``kbt build``): the shared memo keeps 256 so that ``kbt select`` starts fast,
    which made every build of 1,000 specs parse 744 of them again. Saved when the block ends."""
    global MEMO
    shared, MEMO = MEMO, kbcache.Memo("catalog-specs", max_items=max(n_specs, MEMO.max_items))
    try:
        yield
    finally:
        MEMO.save()
        MEMO = shared
