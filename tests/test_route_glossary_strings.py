"""The glossary's search strings lead to pages that carry them: a developer who pastes the
error code or the call they are holding lands on a page where that string is, first for the
strings the third review found leading nowhere (561103, astype(np.float32))."""

from __future__ import annotations

import pytest

from conftest import REPO
from kb_tools.kb.glossary import load_glossary
from kb_tools.search.index import open_index
from kb_tools.search.rank import search

TERMS = load_glossary(REPO)
TEXTS = {p.stem: p.read_text("utf-8") for p in (REPO / "kb").glob("*/*.md")}
STRINGS = sorted({e for t in TERMS for e in t.errors})


def _glossary_pages(string: str) -> set[str]:
    """The pages the glossary sends ``string`` to: those of every term that lists it."""
    return {p for t in TERMS if string in t.errors or string in t.aliases for p in t.pages}


@pytest.mark.parametrize("string", STRINGS)
def test_each_search_string_is_on_a_page_the_glossary_sends_it_to(string):
    assert {p for p in _glossary_pages(string) if string in TEXTS[p]}, _glossary_pages(string)


def test_route_puts_a_glossary_page_in_the_top_three():
    conn = open_index(REPO)
    misses = {}
    for string in STRINGS:
        ranked = [h.id for h in search(conn, string, limit=3)]
        if not set(ranked) & _glossary_pages(string):
            misses[string] = ranked
    assert misses == {}


@pytest.mark.parametrize("string", ["561103", "astype(np.float32)"])
def test_the_strings_that_led_nowhere_rank_a_page_carrying_them_first(kbt, string):
    result = kbt("route", string)
    assert result.code == 0, result.err
    top = [ln for ln in result.out.splitlines() if ln.lstrip().startswith("1. ")]
    assert top, result.out
    first = top[0].split()[1].rsplit("/", 1)[-1].removesuffix(".md")
    assert first in _glossary_pages(string) and string in TEXTS[first], result.out


def test_lint_fails_a_search_string_that_left_every_page_of_its_term(kbt, repo_copy):
    for rel in ("constraints/wrapper-boundary.md", "playbooks/host-to-kernel-migration.md"):
        page = repo_copy / "kb" / rel
        page.write_text(page.read_text("utf-8").replace("561103", "5611"), "utf-8")
    result = kbt("lint", root=repo_copy)
    assert result.code != 0
    lines = [ln for ln in result.err.splitlines() if "LN113" in ln]
    assert len(lines) == 1 and "'561103'" in lines[0] and "glossary.yaml" in lines[0]
