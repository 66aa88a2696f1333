"""Every golden, test and kernel code (GD, TS, KN) with fixtures under
tests/fixtures/audit_families: its bad fixture gives exactly the findings its expectation
file lists, and its good fixture is clean. The CANN golden codes' fixtures are judged with
their folders' facts by tests/test_audit_cann.py; every code has a good and a bad fixture
somewhere (tests/test_audit_registry.py)."""

from __future__ import annotations

import pytest

from audit_family_fixtures import FAMILY_FIXTURES, check_bad, check_good, codes

FAMILY_CODES = [c for c in codes("GD") + codes("TS") + codes("KN") if any(FAMILY_FIXTURES.glob(f"*/{c}_bad.py"))]


def test_the_family_fixtures_cover_every_rule_of_the_three_families_but_the_cann_goldens():
    cann = {p.stem.split("_")[0] for p in (FAMILY_FIXTURES.parent / "audit_cann").glob("*_bad.py")}
    assert len(FAMILY_CODES) >= 15 and set(codes("GD") + codes("TS") + codes("KN")) - set(FAMILY_CODES) <= cann


@pytest.mark.parametrize("code", FAMILY_CODES)
def test_bad_fixture_gives_exactly_the_expected_findings(code):
    check_bad(code)


@pytest.mark.parametrize("code", FAMILY_CODES)
def test_good_fixture_is_clean(code):
    check_good(code)
