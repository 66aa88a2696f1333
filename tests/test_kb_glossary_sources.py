"""The glossary holds only glosses with a source (review 4, T1-T3): its Chinese side is the seeds'
own wording, each term cites the seed section (or public file) it rests on, and that section
holds the term. A gloss the KB invented would send a developer who pastes the seed's words
nowhere. Seed-free checks run always; those that read the seeds skip, and say so, without them."""

import re
from pathlib import Path

import pytest

from conftest import REPO
from kb_tools.kb.glossary import GlossaryTerm, load_glossary, source_problems
from kb_tools.kb.sources import load_sources
from kb_tools.lint import run_lint

SEEDS = REPO.parent / "shared" / "seeds"
SECTIONS = {name: set(seed.sections) for name, seed in load_sources(REPO / "kb").items()}


def _term(source: str) -> GlossaryTerm:
    return GlossaryTerm(zh="同址", en="same-address alias", aliases=(), pages=("dense-alias",), errors=(), line=7, source=source)


@pytest.mark.parametrize("source,fault", [
    ("", "has no source"),
    ("the third KB review", "neither a seed section"),
    ("009 §1", "does not list"),
    ("001 §9.9", "no section '§9.9'"),
    ("001 §3.2.2; kb review 4", "neither a seed section"),
])
def test_an_unsourced_or_miscited_gloss_is_a_problem(source, fault):
    problems = source_problems(_term(source), SECTIONS)
    assert len(problems) == 1 and fault in problems[0] and "同址" in problems[0]


@pytest.mark.parametrize("source", ["001 §3.2.2", "003 boundary-rule", "000 appendix; 004 §4.3",
                                    "hicann/ops-test-kit@3675093 docs/Precision_Comparison.md"])
def test_a_seed_section_or_public_file_is_a_source(source):
    assert source_problems(_term(source), SECTIONS) == []


def test_every_gloss_of_the_glossary_cites_a_source():
    problems = [p for t in load_glossary(REPO) for p in source_problems(t, SECTIONS)]
    assert problems == []


def test_lint_fails_an_unsourced_gloss_with_its_line(repo_copy):
    path = repo_copy / "kb" / "glossary.yaml"
    text = path.read_text("utf-8")
    lines = text.count("\n")
    path.write_text(text + "  - zh: 同址展开\n    en: in-place expansion\n    pages: [dense-alias]\n", "utf-8")
    found = [d for r in run_lint(repo_copy) if r.name == "glossary" for d in r.diagnostics if d.code == "LN114"]
    assert [(d.line, "has no source" in d.message) for d in found] == [(lines + 1, True)]


def test_no_two_seed_words_share_one_english_gloss():
    """同址 (same address) and 原地 (in place) are different conditions; one English word for both,
    or one's gloss listed as the other's alias, merges them (review 4, N5)."""
    terms = load_glossary(REPO)
    owner = {}
    for t in terms:
        assert t.en.lower() not in owner, f"{t.zh} and {owner[t.en.lower()]} are both glossed {t.en!r}"
        owner[t.en.lower()] = t.zh
    crossed = [(t.zh, a, owner[a.lower()]) for t in terms for a in t.aliases if owner.get(a.lower(), t.zh) != t.zh]
    assert crossed == []


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def _section_spans(name: str) -> dict[str, tuple[int, int]]:
    """Each section of a seed as a span of its whitespace-free text, from its heading (where
    kb/sources.yaml records it) to the next heading."""
    text = _squash((SEEDS / name).read_text(encoding="utf-8"))
    seed = load_sources(REPO / "kb")[name]
    starts = sorted((text.find(_squash(h.split(" (")[0])), key) for key, h in seed.sections.items())
    starts = [(pos, key) for pos, key in starts if pos >= 0]
    return {key: (pos, starts[i + 1][0] if i + 1 < len(starts) else len(text)) for i, (pos, key) in enumerate(starts)}


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seeds not beside the checkout ({SEEDS}): glossary sources not checked")
def test_every_chinese_gloss_is_written_in_a_seed():
    seeds = "\n".join(p.read_text(encoding="utf-8") for p in sorted(SEEDS.glob("*.txt")))
    invented = [t.zh for t in load_glossary(REPO) if t.zh not in seeds]
    assert not invented, f"glossary terms no seed writes: {invented}"


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seeds not beside the checkout ({SEEDS}): glossary citations not checked")
def test_each_cited_seed_section_holds_its_term():
    wrong = []
    for term in load_glossary(REPO):
        for cite in (c.strip() for c in term.source.split(";")):
            if not re.match(r"^\d{3} ", cite):
                continue  # a public file: its form is checked above
            number, key = cite.split(" ", 1)
            name = next(f for f in SECTIONS if f.startswith(number + "_"))
            text = _squash((SEEDS / name).read_text(encoding="utf-8"))
            start, end = _section_spans(name)[key]
            if _squash(term.zh) not in text[start:end]:
                wrong.append(f"{term.zh}: {cite}")
    assert not wrong, f"glossary sources whose section does not hold the term: {wrong}"
