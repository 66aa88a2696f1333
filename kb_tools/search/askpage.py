"""The site's "Ask the KB" page: how to ask ``kbt route`` in your own words, with questions
answered by the same search when the site is built, so the page never shows an answer the
command would not give. (Sphinx's own search box does not segment Chinese.)"""

from __future__ import annotations

from pathlib import Path

from kb_tools.search.answer import answer

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
SHOWN = 3


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "/")


def ask_page_markdown(root: Path) -> str:
    rows = []
    for kind, question in EXAMPLES:
        hits = answer(root, question, limit=SHOWN).hits
        found = "<br>".join(f"[{_cell(h.title)}]({h.path}) ({', '.join(h.matched[:4])})" for h in hits) or "—"
        rows.append(f"| {kind} | `kbt route \"{question}\"` | {found} |")
    return (
        "# Ask the KB\n\n"
        "Ask in your own words — English, Chinese or both, a symptom, or the error message you are looking at — "
        "and `kbt route` lists the pages that answer it, best first, with the task(s) that list each page and "
        "the words that matched:\n\n"
        "    kbt route \"my fp16 op fails precision\"\n"
        "    kbt route \"非连续\" --limit 3\n"
        "    kbt route \"aclnnInplaceCopy failed, error code is 561103\" --format json\n"
        "    kbt route - < error.txt          # a longer pasted message, from standard input\n\n"
        "A task id or a task's wording from [the router](router.md) (`kbt route decide-host-work`) gives that task's "
        "pages in the router's order. Chinese is matched by character pairs, so a phrase is found inside a longer "
        "sentence; error codes and API names (`561103`, `vf.exp`, `torch.npu.synchronize`) match only as whole "
        "words; [the glossary](glossary.md) carries a question into the other language. Everything runs offline "
        "from an index of the pages kept in the user's cache.\n\n"
        f"These questions were answered by the same search when this site was built (top {SHOWN}):\n\n"
        "| kind | question | pages (words that matched) |\n|---|---|---|\n" + "\n".join(rows) + "\n"
    )
