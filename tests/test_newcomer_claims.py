"""A claim's file is audited in the roles of the rule the claim names (kb_tools/audit/claims.py),
found by running the newcomer's guide: a GD105 claim (third-party narrowing) on the
third-party leg made it a golden as well, and its widening cast, which the KB asks of that
leg, was reported as a golden's GD102."""

from __future__ import annotations

import json
import shutil

import pytest

from kb_tools.audit.claims import claimed_roles
from conftest import REPO
from test_newcomer_guide import GUIDE, guide_steps

FIXTURE = REPO / "tests" / "fixtures" / "newcomer" / "project"


@pytest.fixture
def fixed(tmp_path, kbt):
    """The newcomer's example after the guide's fixes, with its filled claims in build/rmsnorm."""
    work = tmp_path / "work"
    shutil.copytree(FIXTURE, work, ignore=shutil.ignore_patterns("__pycache__"))
    for kind, path, text, *_ in guide_steps(GUIDE.read_text()):
        if kind == "file":
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
    assert kbt("usage", work / "ops" / "rmsnorm.yaml", "-o", work / "build" / "rmsnorm").code == 0
    shutil.copy(work / "filled" / "KB_USAGE.json", work / "build" / "rmsnorm" / "KB_USAGE.json")
    return work


def test_a_rule_gives_its_own_roles():
    assert claimed_roles("GD105") == ("third_party",)
    assert claimed_roles("GD102") == ("golden",)
    assert claimed_roles("TS106") == ("test",)
    assert claimed_roles("WB101") == ("impl",)


def test_a_third_party_leg_that_widens_passes_its_own_claim(kbt, fixed, monkeypatch):
    monkeypatch.chdir(fixed)
    usage = json.loads((fixed / "build" / "rmsnorm" / "KB_USAGE.json").read_text())
    (claim,) = [r for r in usage["invariants"] if r["invariant_id"] == "integer-exit-in-source"]
    assert claim["implementation"]["file"] == "legs/third_party.py"
    assert "torch.float32" in (fixed / "legs" / "third_party.py").read_text()  # the widening the leg owes
    result = kbt("verify", "build/rmsnorm", "--root", ".")
    assert result.code == 0 and ": PASS (" in result.out, result.err
    assert "third_party.py" not in result.err


def test_the_same_leg_claimed_as_a_golden_is_audited_as_one(kbt, fixed, monkeypatch):
    monkeypatch.chdir(fixed)
    path = fixed / "build" / "rmsnorm" / "KB_USAGE.json"
    usage = json.loads(path.read_text())
    (claim,) = [r for r in usage["invariants"] if r["invariant_id"] == "no-float-cast-in-source"]
    claim["implementation"].update(file="legs/third_party.py", symbol="third_party_rms_norm")
    path.write_text(json.dumps(usage, indent=2))
    result = kbt("verify", "build/rmsnorm", "--root", ".")
    assert result.code == 1
    assert any(line.startswith("legs/third_party.py:8: GD102") for line in result.err.splitlines()), result.err
    assert any(" VF011 " in line and "legs/third_party.py:8 breaks GD102" in line for line in result.err.splitlines()), result.err
