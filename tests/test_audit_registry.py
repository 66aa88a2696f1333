"""The audit's registry (``kb_tools.audit.codes``) against the rule modules, the kb pages,
the policies, the fixtures and the docs generated from it: one code, one module, one entry."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from kb_tools.audit.codes import LENIENT_READINGS, RULES
from kb_tools.audit.explain import explain, rule_table
from kb_tools.audit.policies import DEFAULT_POLICY, POLICIES

ROOT = Path(__file__).resolve().parents[1]
RULES_DIR = ROOT / "kb_tools" / "audit" / "rules"
FAMILY_PREFIXES = ("GD", "TS", "KN")


def test_every_code_has_exactly_one_rule_module_and_every_module_a_code():
    modules = {p.stem for p in RULES_DIR.glob("*.py") if p.stem != "__init__"}
    assert modules == {r.module for r in RULES.values()}
    for code, rule in RULES.items():
        module = importlib.import_module(f"kb_tools.audit.rules.{rule.module}")
        assert module.CODE == code


def test_family_rules_say_what_they_read_and_wrapper_rules_are_asked_by_the_walk():
    for code, rule in RULES.items():
        module = importlib.import_module(f"kb_tools.audit.rules.{rule.module}")
        family = code.startswith(FAMILY_PREFIXES)
        assert hasattr(module, "check") == family, code
        assert bool(getattr(module, "ROLES", ())) == family, code


def _naming_modules(code: str, folders) -> list[str]:
    pattern = re.compile(rf"\b{code}\b")
    return sorted(str(p.relative_to(ROOT)) for folder in folders for p in folder.rglob("*.py")
                  if pattern.search(p.read_text(encoding="utf-8")))


def test_a_code_is_named_only_in_its_rule_module_and_the_registry():
    folders = [ROOT / "kb_tools" / "audit", ROOT / "kb_tools" / "commands"]
    for code, rule in RULES.items():
        assert _naming_modules(code, folders) == sorted(["kb_tools/audit/codes.py",
                                                         f"kb_tools/audit/rules/{rule.module}.py"]), code


def test_each_page_named_states_the_rule_in_a_static_invariant():
    stated: dict[str, set[str]] = {}
    for page in (ROOT / "kb").rglob("*.md"):
        for code in re.findall(r"^\s+rule: (\w+)\s*$", page.read_text(encoding="utf-8"), re.M):
            stated.setdefault(code, set()).add(str(page.relative_to(ROOT / "kb"))[:-3])
    assert set(stated) <= set(RULES)
    for code, rule in RULES.items():  # a page added later may state a rule too; each one named here must
        assert rule.pages and set(rule.pages) <= stated.get(code, set()), code


def test_policies_are_read_from_the_registry():
    assert set(LENIENT_READINGS) == set(POLICIES) - {DEFAULT_POLICY}
    assert not POLICIES[DEFAULT_POLICY].allows
    lenient = POLICIES["lenient"].allows
    assert lenient and all(lenient <= POLICIES[name].allows for name in LENIENT_READINGS)
    for code, rule in RULES.items():
        for op, names in rule.passes.items():
            assert set(names) <= set(LENIENT_READINGS)
            assert all(POLICIES[n].allowed(code, op) for n in names)


def test_every_code_has_a_good_and_a_bad_fixture():
    fixtures = {p.stem for p in (ROOT / "tests" / "fixtures").glob("audit*/**/*.py")}
    for code in RULES:
        assert {f"{code}_good", f"{code}_bad"} <= fixtures, code


def test_the_rule_table_in_the_docs_is_the_registry_s():
    page = (ROOT / "docs" / "audit-rules.md").read_text(encoding="utf-8")
    assert rule_table() in page
    assert len(rule_table().splitlines()) == len(RULES) + 2


def test_explain_prints_the_registry_entry(kbt):
    r = kbt("explain", "wb104")
    assert r.code == 0
    rule = RULES["WB104"]
    assert r.out.splitlines()[0] == f"WB104 ({rule.name}), {rule.level}"
    assert r.out.strip() == explain("WB104")
    assert f"kb_tools/audit/rules/{rule.module}.py" in r.out and "agent-verifier: `scratch-empty`, `clone`" in r.out
    listing = kbt("explain")
    assert listing.code == 0 and len(listing.out.splitlines()) == len(RULES)


@pytest.mark.parametrize("bad", ["WB999", "WB10", ""])
def test_explain_refuses_an_unknown_code_in_one_line(kbt, bad):
    r = kbt("explain", bad)
    assert r.code == 2
    assert r.err.strip().count("\n") == 0 and "AU023" in r.err and "Traceback" not in r.err
