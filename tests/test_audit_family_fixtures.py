"""Every golden, test and kernel code (GD, TS, KN): its bad fixture gives exactly the findings
its expectation file lists, and its good fixture is clean."""

from __future__ import annotations

import pytest

from audit_family_fixtures import check_bad, check_good, codes

FAMILY_CODES = codes("GD") + codes("TS") + codes("KN")


@pytest.mark.parametrize("code", FAMILY_CODES)
def test_bad_fixture_gives_exactly_the_expected_findings(code):
    check_bad(code)


@pytest.mark.parametrize("code", FAMILY_CODES)
def test_good_fixture_is_clean(code):
    check_good(code)
