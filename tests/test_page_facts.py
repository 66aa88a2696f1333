"""A notebook shows the fact box and invariants of the pages it proves (JupyterLab hides a kb/
page's front matter, which holds them): every notebook's first code cell makes the one call,
each page whose demonstrated_by names the notebook is there with its facts and every invariant,
its links resolve from notebooks/, and a notebook no page names is refused."""

from __future__ import annotations

import re

import pytest

from conftest import REPO
from kb_tools.kb.pages import load_kb
from kb_tools.outputs.notebook_runner import notebook_sources
from kb_tools.outputs.page_facts import rules_shown

KB = load_kb(REPO)


def _first_code_cell(text: str) -> str:
    cells = re.split(r"^# %%(.*)$", text, flags=re.M)  # [before, header, body, header, body, ...]
    return next(body for header, body in zip(cells[1::2], cells[2::2]) if "[markdown]" not in header)


@pytest.mark.parametrize("source", notebook_sources(REPO), ids=lambda s: s.stem)
def test_each_notebook_shows_the_rules_it_proves_first(source):
    assert f'rules_shown("{source.stem}")' in _first_code_cell(source.read_text(encoding="utf-8"))


def test_each_page_proved_is_shown_with_its_facts_and_invariants():
    markdown = rules_shown("promote", REPO)._repr_markdown_()
    proved = [p for p in KB.pages.values() if "notebooks/promote.py" in p.demonstrated_by]
    others = [p for p in KB.pages.values() if p not in proved]
    assert len(proved) >= 2 and markdown.count("<details>") == len(proved) == markdown.count("</details>")
    for page in proved:
        assert f"<code>{page.id}</code>" in markdown and f"({f'../kb/{page.rel_path}'})" in markdown
        assert all(f"| `{inv.id}` |" in markdown for inv in page.invariants), page.id
        assert f"| trigger | {page.trigger.replace('|', '/')} |" in markdown
    assert not any(f"<code>{page.id}</code>" in markdown for page in others)
    for row in ("kind", "routing", "applies to", "demonstrated by", "sources", "related"):
        assert markdown.count(f"| {row} |") == len(proved), row
    links = re.findall(r"\]\(([^)]+)\)", markdown)
    assert links and all((REPO / "notebooks" / link).is_file() for link in links)


def test_a_notebook_no_page_names_is_refused():
    with pytest.raises(ValueError, match=r"no KB page names notebooks/no_such_notebook\.py in its demonstrated_by"):
        rules_shown("no_such_notebook", REPO)
