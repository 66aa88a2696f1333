"""The page loader, the spec loader and the YAML/JSON readers: types, lines, duplicates."""

from __future__ import annotations

import pytest

from conftest import REPO
from kb_tools.contract.specs import load_spec
from kb_tools.diagnostics import KbError, KbErrors
from kb_tools.files.jsonio import load_json
from kb_tools.files.yamlio import load_yaml
from kb_tools.kb.pages import load_kb, parse_page


def test_real_pages_load_without_diagnostics():
    kb = load_kb(REPO)
    assert kb.diagnostics == []
    assert {"wrapper-boundary", "golden-promote", "packed-mask-expansion"} <= set(kb.pages)


def test_page_fields_and_hash():
    kb = load_kb(REPO)
    page = kb.pages["wrapper-boundary"]
    assert page.kind == "constraint" and page.rel_path == "constraints/wrapper-boundary.md"
    assert page.routing.mandatory_for == ("architect", "coder", "verifier")
    assert page.sha256.startswith("sha256:") and len(page.sha256) == 7 + 64
    static = [i for i in page.invariants if i.check == "static"]
    assert static and all(i.rule.startswith("WB") for i in static)


def test_yaml_keeps_key_lines():
    data = load_yaml("a: 1\nb:\n  c: 2\n  d: [1, 2]\n", "x.yaml")
    assert data.line_of("a") == 1 and data.line_of("b") == 2
    assert data["b"].line_of("d") == 4


def test_yaml_duplicate_key_names_its_line():
    with pytest.raises(KbError) as info:
        load_yaml("a: 1\nb: 2\na: 3\n", "x.yaml")
    assert str(info.value) == "x.yaml:3: YA001 duplicate key 'a'"


def test_front_matter_error_line_is_the_files_line(tmp_path):
    page = tmp_path / "kb" / "constraints" / "demo-page.md"
    page.parent.mkdir(parents=True)
    text = (REPO / "kb/constraints/golden-promote.md").read_text().replace("id: golden-promote", "id: demo-page")
    page.write_text(text.replace("area: precision", "area: astrology"))
    with pytest.raises(KbErrors) as info:
        parse_page(page, tmp_path / "kb")
    (diag,) = info.value.diagnostics
    assert diag.line == text.splitlines().index("area: precision") + 1
    assert "astrology" in diag.message and diag.code == "PG010"


def test_spec_dtype_aliases_are_canonical(tmp_path):
    spec = tmp_path / "x.yaml"
    spec.write_text("op: x\ntopologies: [elementwise]\nproperties: {dtypes: [fp16, bf16, int8]}\n"
                    "criteria: {fp16: cross_check, bf16: close, int8: binary_equal}\nwidening: {fp16: fp32}\n")
    loaded = load_spec(spec)
    assert loaded.dtypes == ("float16", "bfloat16", "int8")
    assert loaded.criteria == {"float16": "cross_check", "bfloat16": "close", "int8": "binary_equal"}
    assert loaded.widening == {"float16": "float32"}
    facts = loaded.facts()
    assert set(facts) >= {"has_integer_dtype", "has_half_dtype", "three_party", "dtypes"}
    assert "float16" in facts["three_party"] and "bfloat16" not in facts["three_party"]


def test_spec_uncovered_dtype_reported(tmp_path):
    spec = tmp_path / "x.yaml"
    spec.write_text("op: x\ntopologies: [elementwise]\nproperties: {dtypes: [float16, int32]}\ncriteria: {float16: close}\n")
    assert load_spec(spec).uncovered_dtypes() == ["int32"]


def test_json_duplicate_key_and_lines(tmp_path):
    good = tmp_path / "a.json"
    good.write_text('{\n  "x": [\n    {"k": 1},\n    {"k": 2}\n  ]\n}\n')
    data = load_json(good)
    assert data["x"][1].line == 4 and data.line_of("x") == 2
    bad = tmp_path / "b.json"
    bad.write_text('{\n  "x": 1,\n  "x": 2\n}\n')
    with pytest.raises(KbError) as info:
        load_json(bad)
    assert info.value.diagnostic.line == 3 and "duplicate JSON key 'x'" in str(info.value)
