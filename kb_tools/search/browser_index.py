"""The search index as the site's Ask page reads it: the tables of the SQLite index that
``kbt route`` asks (search/index.py), written out as plain data for rank.js, the browser's
copy of rank.py, so that a question is ranked in the page with no server and no network.

Nothing is derived again here: each page's column tokens are read back from the FTS table
and the tasks and glossary from their tables, so the page and the command rank one index.
The data is a JavaScript file, not JSON, because a page opened from disk (file://) may load
a script beside it but may not fetch a JSON file.
"""

from __future__ import annotations

import json
from pathlib import Path

from kb_tools.search.answer import MAX_QUERY_CHARS
from kb_tools.search.index import COLUMNS, open_index
from kb_tools.search.rank import EXPANSION_WEIGHT, MAX_GLOSSARY_SHOWN, MAX_QUERY_TOKENS, TASK_WEIGHT

JS_NAME = "ask-index.js"
RANK_JS = Path(__file__).resolve().parent / "rank.js"
TOKENS_JS = Path(__file__).resolve().parent / "tokens.js"


def _counts(text: str) -> dict[str, int]:
    counts: dict[str, int] = {}
    for token in text.split():
        counts[token] = counts.get(token, 0) + 1
    return counts


def browser_index(root: Path) -> dict:
    """Pages (with each column's token counts), tasks, glossary names and the ranking's weights."""
    conn = open_index(root)
    columns = list(COLUMNS)
    docs = {row[0]: [_counts(text) for text in row[1:]]
            for row in conn.execute(f"SELECT rowid, {', '.join(columns)} FROM docs")}
    pages = [{"n": n, "id": page_id, "path": path, "title": title, "tasks": json.loads(tasks), "columns": docs[n]}
             for n, page_id, path, title, tasks in conn.execute("SELECT n, id, path, title, tasks FROM pages ORDER BY n")]
    tasks = [{"id": i, "wording": w, "skills": json.loads(s), "refs": json.loads(r), "said": json.loads(said)}
             for i, w, s, r, said in conn.execute("SELECT id, wording, skills, refs, said FROM tasks ORDER BY ord")]
    glossary = [json.loads(names) for (names,) in conn.execute("SELECT names FROM glossary ORDER BY ord")]
    return {"weights": list(COLUMNS.values()), "expansion_weight": EXPANSION_WEIGHT, "task_weight": TASK_WEIGHT,
            "max_query_tokens": MAX_QUERY_TOKENS, "max_glossary_shown": MAX_GLOSSARY_SHOWN,
            "max_query_chars": MAX_QUERY_CHARS, "pages": pages, "tasks": tasks, "glossary": glossary}


def browser_index_js(root: Path) -> str:
    return "var OPKB_ASK_INDEX = " + json.dumps(browser_index(root), ensure_ascii=False, separators=(",", ":")) + ";\n"


def write_browser_search(root: Path, static: Path) -> list[str]:
    """The Ask page's scripts in ``static`` (a site's ``_static``), in the order a page loads them."""
    static.mkdir(parents=True, exist_ok=True)
    for script in (TOKENS_JS, RANK_JS):
        (static / script.name).write_text(script.read_text(encoding="utf-8"), encoding="utf-8")
    (static / JS_NAME).write_text(browser_index_js(root), encoding="utf-8")
    return [TOKENS_JS.name, JS_NAME, RANK_JS.name]
