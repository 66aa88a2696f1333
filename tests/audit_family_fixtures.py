"""Shared by the golden, test and kernel family tests: each code's bad and good fixture
(``tests/fixtures/audit_families/<spec folder>/<CODE>_{bad,good}.py``) and its expected lines.
``expected`` reads every audit fixture's ``.expected`` file, the wrapper family's too."""

from __future__ import annotations

import re
from pathlib import Path

from kb_tools.audit import audit_path
from kb_tools.audit.codes import RULES
from kb_tools.audit.families import FamilyOptions

FAMILY_FIXTURES = Path(__file__).parent / "fixtures" / "audit_families"


def codes(prefix: str) -> list[str]:
    return sorted(c for c in RULES if c.startswith(prefix))


def fixture(code: str, kind: str) -> Path:
    found = sorted(FAMILY_FIXTURES.glob(f"*/{code}_{kind}.py"))
    assert len(found) == 1, f"{code}: expected one {kind} fixture, found {found}"
    return found[0]


def expected(path: Path) -> list[tuple[int, int, str]]:
    """``line:col CODE`` per line, sorted; any other line fails the test that reads it."""
    out = []
    for line in path.read_text().splitlines():
        m = re.fullmatch(r"(\d+):(\d+) ([A-Z]{2}\d{3})", line.strip())
        assert m, f"{path}: bad expectation line {line!r}"
        out.append((int(m[1]), int(m[2]), m[3]))
    return sorted(out)


def audit(path: Path, **family_options):
    return audit_path(path, families=FamilyOptions(**family_options))


def found(path: Path, **family_options) -> list[tuple[int, int, str]]:
    return sorted((f.line, f.col, f.code) for f in audit(path, **family_options).findings)


def check_bad(code: str) -> None:
    bad = fixture(code, "bad")
    want = expected(bad.with_suffix(".expected"))
    assert want and all(c == code for _, _, c in want), f"{code}_bad.expected must name only {code}"
    assert found(bad) == want


def check_good(code: str) -> None:
    result = audit(fixture(code, "good"))
    assert result.roles, "the good fixture must have a role, or it proves nothing"
    assert result.findings == []
