"""The site's "Ask the KB" page: a question box answered in the page, offline, by rank.js (the
browser's copy of rank.py) over the index ``kbt route`` asks, written beside the page when the
site is built (browser_index.py); example questions to click; and how to ask the same from a
terminal. (Sphinx's own search box finds pages by words; this one ranks them as the router does.)"""

from __future__ import annotations

import html
from pathlib import Path
from urllib.parse import quote

from kb_tools.search.browser_index import write_browser_search

EXAMPLES = (
    ("a symptom", "my fp16 op fails precision"),
    ("a symptom", "bernoulli results differ from GPU"),
    ("a question", "which tolerance for int8 add"),
    ("Chinese", "精度对不齐"),
    ("Chinese", "非连续"),
    ("mixed", "host侧做了reshape"),
    ("a pasted error", "aclnnInplaceCopy failed, error code is 561103"),
    ("an API name", "vf.exp"),
)
SHOWN = 5  # pages listed for a question, as kbt route lists by default
PAGE = "ask.md"
ASK_JS = Path(__file__).resolve().parent / "ask.js"


def _box(scripts: list[str]) -> str:
    examples = " · ".join(f'<a href="?q={quote(q)}" title="{html.escape(kind)}">{html.escape(q)}</a>' for kind, q in EXAMPLES)
    tags = "\n".join(f'<script src="_static/{name}"></script>' for name in scripts)
    return ("```{raw} html\n"
            f'<form id="opkb-ask" class="opkb-ask" role="search" data-limit="{SHOWN}">\n'
            '<input type="search" name="q" aria-label="your question" autocomplete="off" '
            'placeholder="a question, a symptom, 中文, or the error you are looking at">\n'
            '<button type="submit">Ask</button>\n</form>\n'
            f'<p class="opkb-ask-examples">Try: {examples}</p>\n'
            '<div id="opkb-ask-answer" class="opkb-ask-answer" aria-live="polite"></div>\n'
            '<noscript><p>This box needs JavaScript; <code>kbt route "your question"</code> gives the same answer.</p></noscript>\n'
            f"{tags}\n```\n")


def ask_page_markdown(scripts: list[str]) -> str:
    """The page, loading ``scripts`` (names under ``_static/``) in order."""
    return (
        "# Ask the KB\n\n"
        "Ask in your own words — English, Chinese or both, a symptom, or the error message you are looking at — "
        f"and the {SHOWN} pages that answer it are listed, best first, with the task(s) that list each page and "
        "the words that matched. The answer is worked out in this page, offline: it ranks the pages as "
        "`kbt route` does, over a copy of its index made when this site was built.\n\n"
        + _box(scripts) +
        "\nA task id or a task's wording from [the router](router.md) (`decide-host-work`) gives that task's pages "
        "in the router's order. Chinese is matched by character pairs, so a phrase is found inside a longer "
        "sentence; error codes and API names (`561103`, `vf.exp`, `torch.npu.synchronize`) match only as whole "
        "words; [the glossary](glossary.md) carries a question into the other language.\n\n"
        "## From a terminal\n\n"
        "The same answers, from an index of the pages kept in the user's cache:\n\n"
        "    kbt route \"my fp16 op fails precision\"\n"
        "    kbt route \"非连续\" --limit 3\n"
        "    kbt route \"aclnnInplaceCopy failed, error code is 561103\" --format json\n"
        "    kbt route - < error.txt          # a longer pasted message, from standard input\n"
    )


def write_ask_page(root: Path, src: Path) -> None:
    """The page and its scripts (the tokenizer, the index, the ranking, the box) in a site's sources."""
    static = src / "_static"
    scripts = write_browser_search(root, static)
    (static / ASK_JS.name).write_text(ASK_JS.read_text(encoding="utf-8"), encoding="utf-8")
    (src / PAGE).write_text(ask_page_markdown([*scripts, ASK_JS.name]), encoding="utf-8")
