"""Every rule of the four seeds is somewhere: each section that holds a rule is cited by a
page, every page carries the six body sections, and static invariants name real rule codes."""

from __future__ import annotations

from conftest import REPO
from kb_tools.audit.codes import RULES
from kb_tools.kb.pages import BODY_SECTIONS, body_sections, load_kb
from kb_tools.kb.sources import load_sources

KB = load_kb(REPO)


def test_every_seed_section_with_a_rule_is_cited():
    seeds = load_sources(KB.kb_dir)
    cited = {(s["seed"], s["section"]) for page in KB.pages.values() for s in page.sources}
    missing = [f"{name} {key}" for name, seed in seeds.items() for key in seed.sections
               if key not in seed.background and (name, key) not in cited]
    assert not missing, f"no page cites: {missing}"


def test_every_page_has_the_six_sections_in_order():
    for page in KB.pages.values():
        assert [s for s in body_sections(page.body) if s in BODY_SECTIONS] == list(BODY_SECTIONS), page.rel_path


def test_static_invariants_name_codes_the_verifier_defines():
    static = [(p.id, i) for p in KB.pages.values() for i in p.invariants if i.check == "static"]
    assert static, "no static invariant at all"
    for page_id, inv in static:
        assert inv.rule in RULES, (page_id, inv.id, inv.rule)


def test_every_wrapper_boundary_rule_code_is_claimed_by_an_invariant():
    claimed = {i.rule for i in KB.pages["wrapper-boundary"].invariants if i.check == "static"}
    assert claimed == {c for c in RULES if c.startswith("WB")}


def test_every_rule_code_is_claimed_by_some_page():
    claimed = {i.rule for p in KB.pages.values() for i in p.invariants if i.check == "static"}
    assert claimed == set(RULES)


def test_chinese_term_at_first_use():
    """Each page gives the established Chinese term in parentheses somewhere in its body."""
    for page in KB.pages.values():
        assert any("\u4e00" <= ch <= "\u9fff" for ch in page.body), page.rel_path
