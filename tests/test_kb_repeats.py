"""Repeated numbers (kb_tools/kb/repeats.py, `kbt lint` LN144 and LN145): which numbers count as
facts, what is never read as one, a number planted on two pages of a copy of the KB, and a copy
that drifted by one digit."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

from conftest import REPO
from kb_tools.kb.numbers import numbers
from kb_tools.kb.pages import load_kb
from kb_tools.kb.repeats import near, near_copies, own_numbers, repeat_drift, significant, stated
from kb_tools.kb.values import load_values


def _significant(text: str) -> bool:
    found = numbers(text)
    assert len(found) == 1, text
    return any(significant(key, found[0].text) for key in found[0].keys)


@pytest.mark.parametrize("text", ["35,652,608", "4096", "128", "2048", "0.5", "50 %", "1e-3", "2.3e-6",
                                  "3.2.0", "8.5.0rc1", "77/77", "16/8/4/2", "192 KiB"])
def test_what_counts_as_a_significant_number(text):
    assert _significant(text)


@pytest.mark.parametrize("text", ["1000", "64", "16", "2025", "1998", "3/4", "four", "a quarter", "1:4"])
def test_round_small_years_words_and_ratios_do_not_count(text):
    assert not _significant(text)


@pytest.mark.parametrize("text", [
    "seed 001 §3.5.1 says so", "see §5.3 and 001 §2.1.4", "quoted at 001:340-342", "values.py:123 reads it",
    "commit 295d1e7fe793d3e5 holds it", "the constant `4096` here", "a SHA-256 of the package",
    "a [link](../x/page-1234.md) and https://example.com/a/8192/b", "```\nx = 35652608\n```",
    "Before:\n\n    start = align_up(n, 256)\n\nafter.", "<!-- 65,504 in a comment -->",
])
def test_citations_code_names_places_and_hashes_are_not_read_as_numbers(text):
    assert stated(text) == {}


def test_a_prose_number_is_stated_with_its_line():
    got = stated("first line\nthe workspace was 35,652,608 B and `1,024` in code\n")
    assert list(got.values()) == [("35,652,608", 1)]


def test_an_own_numbers_declaration_needs_a_reason_and_numbers():
    owned, problems = own_numbers("<!-- own-numbers: 4,096; 0.5 -- ours, a tile size and a probability -->")
    assert [text for text, _, _ in owned] == ["4,096", "0.5"] and problems == []
    _, problems = own_numbers("text\n\n<!-- own-numbers: 4,096 -->")
    assert problems == [(2, "an own-numbers comment needs its reason after ' -- '")]
    _, problems = own_numbers("<!-- own-numbers: four thousand -- why -->")
    assert problems == [(0, "own-numbers entry 'four thousand' is not one number")]


def test_the_shipped_kb_has_no_unchecked_repeated_number():
    kb = load_kb(REPO)
    registered = {k for v in load_values(kb.kb_dir) if v.kind == "number" for k in v.value.keys}
    assert repeat_drift(kb.pages, registered) == []


def _append(page, text):
    page.write_text(page.read_text("utf-8").rstrip("\n") + "\n\n" + text + "\n", "utf-8")


def test_a_number_planted_on_two_unlinked_pages_fails_lint_with_one_line_naming_both(kbt, repo_copy):
    a = repo_copy / "kb" / "constraints" / "integer-narrowing.md"
    b = repo_copy / "kb" / "patterns" / "cat-lowering.md"
    assert "cat-lowering.md" not in a.read_text("utf-8") and "integer-narrowing.md" not in b.read_text("utf-8")
    _append(a, "The measured launch overhead was 7,321,907 ns.")
    _append(b, "A launch costs 7,321,907 ns on the reference board.")
    result = kbt("lint", root=repo_copy)
    lines = [ln for ln in result.err.splitlines() if "LN144" in ln]
    assert len(lines) == 1, result.err
    # the home is the first page by path on a tie, so the line is reported on the other one
    assert re.search(r"cat-lowering\.md:\d+: LN144 7,321,907 is also stated on \S*integer-narrowing\.md:\d+", lines[0]), lines[0]
    assert "kb/values.yaml" in lines[0] and "own-numbers" in lines[0]
    assert result.code != 0 and "Traceback" not in result.out + result.err


def test_linking_the_home_or_declaring_the_number_own_clears_it(kbt, repo_copy):
    a = repo_copy / "kb" / "constraints" / "integer-narrowing.md"
    b = repo_copy / "kb" / "patterns" / "cat-lowering.md"
    _append(a, "The measured launch overhead was 7,321,907 ns ([cat-lowering](../patterns/cat-lowering.md)).")
    _append(b, "A launch costs 7,321,907 ns on the reference board.")
    assert "LN144" not in kbt("lint", root=repo_copy).err
    _append(a, "<!-- own-numbers: 0.731 -- a number this page never states -->")
    result = kbt("lint", root=repo_copy)
    last = len(a.read_text("utf-8").splitlines())
    assert f"integer-narrowing.md:{last}: LN144 own number 0.731 is not a significant number this page states" in result.err, result.err
    assert result.code != 0 and "Traceback" not in result.out + result.err


def test_a_planted_number_equal_to_a_registered_value_is_left_to_the_value_check(kbt, repo_copy):
    page = repo_copy / "kb" / "patterns" / "cat-lowering.md"
    _append(page, "Fp16's largest finite value is 65,504.")
    err = kbt("lint", root=repo_copy).err
    assert "LN144" not in err
    assert re.search(r"cat-lowering\.md:\d+: LN143 states fp16-max-finite", err), err


@pytest.mark.parametrize("a, b, close", [
    (69207940, 69207040, True), (16385, 16384, True), (4095, 4096, True),
    (69207552, 69207040, False), (65504, 65536, False), (1024, 1025, True), (10000, 10001, False), (1000, 1001, False), (2048, 12048, False),
])
def test_near_is_one_digit_apart_with_four_significant_digits(a, b, close):
    assert near(a, b) is close and near(b, a) is close


def test_a_near_copy_is_reported_against_the_registered_value_or_the_commoner_number():
    assert near_copies({69207940: ["p"]}, {("n", Fraction(69207040))}) == [(69207940, 69207040, None)]
    assert near_copies({7321907: ["a", "b"], 7321977: ["c"]}, set()) == [(7321977, 7321907, ["a", "b"])]
    assert near_copies({7321907: ["a"], 7321977: ["c"]}, set()) == [(7321907, 7321977, ["c"])]


def test_a_registered_value_copied_with_one_digit_changed_fails_lint(kbt, repo_copy):
    page = repo_copy / "kb" / "playbooks" / "troubleshooting.md"
    _append(page, "The old chain once needed 69,207,940 bytes.")
    err = kbt("lint", root=repo_copy).err
    assert re.search(r"troubleshooting\.md:\d+: LN145 69,207,940 differs in one digit from 69,207,040, stated on a registered value", err), err


def test_an_unregistered_number_copied_with_one_digit_changed_names_the_page_it_copies(kbt, repo_copy):
    kb = repo_copy / "kb"
    _append(kb / "constraints" / "integer-narrowing.md", "<!-- own-numbers: 7,321,907 -- a test's own -->\nThe overhead was 7,321,907 ns.")
    _append(kb / "patterns" / "cat-lowering.md", "A launch costs 7,321,977 ns.")
    err = kbt("lint", root=repo_copy).err
    lines = [ln for ln in err.splitlines() if "LN145" in ln]
    assert lines == [], "a number a page declares its own is not a copy of anything"
    _append(kb / "patterns" / "exact-fast-paths.md", "The overhead was 7,321,907 ns ([integer-narrowing](../constraints/integer-narrowing.md)).")
    _append(kb / "patterns" / "dynamic-shape-versions.md", "The overhead was 7,321,907 ns ([integer-narrowing](../constraints/integer-narrowing.md)).")
    err = kbt("lint", root=repo_copy).err
    lines = [ln for ln in err.splitlines() if "LN145" in ln]
    assert len(lines) == 1 and re.search(r"cat-lowering\.md:\d+: LN145 7,321,977 differs in one digit from 7,321,907, stated on \S*dynamic-shape-versions\.md:\d+", lines[0]), err
