"""The content-keyed cache behind fast start-up: a cached KB equals a parsed one, an edited
page is never served stale, and a corrupt or unusable cache is rebuilt or bypassed without
a traceback."""

from __future__ import annotations

import json
import os

import pytest

from conftest import REPO
from kb_tools.files import cache as content_cache
from kb_tools.kb.pages import load_kb
from kb_tools.search.answer import answer


@pytest.fixture
def cache(tmp_path, monkeypatch):
    directory = tmp_path / "cache"
    monkeypatch.setenv("OPKB_CACHE_DIR", str(directory))
    return directory


def _same_kb(a, b):
    assert list(a.pages) == list(b.pages)
    for pid in a.pages:
        assert a.pages[pid] == b.pages[pid] and a.pages[pid].lines == b.pages[pid].lines
    assert a.diagnostics == b.diagnostics and a.unloadable == b.unloadable


def test_cached_kb_equals_the_parsed_kb(cache, monkeypatch):
    first = load_kb(REPO)
    assert len(list(cache.glob("pages-*.json"))) == 1
    cached = load_kb(REPO)
    monkeypatch.setenv("OPKB_CACHE_DIR", "")
    _same_kb(first, cached)
    _same_kb(load_kb(REPO), cached)


def test_cached_kb_does_not_import_yaml_or_jsonschema(cache):
    import subprocess
    import sys

    load_kb(REPO)
    probe = "import sys; from kb_tools.kb.pages import load_kb; load_kb(sys.argv[1]); print(sorted({'yaml', 'jsonschema'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe, str(REPO)], capture_output=True, text=True, env={**os.environ}, check=True)
    assert done.stdout.strip() == "[]"


def test_edited_page_is_parsed_again(cache, repo_copy):
    load_kb(repo_copy)
    page = repo_copy / "kb" / "constraints" / "wrapper-boundary.md"
    page.write_text(page.read_text().replace("title: The host wrapper", "title: The edited host wrapper", 1))
    assert load_kb(repo_copy).pages["wrapper-boundary"].title.startswith("The edited host wrapper")


def test_broken_page_is_reported_on_every_run(cache, repo_copy):
    page = repo_copy / "kb" / "constraints" / "wrapper-boundary.md"
    page.write_text(page.read_text().replace("kind: constraint", "kind: nonsense", 1))
    for _ in range(2):
        kb = load_kb(repo_copy)
        assert "wrapper-boundary" not in kb.pages and any(d.code == "PG010" for d in kb.diagnostics)


def _entry_key(cache, kind, suffix):
    (entry,) = cache.glob(f"{kind}-*{suffix}")
    return entry, entry.name[len(kind) + 1:-len(suffix)]


