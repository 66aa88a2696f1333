"""Ranking pages for a question: FTS5's BM25 over the index, scaled by the share of the
question's words a page has, plus a bonus for the pages of a task whose wording the question
repeats, with the glossary carrying the question into the other language; and the words that
matched, reported for each page.

A glossary entry is used when all the tokens of one of its names (Chinese, English, an
alias, an error string) occur in the question; the tokens of its other names then form a
second query whose score counts at EXPANSION_WEIGHT, so "非连续" also finds pages that say
"non-contiguous", and a pasted "error code is 561103" finds the pages the glossary files
that code under.
"""

from __future__ import annotations

import json
import sqlite3

from kb_tools.search.index import COLUMNS
from kb_tools.search.tokens import WORD, is_cjk, key_tokens, word_tokens

EXPANSION_WEIGHT = 0.5
TASK_WEIGHT = 0.5  # added to a page's score (the best page scores 1) when a task's wording is asked
MAX_QUERY_TOKENS = 256  # distinct tokens searched: beyond this a question is a log, and costs seconds
MAX_GLOSSARY_SHOWN = 4  # glossary names listed per page among the words that matched


class Hit:
    """One page in an answer. A plain class: a dataclass costs a millisecond of start-up."""

    __slots__ = ("id", "path", "title", "score", "matched", "tasks")

    def __init__(self, id: str, path: str, title: str | None, score: float | None, matched: tuple, tasks: tuple):
        self.id, self.path, self.title = id, path, title
        self.score = score  # None for the pages of an exact task (they are not ranked)
        self.matched, self.tasks = matched, tasks

    def as_json(self) -> dict:
        return {"id": self.id, "path": self.path, "title": self.title, "score": self.score,
                "matched": list(self.matched), "tasks": list(self.tasks)}


def _fts_query(toks) -> str:
    return " OR ".join(f'"{t}"' for t in toks)


def _bm25(conn: sqlite3.Connection, toks: list[str]) -> dict[int, float]:
    if not toks:
        return {}
    weights = ", ".join(str(w) for w in COLUMNS.values())
    rows = conn.execute(f"SELECT rowid, bm25(docs, {weights}) FROM docs WHERE docs MATCH ?", (_fts_query(toks),))
    return {n: -score for n, score in rows}  # FTS5 scores lower-is-better


