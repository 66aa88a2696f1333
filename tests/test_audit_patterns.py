"""One good and one bad fixture per pattern the audit got wrong on real operator code
(issue 11): kernels in every spelling, launches through any name, tensors followed through
launches, branches, unpacking and isinstance checks, helpers that match a name pattern,
one-of-two kernel choices, and the empty-input early return. ``loop_rows`` came from the
blind batch 2 of the real-code corpus: a loop over rows of (tensor, dtype, name) and a loop
over a list of tensors are not tensors themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from audit_family_fixtures import expected
from kb_tools.audit import audit_path

PATTERNS = Path(__file__).parent / "fixtures" / "audit" / "patterns"
NAMES = sorted({p.name.rsplit("_", 1)[0] for p in PATTERNS.glob("*_good.py")})
# Fixtures that exercise an option rather than the defaults.
OPTIONS = {"helper_not_wrapper": {"wrapper_patterns": ["*_forward"]}, "launcher_option": {"launchers": ["rms_kernel"]},
           # a kernel chosen by a local alias is a launch; picking among kernels is kernel_choice's (strict) finding
           "kernel_alias": {"policy": "lenient"}}


def test_every_pattern_has_a_good_and_a_bad_fixture():
    assert len(NAMES) >= 10
    for name in NAMES:
        assert (PATTERNS / f"{name}_bad.py").is_file() and (PATTERNS / f"{name}_bad.expected").is_file(), name


@pytest.mark.parametrize("name", NAMES)
def test_good_fixture_is_clean_and_its_wrapper_found(name):
    result = audit_path(PATTERNS / f"{name}_good.py", **OPTIONS.get(name, {}))
    assert result.wrappers, "the good fixture must hold a wrapper, or it proves nothing"
    assert [str(f) for f in result.findings] == []


@pytest.mark.parametrize("name", NAMES)
def test_bad_fixture_gives_exactly_the_expected_findings(name):
    want = expected(PATTERNS / f"{name}_bad.expected")
    assert want, f"{name}_bad.expected lists nothing: the bad fixture would prove nothing"
    result = audit_path(PATTERNS / f"{name}_bad.py", **OPTIONS.get(name, {}))
    assert sorted((f.line, f.col, f.code) for f in result.findings) == want


def test_kernel_bodies_are_never_host_code():
    result = audit_path(PATTERNS / "pypto_frontend_good.py")
    assert result.wrappers == ["scale"] and result.findings == []


def test_a_helper_that_matches_the_pattern_but_returns_integers_is_not_a_wrapper():
    result = audit_path(PATTERNS / "helper_not_wrapper_good.py", wrapper_patterns=["*_forward"])
    assert result.wrappers == ["softmax_forward"]


def test_one_of_two_kernels_is_one_launch():
    result = audit_path(PATTERNS / "kernel_alias_good.py")
    assert [(w.name, w.launches) for w in result.wrapper_info] == [("pick", 1)]
    bad = audit_path(PATTERNS / "kernel_alias_bad.py")
    assert [(w.name, w.launches) for w in bad.wrapper_info] == [("pick", 2)]


def test_an_imported_kernel_called_by_name_needs_launcher():
    assert audit_path(PATTERNS / "launcher_option_good.py").wrappers == []
    assert audit_path(PATTERNS / "launcher_option_good.py", launchers=["rms_kernel"]).wrappers == ["rms"]