@pytest.mark.parametrize("sealed", [False, True], ids=["bytes damaged on disk", "well-sealed but wrong inside"])
@pytest.mark.parametrize("damage", [
    lambda raw: raw[: len(raw) // 2],  # cut short
    lambda raw: b"\x00\xff" * 40,  # not text
    lambda raw: json.dumps({"format": 1, "pages": {"constraints/wrapper-boundary.md": {"sha256": "x"}}}).encode(),
    lambda raw: raw.replace(b'"body_line": ', b'"body_line": "not a number", "x": ', 1),
    lambda raw: b"[]",
])
def test_corrupt_page_cache_is_rebuilt(cache, damage, sealed):
    reference = load_kb(REPO)
    entry, key = _entry_key(cache, "pages", ".json")
    data = entry.read_bytes()[:-32]  # the entry without its SHA-256 seal
    if sealed:  # a seal that matches: only the record checks stand between it and a page
        content_cache.write_entry("pages", key, damage(data))
    else:
        entry.write_bytes(damage(entry.read_bytes()))
    _same_kb(load_kb(REPO), reference)


@pytest.mark.parametrize("sealed", [False, True], ids=["bytes damaged on disk", "well-sealed but wrong inside"])
@pytest.mark.parametrize("damage", [lambda raw: raw[: len(raw) // 3], lambda raw: b"not a database" * 100, lambda raw: raw[:100] + b"\x00" * (len(raw) - 100)])
def test_corrupt_search_index_is_rebuilt(cache, damage, sealed):
    expected = [h.id for h in answer(REPO, "非连续 stride").hits]
    entry, key = _entry_key(cache, "search", ".sqlite")
    if sealed:
        content_cache.write_entry("search", key, damage(entry.read_bytes()[:-32]), ".sqlite")
    else:
        entry.write_bytes(damage(entry.read_bytes()))
    assert [h.id for h in answer(REPO, "非连续 stride").hits] == expected
    assert [h.id for h in answer(REPO, "非连续 stride").hits] == expected  # and the rebuilt entry reads back


def test_edited_page_changes_the_answer(cache, repo_copy):
    assert not answer(repo_copy, "zyxwvutsrq").hits
    page = repo_copy / "kb" / "patterns" / "cat-lowering.md"
    page.write_text(page.read_text() + "\nzyxwvutsrq\n")
    assert [h.id for h in answer(repo_copy, "zyxwvutsrq").hits] == ["cat-lowering"]


def test_unusable_cache_directory_only_costs_time(tmp_path, monkeypatch, kbt):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("OPKB_CACHE_DIR", str(blocker / "cache"))
    result = kbt("route", "非连续")
    assert result.code == 0 and "non-contiguous-fallback" in result.out and result.err == ""
    assert load_kb(REPO).pages


def test_entries_honour_umask_and_old_ones_are_pruned(cache, monkeypatch):
    old = os.umask(0o027)
    try:
        for i in range(content_cache.KEEP_PER_KIND + 3):
            content_cache.write_entry("probe", f"{i:04d}", b"x")
    finally:
        os.umask(old)
    entries = list(cache.glob("probe-*.json"))
    assert len(entries) == content_cache.KEEP_PER_KIND
    assert all(e.stat().st_mode & 0o777 == 0o640 for e in entries)
    assert not list(cache.glob(".*.tmp"))


def test_memo_survives_a_damaged_file_and_keeps_the_newest(cache):
    content_cache.write_entry("probe", "memo", b"{not json")
    memo = content_cache.Memo("probe", max_items=2)
    assert memo.get("a") is None
    for key in "abc":
        memo.put(key, {"v": key})
    memo.save()
    again = content_cache.Memo("probe", max_items=2)
    assert again.get("a") is None and again.get("c") == {"v": "c"} and again.get("b") == {"v": "b"}


def test_spec_from_the_memo_equals_the_parsed_spec(cache, tmp_path, monkeypatch):
    from kb_tools.contract import specs as spec_memo
    from kb_tools.contract.specs import load_spec

    parsed = load_spec(REPO / "ops" / "softmax.yaml")
    again = load_spec(REPO / "ops" / "softmax.yaml")
    assert again == parsed and again.dtype_lines == parsed.dtype_lines
    assert spec_memo._remembered((REPO / "ops" / "softmax.yaml").read_text(), REPO / "ops" / "softmax.yaml") == parsed


def test_broken_spec_is_reported_every_time(cache, tmp_path):
    from kb_tools.contract.specs import load_spec
    from kb_tools.diagnostics import KbErrors

    spec = tmp_path / "bad.yaml"
    good = (REPO / "ops" / "softmax.yaml").read_text()
    spec.write_text(good)
    load_spec(spec)
    spec.write_text(good.replace("target: a5", "target: a99"))
    for _ in range(2):
        with pytest.raises(KbErrors):
            load_spec(spec)


@pytest.mark.parametrize("argv", [
    ["route", "aclnnInplaceCopy failed, error code is 561103"],
    ["route", "decide-host-work"],
    ["select", "ops/softmax.yaml", "-o", "{out}"],
    ["usage", "ops/softmax.yaml", "-o", "{out}"],
])
def test_warm_start_imports_no_heavy_module(cache, tmp_path, argv):
    """The start-up budget, counted instead of timed: with the cache warm, these commands
    import neither YAML, jsonschema nor any numerical library (benchmarks/bench_startup.py
    times them)."""
    import subprocess
    import sys

    argv = [a.replace("{out}", str(tmp_path / "out")) for a in argv]
    probe = ("import sys, io, contextlib; from kb_tools.cli import main\n"
             "with contextlib.redirect_stdout(io.StringIO()): code = main(sys.argv[1:])\n"
             "print(code, sorted({'yaml', 'jsonschema', 'numpy', 'torch', 'scipy', 'pandas'} & set(sys.modules)))")
    env = {**os.environ, "OPKB_CACHE_DIR": str(cache)}
    runs = [subprocess.run([sys.executable, "-c", probe, *argv], cwd=REPO, env=env, capture_output=True, text=True, check=True)
            for _ in range(2)]
    assert runs[1].stdout.strip() == "0 []", (runs[0].stdout, runs[1].stdout, runs[1].stderr)


def test_a_page_field_the_cache_does_not_carry_is_never_served_from_it(cache, monkeypatch):
    from kb_tools.kb import pages

    real = pages.page_record
    monkeypatch.setattr(pages, "page_record", lambda page: {**real(page), "related": []})  # forgets a field
    load_kb(REPO)
    served = load_kb(REPO)  # whatever the first load cached
    monkeypatch.setenv("OPKB_CACHE_DIR", "")
    _same_kb(served, load_kb(REPO))
    assert any(p.related for p in served.pages.values())
