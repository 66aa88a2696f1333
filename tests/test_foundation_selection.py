"""Routing one spec to pages: the predicate, the reasons, exclusions and determinism."""

from __future__ import annotations

import hashlib
import json

from conftest import REPO
from kb_tools.contract.selection import select, write_selection
from kb_tools.contract.specs import load_spec
from kb_tools.kb.pages import load_kb


def _spec(tmp_path, text):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return load_spec(path)


def test_mandatory_page_in_every_selection():
    kb = load_kb(REPO)
    for spec_path in sorted((REPO / "ops").glob("*.yaml")):
        sel = select(kb, load_spec(spec_path))
        assert "constraints/wrapper-boundary.md" in [v.page.rel_path for v in sel.constraints], spec_path.name


def test_three_party_trigger_follows_criteria(tmp_path):
    kb = load_kb(REPO)
    two_party = _spec(tmp_path, "op: a\ntopologies: [elementwise]\nproperties: {dtypes: [float16]}\ncriteria: {float16: close}\n")
    three_party = _spec(tmp_path, "op: a\ntopologies: [elementwise]\nproperties: {dtypes: [float16]}\ncriteria: {float16: cross_check}\n")
    ints_only = _spec(tmp_path, "op: a\ntopologies: [elementwise]\nproperties: {dtypes: [int32]}\ncriteria: {int32: cross_check}\n")
    paths = lambda s: [v.page.rel_path for v in select(kb, s).constraints]  # noqa: E731
    assert "constraints/golden-promote.md" not in paths(two_party)
    assert "constraints/golden-promote.md" in paths(three_party)
    assert "constraints/golden-promote.md" not in paths(ints_only)


def test_excluded_lists_the_failing_predicate(tmp_path):
    kb = load_kb(REPO)
    spec = _spec(tmp_path, "op: a\ntopologies: [elementwise]\nproperties: {dtypes: [float16]}\ncriteria: {float16: close}\n")
    doc = select(kb, spec).to_json()
    excluded = {e["path"]: e["predicate"] for e in doc["excluded"]}
    assert "packed_intermediate" in excluded["patterns/packed-mask-expansion.md"]
    assert doc["no_matching_pattern"] is (doc["optional_patterns"] == [])
    every = {e["path"] for e in doc["excluded"]} | {r["path"] for r in doc["required_constraints"] + doc["optional_patterns"] + doc["playbooks"]}
    assert every == {p.rel_path for p in kb.pages.values()}


def test_selection_is_byte_identical_and_hashes_pages(tmp_path):
    kb = load_kb(REPO)
    spec = load_spec(REPO / "ops" / "bernoulli.yaml")
    a = write_selection(select(kb, spec), tmp_path / "a").read_bytes()
    b = write_selection(select(load_kb(REPO), load_spec(REPO / "ops" / "bernoulli.yaml")), tmp_path / "b").read_bytes()
    assert a == b
    doc = json.loads(a)
    for ref in doc["required_constraints"] + doc["optional_patterns"]:
        digest = hashlib.sha256((REPO / "kb" / ref["path"]).read_bytes()).hexdigest()
        assert ref["sha256"] == "sha256:" + digest
        assert ref["reason"]
    assert "patterns/packed-mask-expansion.md" in [p["path"] for p in doc["optional_patterns"]]
    assert doc["no_matching_pattern"] is False
