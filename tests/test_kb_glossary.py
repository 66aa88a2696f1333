"""The glossary: its loader (the interface free-text routing reads), the lint check that keeps it
true to the pages, and its page on the site."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest

from conftest import REPO
from kb_tools.diagnostics import KbError, KbErrors
from kb_tools.kb.glossary import GlossaryTerm, glossary_markdown, load_glossary
from kb_tools.kb.pages import load_kb
from kb_tools.lint import run_lint
from kb_tools.search.answer import answer

ISSUE_TERMS = ("非连续", "余弦相似度", "带宽利用率", "累加", "动态shape", "格式转换")


def _write(root: Path, text: str) -> Path:
    (root / "kb").mkdir(parents=True, exist_ok=True)
    path = root / "kb" / "glossary.yaml"
    path.write_text(text, "utf-8")
    return path


def _codes(root: Path) -> list[str]:
    return [d.code for r in run_lint(root) if r.name == "glossary" for d in r.diagnostics]


def test_real_glossary_loads_with_the_terms_developers_search_for():
    terms = load_glossary(REPO)
    assert {t.zh for t in terms} >= set(ISSUE_TERMS)
    wb = next(t for t in terms if t.en == "wrapper boundary")
    assert "561103" in wb.errors and "wrapper-boundary" in wb.pages
    assert all(isinstance(t, GlossaryTerm) and t.pages and t.line > 0 for t in terms)
    with pytest.raises(FrozenInstanceError):
        terms[0].zh = "x"


def test_entry_fields_and_lines(tmp_path):
    _write(tmp_path, "# c\nterms:\n  - zh: 累加\n    en: accumulate\n    pages: [a]\n"
                     "  - zh: 非连续\n    en: non-contiguous\n    aliases: [strided]\n    pages: [b, c]\n    errors: [\"561103\"]\n")
    first, second = load_glossary(tmp_path)
    assert (first.aliases, first.errors, first.line) == ((), (), 3)
    assert (second.zh, second.aliases, second.pages, second.errors, second.line) == ("非连续", ("strided",), ("b", "c"), ("561103",), 6)


def test_missing_file_is_an_empty_glossary(tmp_path):
    assert load_glossary(tmp_path) == []


@pytest.mark.parametrize("text,line", [
    ("terms: {zh: x}\n", 1),                                         # not a list
    ("terms:\n  - zh: 累加\n    pages: [a]\n", 2),                     # en missing
    ("terms:\n  - zh: 累加\n    en: acc\n    pages: []\n", 4),         # no pages
    ("terms:\n  - zh: 累加\n    en: acc\n    pages: [a]\n    colour: red\n", 5),   # unknown key
    ("terms:\n  - zh: 累加\n    en: acc\n    pages: a\n", 4),           # pages not a list
    ("terms:\n  - zh: 累加\n    en: a\n    pages: [a]\n  - zh: 累加\n    en: b\n    pages: [b]\n", 5),   # duplicate term
    ("terms:\n  - zh: 累加\n    zh: again\n", 3),                     # duplicate key (safe loader)
    ("terms: [\n", 2),                                               # YAML syntax
    ("!!python/object/apply:os.system [echo]\n", 1),                  # hostile YAML
])
def test_malformed_glossary_is_one_error_with_its_line(tmp_path, text, line):
    _write(tmp_path, text)
    with pytest.raises((KbError, KbErrors)) as exc:
        load_glossary(tmp_path)
    diags = getattr(exc.value, "diagnostics", None) or [exc.value.diagnostic]
    assert diags[0].path.endswith("glossary.yaml") and diags[0].line == line and diags[0].code.startswith("GL")


def test_lint_checks_pages_and_both_terms(repo_copy):
    assert _codes(repo_copy) == []
    path = repo_copy / "kb" / "glossary.yaml"
    text = path.read_text("utf-8")
    path.write_text(text + "  - zh: 不存在的术语\n    en: no such term anywhere\n    source: \"003 boundary-rule\"\n    pages: [wrapper-boundary, no-such-page]\n", "utf-8")
    assert sorted(_codes(repo_copy)) == ["LN110", "LN111", "LN112"]


def test_site_page_links_every_named_page():
    kb = load_kb(REPO)
    terms = load_glossary(REPO)
    page = glossary_markdown(terms, {pid: p.rel_path for pid, p in kb.pages.items()})
    for term in terms:
        assert term.zh in page
        for pid in term.pages:
            assert f"[{pid}](kb/{kb.pages[pid].rel_path})" in page


def test_each_chinese_term_routes_to_one_of_its_pages():
    """A developer who pastes the seed's word (白名单, 静态审计, 多核利用率, 回退 ...) lands, within
    `kbt route`'s first three answers, on a page the glossary says treats it."""
    misses = {}
    for term in load_glossary(REPO):
        top = [h.id for h in answer(REPO, term.zh, limit=3).hits][:3]
        if not set(top) & set(term.pages):
            misses[term.zh] = top
    assert misses == {}
