"""Drift between the pages and the seeds: every section a page cites is registered in
kb/sources.yaml, every registered heading is really in its seed, and every number a page quotes
in seed style (35,652,608 · 0.000763 · 77/77 · 1.5625 %) appears in a seed the page cites —
unless the page lists it in its drift-exceptions comment as its own arithmetic.

Drift between the pages themselves: a fact registered in kb/facts.yaml is stated on its home
page and quoted word for word elsewhere; a second, diverging statement of it fails here and in
`kbt lint`."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import REPO
from kb_tools.kb.facts import fact_drift, load_facts, statements
from kb_tools.kb.pages import load_kb
from kb_tools.kb.sources import drift_exceptions, heading_drift, load_sources, number_drift, quoted_numbers, seeds_dir

KB = load_kb(REPO)
FACTS = load_facts(KB.kb_dir)
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


# ---- registered facts: one home, quotes elsewhere ------------------------------------------

def _quoting_pages(fact_id: str) -> list[str]:
    return sorted(pid for pid, page in KB.pages.items()
                  if any(s.fact_id == fact_id for s in statements(page.body)[0]))


def test_every_registered_fact_is_stated_once_and_quoted_as_written():
    assert [str(d) for d in fact_drift(KB.pages, FACTS)] == []


def test_the_facts_several_pages_need_are_registered_with_a_home_and_quotes():
    ids = {f.id for f in FACTS}
    assert {"collapsed-golden", "empty-tensor-launch", "criterion-defaults", "offset-check-order"} <= ids
    for fact in FACTS:
        quoting = _quoting_pages(fact.id)
        assert fact.home in quoting, fact.id
        assert len(quoting) >= 2, f"{fact.id} is stated on {quoting} only: register only facts several pages need"


def _with_body(page_id: str, body: str) -> dict:
    pages = dict(KB.pages)
    pages[page_id] = replace(KB.pages[page_id], body=body)
    return pages


def test_a_second_diverging_statement_of_a_fact_fails():
    body = KB.pages["troubleshooting"].body
    changed = body.replace("either as a false red or as a blind green", "as a false red", 1)
    assert changed != body
    diags = fact_drift(_with_body("troubleshooting", changed), FACTS)
    assert [d.code for d in diags] == ["LN122"]
    line = str(diags[0])
    assert "troubleshooting.md" in line and "golden-promote.md" in line and "'collapsed-golden'" in line


def test_a_correction_on_the_home_page_makes_every_stale_quote_fail():
    body = KB.pages["golden-promote"].body
    changed = body.replace("depending on the output's scale;\nread", "depending on the output's scale and dtype;\nread", 1)
    changed = changed if changed != body else body.replace("depending on the output's scale", "depending on scale and dtype", 1)
    assert changed != body
    diags = fact_drift(_with_body("golden-promote", changed), FACTS)
    quoting = set(_quoting_pages("collapsed-golden")) - {"golden-promote"}
    assert {d.code for d in diags} == {"LN122"}
    assert {KB.pages[pid].path.name for pid in quoting} == {d.path.rsplit("/", 1)[-1] for d in diags}


@pytest.mark.parametrize(("page_id", "retired"), [
    ("op-prototype", "Old integer torch.div in old releases was floor division."),
    ("wrapper-boundary", "Empty outputs take the no-launch\nfast path."),
    ("random-op-verification", "Check the offset first, before anything else."),
])
def test_a_retired_form_of_a_fact_fails_without_any_marker(page_id, retired):
    body = KB.pages[page_id].body + "\n" + retired + "\n"
    diags = fact_drift(_with_body(page_id, body), FACTS)
    assert [d.code for d in diags] == ["LN123"]
    assert diags[0].line == KB.pages[page_id].body_line + body.count("\n") - 1 - retired.count("\n")


def test_a_retired_form_in_an_invariant_fails():
    page = KB.pages["dense-alias"]
    inv = replace(page.invariants[0], text=page.invariants[0].text + " Any one failing selects the fallback.")
    pages = dict(KB.pages)
    pages["dense-alias"] = replace(page, invariants=(inv, *page.invariants[1:]))
    pages["non-contiguous-fallback"] = replace(KB.pages["non-contiguous-fallback"], invariants=(inv,))
    diags = fact_drift(pages, FACTS)
    assert [(d.code, d.path.rsplit("/", 1)[-1]) for d in diags] == [("LN123", "non-contiguous-fallback.md")]


def test_a_quote_without_a_link_home_and_a_broken_marker_are_reported():
    page = KB.pages["wave-expansion"]
    home = next(s for s in statements(KB.pages["exact-fast-paths"].body)[0] if s.fact_id == "offset-check-order")
    body = page.body + f"\n<!-- fact: offset-check-order -->{home.text}<!-- /fact -->\n<!-- fact: no-such-fact -->x<!-- /fact -->\n<!-- fact: empty-tensor-launch -->\n"
    codes = sorted(d.code for d in fact_drift(_with_body("wave-expansion", body), FACTS))
    assert codes == ["LN124", "LN125", "LN125"]


def test_kbt_lint_names_both_pages_and_the_fact_in_one_line(kbt, repo_copy):
    page = repo_copy / "kb" / "playbooks" / "numerical-error-localisation.md"
    page.write_text(page.read_text("utf-8").replace("read the third party's own errors", "trust the verdict", 1), "utf-8")
    result = kbt("lint", root=repo_copy)
    assert result.code != 0
    lines = [ln for ln in result.err.splitlines() if "collapsed-golden" in ln]
    assert len(lines) == 1
    assert "numerical-error-localisation.md" in lines[0] and "golden-promote.md" in lines[0] and "LN122" in lines[0]
    assert "Traceback" not in result.out + result.err


def test_a_home_page_without_its_statement_or_a_missing_home_is_reported():
    body = KB.pages["exact-fast-paths"].body.replace("<!-- fact: offset-check-order -->", "", 1)
    diags = fact_drift(_with_body("exact-fast-paths", body), FACTS)
    assert ("LN121", "exact-fast-paths.md") in {(d.code, d.path.rsplit("/", 1)[-1]) for d in diags}
    stray = replace(FACTS[0], id="stray", home="no-such-page")
    assert [d.code for d in fact_drift(KB.pages, [*FACTS, stray])] == ["LN120"]
    assert fact_drift(KB.pages, [*FACTS, stray], unloadable=("no-such-page",)) == []
