"""The site's Ask page answers in the browser as ``kbt route`` answers in a terminal: in Debian's
Chromium (driven by Playwright), rank.js over the exported index gives the same pages, in the
same order, with the same scores, matched words and tasks, for the router tests' questions
(English, Chinese, mixed, pasted errors, exact tasks); the page's box and its address ask it;
a question the command refuses is refused in the page with the same reason.

Only the Ask page's scripts and its box are laid out (write_ask_page), not the whole site."""

from __future__ import annotations

import re
import shutil
from urllib.parse import quote

import pytest

from conftest import REPO
from kb_tools.search.answer import MAX_QUERY_CHARS, answer
from kb_tools.search.askpage import EXAMPLES, PAGE, SHOWN, write_ask_page
from kb_tools.search.evaluate import load_questions

# its module fixture is costly: every test of the module on one worker (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("ask-page")

# the evaluation set, the page's own examples, and the other questions tests/test_route_search.py asks
QUESTIONS = ([q.text for q in load_questions(REPO / "tests" / "route_eval.yaml")] + [q for _, q in EXAMPLES]
             + ["精度", "561103", "56110", "lower-to-isa", "Lower an operator to the ISA", "decide what runs on host",
                "wrapper", "golden", "bf16 softmax exp", "it doesn't work", "EZ1013", "torch.npu.synchronize"])


def test_the_page_offers_its_examples_and_loads_its_scripts_in_order(tmp_path):
    write_ask_page(REPO, tmp_path)
    text = (tmp_path / PAGE).read_text(encoding="utf-8")
    assert all(f'href="?q={quote(q)}"' in text for _, q in EXAMPLES)
    scripts = re.findall(r'<script src="_static/([^"]+)"></script>', text)
    # the tokenizer and the data before the ranking that uses them, the box last
    assert scripts == ["tokens.js", "ask-index.js", "rank.js", "ask.js"]
    assert all((tmp_path / "_static" / name).stat().st_size > 1000 for name in scripts)


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def ask_page(tmp_path_factory):
    """A Chromium tab on the Ask page's box and scripts, laid out as the site lays them out."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (it is in the test extra: pip install -e '.[test]')")
    browser_path = _chromium()
    if browser_path is None:
        pytest.skip("Debian's chromium is not installed (make browser installs it)")
    src = tmp_path_factory.mktemp("ask")
    write_ask_page(REPO, src)
    markdown = (src / PAGE).read_text(encoding="utf-8")
    box = markdown.split("```{raw} html\n", 1)[1].split("\n```", 1)[0]
    (src / "ask.html").write_text(f"<!doctype html><meta charset='utf-8'><body>{box}</body>", encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=browser_path, args=["--no-sandbox", "--disable-gpu"])
        tab = browser.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.goto((src / "ask.html").as_uri())
        yield tab, src, errors
        browser.close()


def _listed(tab) -> list[str]:
    return tab.eval_on_selector_all("#opkb-ask-answer li a", "links => links.map((a) => a.getAttribute('href'))")


def test_the_page_ranks_every_question_as_kbt_route(ask_page):
    tab, _, errors = ask_page
    got = tab.evaluate("(qs) => qs.map((q) => opkbAsk(OPKB_ASK_INDEX, q, %d).hits)" % SHOWN, QUESTIONS)
    want = [[h.as_json() for h in answer(REPO, q, limit=SHOWN).hits] for q in QUESTIONS]
    assert not errors
    assert len(got) == len(QUESTIONS) and sum(bool(w) for w in want) >= len(QUESTIONS) - 2
    differ = []
    for question, js, py in zip(QUESTIONS, got, want):
        same = [{k: v for k, v in h.items() if k != "score"} for h in js] == [{k: v for k, v in h.items() if k != "score"} for h in py]
        close = all((a["score"] is None and b["score"] is None) or abs(a["score"] - b["score"]) <= 1e-3 for a, b in zip(js, py))
        if not (same and close):
            differ.append((question, [h["id"] for h in js], [h["id"] for h in py]))
    assert not differ, differ


def test_the_box_and_the_address_ask_it(ask_page):
    tab, src, errors = ask_page
    for question in ("精度", "aclnnInplaceCopy failed, error code is 561103"):
        tab.fill("#opkb-ask input", question)
        tab.press("#opkb-ask input", "Enter")
        assert _listed(tab) == [h.path.replace(".md", ".html") for h in answer(REPO, question, limit=SHOWN).hits]
    tab.goto((src / "ask.html").as_uri() + "?q=561103")
    assert tab.input_value("#opkb-ask input") == "561103"
    assert _listed(tab) == [h.path.replace(".md", ".html") for h in answer(REPO, "561103", limit=SHOWN).hits] != []
    tab.goto((src / "ask.html").as_uri() + "?q=lower-to-isa")  # an exact task: its pages in the router's order
    assert "[lower-to-isa]" in tab.inner_text("#opkb-ask-answer")
    assert _listed(tab) == [h.path.replace(".md", ".html") for h in answer(REPO, "lower-to-isa").hits]
    assert not errors


@pytest.mark.parametrize("question,says", [
    ("56110", "No page matches"),  # a prefix of the code is another token
    ("   ", "the question is empty"),
    ("x" * (MAX_QUERY_CHARS + 1), f"over the {MAX_QUERY_CHARS}-character limit"),
])
def test_a_question_without_an_answer_says_why(ask_page, question, says):
    tab, _, _ = ask_page
    tab.fill("#opkb-ask input", question)
    tab.press("#opkb-ask input", "Enter")
    assert says in tab.inner_text("#opkb-ask-answer") and _listed(tab) == []
