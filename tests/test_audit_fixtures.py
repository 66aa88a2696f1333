"""Per rule code, a bad file and a good file with the expected findings beside them (the
TorchFix / ruff fixture style), plus the seed 003 anti-pattern and its compliant rewrite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from audit_family_fixtures import expected
from kb_tools.audit import audit_path
from kb_tools.audit.codes import RULES

FIXTURES = Path(__file__).parent / "fixtures" / "audit"
WRAPPER_CODES = sorted(c for c in RULES if c.startswith("WB"))  # the other families: tests/test_audit_{golden,test_rules,kernel}.py


def found(path: Path) -> list[tuple[int, int, str]]:
    return sorted((f.line, f.col, f.code) for f in audit_path(path).findings)


@pytest.mark.parametrize("code", WRAPPER_CODES)
def test_bad_fixture_gives_exactly_the_expected_findings(code):
    bad = FIXTURES / f"{code}_bad.py"
    want = expected(FIXTURES / f"{code}_bad.expected")
    assert any(c == code for _, _, c in want), f"{code}_bad.expected never names {code}"
    assert found(bad) == want


@pytest.mark.parametrize("code", WRAPPER_CODES)
def test_good_fixture_is_clean(code):
    result = audit_path(FIXTURES / f"{code}_good.py")
    assert result.wrappers, "the good fixture must hold a wrapper, or it proves nothing"
    assert result.findings == []


def test_codes_are_distinct_and_documented():
    assert len({r.name for r in RULES.values()}) == len(RULES)
    assert all(re.fullmatch(r"(WB|GD|TS|KN)1\d\d", c) and RULES[c].code == c for c in RULES)
    assert all(r.summary and r.fix for r in RULES.values())
    page = (Path(__file__).parents[1] / "kb" / "constraints" / "wrapper-boundary.md").read_text()
    assert sorted(set(re.findall(r"rule: (WB\d{3})", page))) == WRAPPER_CODES


def test_seed_antipattern_gives_its_six_host_operations():
    findings = audit_path(FIXTURES / "seed003_antipattern.py").findings
    codes = [f.code for f in findings]
    assert codes == ["WB101", "WB102", "WB103", "WB103", "WB102", "WB101"]
    assert all(f.wrapper == "op_wrapper" for f in findings)
    assert "movedim" in findings[1].message and "contiguous" in findings[1].message
    assert found(FIXTURES / "seed003_antipattern.py") == expected(FIXTURES / "seed003_antipattern.expected")


def test_seed_compliant_rewrite_gives_none():
    assert audit_path(FIXTURES / "seed003_compliant.py").findings == []


def test_catalog_wrappers():
    root = Path(__file__).parents[1] / "ops" / "wrappers"
    assert audit_path(root / "softmax_wrapper.py").findings == []
    assert [f.code for f in audit_path(root / "softmax_antipattern.py").findings] == \
        ["WB101", "WB102", "WB103", "WB103", "WB102", "WB101"]
