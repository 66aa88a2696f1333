"""The shipped JSON Schemas, CONTRACT.md and the generated files agree with each other."""

from __future__ import annotations

import json
import re

from jsonschema import Draft202012Validator

from conftest import REPO
from kb_tools.contract import schemas
from kb_tools.kb import vocabulary as V


def _field_names(schema) -> set[str]:
    """Every object field a schema defines, at any depth ($defs, items, conditionals)."""
    names = set()
    if isinstance(schema, dict):
        fields = schema.get("properties", {})
        names |= set(fields)
        children = list(fields.values()) + [v for k, v in schema.items() if k != "properties"]
        for child in children:
            names |= _field_names(child)
    elif isinstance(schema, list):
        for child in schema:
            names |= _field_names(child)
    return names


def test_schemas_are_valid_draft_2020_12():
    for name in ("kb_selection", "kb_usage"):
        Draft202012Validator.check_schema(schemas.load(name))


def test_contract_names_every_schema_field():
    contract = (REPO / "CONTRACT.md").read_text()
    named = set(re.findall(r"`([a-z_0-9]+)`", contract))
    for name in ("kb_selection", "kb_usage"):
        missing = _field_names(schemas.load(name)) - named
        assert not missing, f"CONTRACT.md does not name {sorted(missing)} from {name}.schema.json"


def test_schema_vocabularies_match_the_code():
    sel, use = schemas.load("kb_selection"), schemas.load("kb_usage")
    assert sel["properties"]["topologies"]["items"]["enum"] == list(V.TOPOLOGIES)
    assert sel["properties"]["properties"]["propertyNames"]["enum"] == list(V.PROPERTY_KEYS)
    assert use["$defs"]["implementation"]["properties"]["status"]["enum"] == list(V.IMPLEMENTATION_STATUSES)
    assert "verified" not in V.IMPLEMENTATION_STATUSES
    contract = (REPO / "CONTRACT.md").read_text()
    assert "`contract_version` is **3**" in contract and sel["properties"]["schema_version"]["const"] == 3


def test_every_built_file_validates(kbt, tmp_path):
    result = kbt("build", REPO / "ops", "-o", tmp_path)
    assert result.code == 0, result.err
    specs = sorted(p.stem for p in (REPO / "ops").glob("*.yaml"))
    for op in specs:
        for name, schema in (("KB_SELECTION.json", "kb_selection"), ("KB_USAGE.json", "kb_usage")):
            doc = json.loads((tmp_path / op / name).read_text())
            errors = list(Draft202012Validator(schemas.load(schema)).iter_errors(doc))
            # a fresh skeleton leaves status null on purpose: that is the only error allowed
            assert all(e.validator == "enum" and e.instance is None for e in errors), (op, name, errors[:1])
    for op in specs:
        assert re.search(rf"^{op}\s+\d+\s+\d+\s+\d+\s+0$", result.out, flags=re.M), result.out
