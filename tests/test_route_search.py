"""`kbt route` as free-text search: the evaluation set, Chinese, mixed and identifier queries,
glossary expansion, the JSON shape, exact tasks, and questions that cannot be asked."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from kb_tools.search.answer import answer
from kb_tools.search.evaluate import load_questions, rate, run_questions

QUESTIONS = load_questions(REPO / "tests" / "route_eval.yaml")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("OPKB_CACHE_DIR", str(tmp_path / "cache"))


def _json(kbt, *argv, root=None):
    result = kbt("route", *argv, "--format", "json", root=root)
    assert result.code == 0, result.err
    return json.loads(result.out)


def test_evaluation_set_is_large_and_a_third_held_out():
    held = [q for q in QUESTIONS if q.heldout]
    assert len(QUESTIONS) >= 60 and len(held) >= 20 and len(held) >= 0.3 * len(QUESTIONS)
    kinds = {q.kind for q in QUESTIONS}
    assert {"en", "zh", "mixed", "error", "symptom", "reviewer"} <= kinds


def test_every_answer_is_a_page_of_the_kb():
    pages = {p.stem for p in (REPO / "kb").glob("*/*.md")}
    missing = {(q.text, a) for q in QUESTIONS for a in q.answers if a not in pages}
    assert not missing


@pytest.mark.parametrize("heldout", [False, True], ids=["tuning", "held-out"])
def test_top3_hit_rate_is_at_least_90_percent(heldout):
    outcomes = run_questions(REPO, [q for q in QUESTIONS if q.heldout == heldout])
    misses = [(o.question.text, o.ranked) for o in outcomes if not o.hit_at(3)]
    assert rate(outcomes, 3) >= 0.9, misses


def test_json_has_the_shape_the_issue_gives(kbt):
    hits = _json(kbt, "my fp16 op fails precision", "--limit", "4")
    assert 1 <= len(hits) <= 4
    assert all(set(h) == {"id", "path", "title", "score", "matched", "tasks"} for h in hits)
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all((REPO / h["path"]).is_file() and Path(h["path"]).stem == h["id"] for h in hits)
    assert "precision" in hits[0]["matched"]


def test_limit_bounds_the_list(kbt):
    assert len(_json(kbt, "wrapper", "--limit", "1")) == 1
    assert len(_json(kbt, "wrapper")) == 5
    with pytest.raises(SystemExit) as stop:  # argparse's usage error
        kbt("route", "wrapper", "--limit", "0")
    assert stop.value.code == 2


def test_exact_task_gives_its_pages_in_the_task_order(kbt):
    from kb_tools.kb.router import find_task, parse_router

    task = find_task(parse_router(REPO / "ROUTER.md"), "lower-to-isa")
    hits = _json(kbt, "lower-to-isa")
    assert [h["path"] for h in hits] == [f"kb/{ref}" for ref in task.references]
    assert all(h["score"] is None and "lower-to-isa" in h["tasks"] for h in hits)
    assert _json(kbt, task.wording) == hits


def test_task_wording_in_other_words_finds_the_task_pages(kbt):
    assert _json(kbt, "decide what runs on host")[0]["id"] == "wrapper-boundary"


def test_error_code_and_api_names_match_as_whole_tokens(kbt):
    hits = _json(kbt, "aclnnInplaceCopy failed, error code is 561103", "--limit", "3")
    assert "wrapper-boundary" in [h["id"] for h in hits]
    assert {"561103", "aclnnInplaceCopy"} <= set(hits[0]["matched"])
    vf = _json(kbt, "vf.exp", "--limit", "3")
    assert "platform-gated-conversion" in [h["id"] for h in vf] and all("vf.exp" in h["matched"] for h in vf)
    # a prefix of the code is another token: it finds nothing, and says so
    partial = kbt("route", "56110")
    assert partial.code == 1 and "no page matches" in partial.err
    assert kbt("route", "56110", "--format", "json").out == "[]\n"


def test_chinese_phrase_without_spaces_is_found(kbt):
    hits = _json(kbt, "精度对不齐", "--limit", "3")
    assert hits[0]["id"] in {"numerical-error-localisation", "troubleshooting"}
    assert "精度对不齐" in hits[0]["matched"]


def test_mixed_chinese_and_english(kbt):
    hits = _json(kbt, "host侧做了reshape", "--limit", "3")
    assert "wrapper-boundary" in [h["id"] for h in hits]
    assert {"host", "reshape"} <= set(hits[0]["matched"])


def test_glossary_carries_a_chinese_question_to_english_pages(kbt, repo_copy):
    (repo_copy / "kb" / "glossary.yaml").write_text(
        "terms:\n  - {zh: 屏障对齐, en: barrier, pages: [wave-expansion]}\n", encoding="utf-8")
    page = (repo_copy / "kb" / "constraints" / "wave-expansion.md").read_text(encoding="utf-8")
    assert "屏障对齐" not in page and "barrier" in page
    hits = _json(kbt, "屏障对齐", root=repo_copy)
    assert hits[0]["id"] == "wave-expansion" and "barrier" in hits[0]["matched"]


def test_text_output_names_title_tasks_and_matched_words(kbt):
    result = kbt("route", "非连续", "--limit", "2")
    assert result.code == 0
    first = result.out.splitlines()[1:3]
    assert first[0].startswith(" 1. kb/") and "matched: 非连续" in first[1] and "tasks:" in first[1]


def test_skill_filter_keeps_only_that_skills_pages(kbt):
    hits = _json(kbt, "golden", "--skill", "op-review", "--limit", "10")
    from kb_tools.kb.router import parse_router

    allowed = {f"kb/{r}" for t in parse_router(REPO / "ROUTER.md") if "op-review" in t.skills for r in t.references}
    assert hits and all(h["path"] in allowed for h in hits)


@pytest.mark.parametrize("query,code", [
    ("", "RQ001"), ("   \n\t", "RQ001"), ("x" * 1_000_000, "RQ002"), ("ab\x00cd", "RQ003"), ("\udcff\udcfe", "RQ003"),
])
def test_unusable_question_is_one_line_exit_2(kbt, query, code):
    result = kbt("route", query)
    assert result.code == 2 and result.out == ""
    assert len(result.err.splitlines()) == 1 and f" {code} " in result.err and "Traceback" not in result.err


@pytest.mark.parametrize("data,code", [(b"\xff\xfe\x00binary", "RQ003"), (b"a" * (1 << 20), "RQ002"), (b"  ", "RQ001")])
def test_unusable_question_on_stdin(kbt, monkeypatch, data, code):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    result = kbt("route", "-")
    assert result.code == 2 and len(result.err.splitlines()) == 1 and f" {code} " in result.err


def test_question_on_stdin(kbt, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO("非连续\n".encode())))
    assert kbt("route", "-").code == 0


def test_console_script_answers_free_text(tmp_path):
    env = {"OPKB_CACHE_DIR": str(tmp_path / "c"), "PATH": "/usr/bin:/bin"}
    kbt = Path(sys.executable).with_name("kbt")
    for _ in range(2):  # the first run builds the cache, the second reads it
        done = subprocess.run([str(kbt), "route", "非连续", "--format", "json"], cwd=REPO, env=env, capture_output=True, text=True)
        assert done.returncode == 0 and json.loads(done.stdout)[0]["id"] == "non-contiguous-fallback"


def test_answers_are_the_same_from_the_cache_and_without_it(monkeypatch, tmp_path):
    built = [h.as_json() for h in answer(REPO, "bf16 softmax exp").hits]
    cached = [h.as_json() for h in answer(REPO, "bf16 softmax exp").hits]
    monkeypatch.setenv("OPKB_CACHE_DIR", "")
    uncached = [h.as_json() for h in answer(REPO, "bf16 softmax exp").hits]
    assert built == cached == uncached and len(list((tmp_path / "cache").glob("search-*.sqlite"))) == 1


def test_a_page_that_fails_to_load_is_named_not_silently_dropped(kbt, repo_copy):
    page = repo_copy / "kb" / "constraints" / "wrapper-boundary.md"
    page.write_text(page.read_text().replace("kind: constraint", "kind: bogus", 1))
    result = kbt("route", "wrapper", "--limit", "10", root=repo_copy)
    assert result.code == 0 and "wrapper-boundary.md" not in result.out
    assert result.err.count("\n") == 1 and "failed to load" in result.err and "kb/constraints/wrapper-boundary.md" in result.err


def test_longest_question_searches_a_bounded_number_of_tokens(monkeypatch):
    import random

    from kb_tools.search import rank
    from kb_tools.search.answer import MAX_QUERY_CHARS, check_query

    searched = []
    real = rank._bm25
    monkeypatch.setattr(rank, "_bm25", lambda conn, toks: searched.append(len(toks)) or real(conn, toks))
    rng = random.Random(0)
    question = check_query("".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(MAX_QUERY_CHARS)))
    answer(REPO, question)
    assert searched and max(searched) <= rank.MAX_QUERY_TOKENS


def test_sqlite_without_fts5_is_one_line(kbt, monkeypatch):
    from kb_tools.search import index

    monkeypatch.setattr(index, "_SCHEMA", index._SCHEMA.replace("USING fts5(", "USING no_such_module("))
    result = kbt("route", "非连续")
    assert result.code == 2 and len(result.err.splitlines()) == 1 and " RQ010 " in result.err and "FTS5" in result.err