def _expansion(conn: sqlite3.Connection, asked: set[str]) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(tokens to add, every (name, key tokens) of the entries the question names)."""
    extra, names_used = [], []
    for (names_json,) in conn.execute("SELECT names FROM glossary ORDER BY ord"):
        names = json.loads(names_json)
        if any(toks and set(toks) <= asked for _, toks in names):
            names_used.extend(names)
            extra.extend(t for _, toks in names for t in toks if t not in asked)
    return list(dict.fromkeys(extra)), names_used


def _matched_words(query_words: list[str], page_tokens: set[str]) -> list[str]:
    """The question's own words that the page contains; for a run of Chinese, the stretches
    of it whose character pairs the page contains."""
    out = []
    for word in query_words:
        toks = word_tokens(word)
        if not toks:
            continue
        if len(word) > 1 and all(is_cjk(c) for c in word):
            out.extend(_cjk_stretches(word, page_tokens))
        elif any(t in page_tokens for t in toks):
            out.append(word)
    return list(dict.fromkeys(out))


def _cjk_stretches(run: str, page_tokens: set[str]) -> list[str]:
    covered = [False] * len(run)
    for i in range(len(run) - 1):
        if run[i:i + 2] in page_tokens:
            covered[i] = covered[i + 1] = True
    stretches, start = [], None
    for i, hit in enumerate([*covered, False]):
        if hit and start is None:
            start = i
        elif not hit and start is not None:
            stretches.append(run[start:i])
            start = None
    return stretches


def search(conn: sqlite3.Connection, query: str, *, limit: int = 5, skill: str | None = None) -> list[Hit]:
    """The best ``limit`` pages for ``query``, best first; [] when no word of it is indexed."""
    query_words = WORD.findall(query)
    query_tokens = list(dict.fromkeys(t for w in query_words for t in word_tokens(w)))[:MAX_QUERY_TOKENS]
    extra, used_names = _expansion(conn, {t for w in query_words for t in key_tokens(w)})
    extra = [t for t in extra if t not in query_tokens]
    shares, floor = _coordination(conn, query_words)
    scores = {n: s * shares.get(n, floor) for n, s in _bm25(conn, query_tokens).items()}
    for n, score in _bm25(conn, extra).items():
        scores[n] = scores.get(n, 0.0) + EXPANSION_WEIGHT * score
    top = max(scores.values(), default=0.0)
    if top > 0:
        scores = {n: s / top for n, s in scores.items()}
    for n, bonus in _task_bonus(conn, query_tokens).items():
        scores[n] = scores.get(n, 0.0) + bonus
    allowed = _pages_of_skill(conn, skill) if skill else None
    ranked = sorted(((s, n) for n, s in scores.items() if allowed is None or n in allowed), key=lambda sn: (-sn[0], sn[1]))
    hits = []
    for score, n in ranked[:limit]:
        page_id, path, title, tasks = conn.execute("SELECT id, path, title, tasks FROM pages WHERE n = ?", (n,)).fetchone()
        wanted = query_tokens + extra
        marks = ",".join("?" * len(wanted))
        page_tokens = {t for (t,) in conn.execute(f"SELECT token FROM vocab WHERE n = ? AND token IN ({marks})", (n, *wanted))}
        matched = _matched_words(query_words, page_tokens)
        found = dict.fromkeys(name for name, toks in used_names if name not in matched and toks and set(toks) <= page_tokens)
        matched += list(found)[:MAX_GLOSSARY_SHOWN]
        hits.append(Hit(page_id, path, title, round(score, 3), tuple(matched), tuple(json.loads(tasks))))
    return hits


def _coordination(conn: sqlite3.Connection, query_words: list[str]) -> tuple[dict[int, float], float]:
    """For each page, the share of the question's words it contains (Lucene's classic
    coordination factor). In a KB this small, a word such as "wrapper" is on most pages,
    so BM25 gives it no weight at all; a page that has every word asked should still
    outrank one that has only the rarest. Also the share of a page that has none of them."""
    asked = list(dict.fromkeys(t for w in query_words for t in key_tokens(w)))
    if not asked:
        return {}, 1.0
    have: dict[int, int] = {}
    for (n,) in conn.execute(f"SELECT n FROM vocab WHERE token IN ({','.join('?' * len(asked))})", asked):
        have[n] = have.get(n, 0) + 1
    # a page that has only pieces of an identifier (torch, zeros for torch.zeros) counts half a word
    return {n: count / len(asked) for n, count in have.items()}, 0.5 / len(asked)


def _task_bonus(conn: sqlite3.Connection, query_tokens: list[str]) -> dict[int, float]:
    """TASK_WEIGHT times the share of a task's wording the question repeats, for the pages
    of the task that shares most: "decide what runs on host" is the task "Decide what may
    run on the host" even though BM25 finds host, run and decide on almost every page."""
    asked = set(query_tokens)
    best: dict[int, float] = {}
    paths = dict(conn.execute("SELECT path, n FROM pages"))
    for said_json, refs in conn.execute("SELECT said, refs FROM tasks"):
        said = set(json.loads(said_json))
        shared = len(said & asked)
        if not said or shared < min(2, len(said)):
            continue
        bonus = TASK_WEIGHT * shared / len(said)
        for ref in json.loads(refs):
            n = paths.get(f"kb/{ref}")
            if n is not None and bonus > best.get(n, 0.0):
                best[n] = bonus
    return best


def _pages_of_skill(conn: sqlite3.Connection, skill: str) -> set[int]:
    paths = {f"kb/{ref}" for skills, refs in conn.execute("SELECT skills, refs FROM tasks")
             if skill in json.loads(skills) for ref in json.loads(refs)}
    return {n for n, path in conn.execute("SELECT n, path FROM pages") if path in paths}
