"""Drift between the pages and the seeds: every section a page cites is registered in
kb/sources.yaml, every registered heading is really in its seed, and every number a page quotes
in seed style (35,652,608 · 0.000763 · 77/77 · 1.5625 %) appears in a seed the page cites —
unless the page lists it in its drift-exceptions comment as its own arithmetic."""

from __future__ import annotations

import pytest

from conftest import REPO
from kb_tools.kb.pages import load_kb
from kb_tools.kb.sources import drift_exceptions, heading_drift, load_sources, number_drift, quoted_numbers, seeds_dir

KB = load_kb(REPO)
SEEDS = load_sources(KB.kb_dir)
HERE = seeds_dir(REPO)
needs_seeds = pytest.mark.skipif(HERE is None, reason="the seed files (../shared/seeds) are not beside this checkout")


def _seed_texts():
    return {name: (HERE / name).read_text("utf-8") for name in SEEDS}


def test_every_cited_section_is_registered():
    unknown = [(page.id, s["seed"], s["section"]) for page in KB.pages.values() for s in page.sources
               if s["seed"] not in SEEDS or s["section"] not in SEEDS[s["seed"]].sections]
    assert unknown == []


@needs_seeds
def test_every_registered_heading_is_in_its_seed():
    assert [str(d) for d in heading_drift(SEEDS, HERE)] == []


@needs_seeds
@pytest.mark.parametrize("page_id", sorted(KB.pages))
def test_quoted_numbers_come_from_the_cited_seeds(page_id):
    assert [str(d) for d in number_drift(KB.pages[page_id], _seed_texts())] == []


@needs_seeds
def test_a_changed_seed_number_is_caught(tmp_path):
    page = KB.pages["dense-alias"]
    assert ("35,652,608", ) in {(n,) for n, _ in quoted_numbers(page.body)}
    texts = _seed_texts()
    texts["001_c7885089f64f150c.txt"] = texts["001_c7885089f64f150c.txt"].replace("35,652,608", "35,652,609")
    codes = [d.code for d in number_drift(page, texts)]
    assert "DR010" in codes


def test_numbers_in_code_blocks_and_exceptions_are_not_quotes():
    body = "Text 1,234 and 0.5 %.\n```python\nx = 9,999\n```\n<!-- drift-exceptions: 1,234 -- ours -->\n"
    assert [n for n, _ in quoted_numbers(body)] == ["1,234", "0.5 %"]
    assert drift_exceptions(body) == {"1234"}
