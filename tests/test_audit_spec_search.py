"""Issue 37 step 3: in one run of ``kbt audit`` over many files, a folder where no spec can be
found (no selection, no ops/*.yaml in it or above it, no CANN folder) is searched once, not
once per file, and a spec written between two runs is found by the second."""

from __future__ import annotations

import shutil
from pathlib import Path

from kb_tools.audit import family_context
from kb_tools.audit.family_context import find_spec, one_run
from kb_tools.contract.discovery import holds_no_spec

ROOT = Path(__file__).resolve().parents[1]


def _files(folder: Path, names: list[str]) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / name).write_text("def f(x):\n    return x\n")
    return [str(folder / n) for n in names]


def test_a_folder_without_spec_is_searched_once_per_run(tmp_path, monkeypatch):
    files = _files(tmp_path / "code", ["test_softmax.py", "softmax_golden.py", "softmax_wrapper.py"])
    asked = []
    monkeypatch.setattr(family_context, "holds_no_spec", lambda folder, *clear: asked.append(folder) or holds_no_spec(folder, *clear))
    with one_run():
        assert [find_spec(f) for f in files] == [None, None, None]
    assert len(asked) == 1


def test_a_spec_written_between_runs_is_found(tmp_path):
    files = _files(tmp_path / "code", ["test_softmax.py"])
    with one_run():
        assert find_spec(files[0]) is None
    (tmp_path / "ops").mkdir()
    shutil.copy(ROOT / "ops" / "softmax.yaml", tmp_path / "ops" / "softmax.yaml")
    with one_run():
        assert find_spec(files[0]).op == "softmax"


def test_a_folder_with_a_spec_or_a_selection_above_is_not_empty(tmp_path):
    _files(tmp_path / "a" / "code", ["x.py"])
    assert holds_no_spec(tmp_path / "a" / "code")
    (tmp_path / "a" / "ops").mkdir()
    (tmp_path / "a" / "ops" / "notes.txt").write_text("no spec here\n")
    assert holds_no_spec(tmp_path / "a" / "code")  # an ops/ folder without a yaml holds none
    shutil.copy(ROOT / "ops" / "softmax.yaml", tmp_path / "a" / "ops" / "softmax.yaml")
    assert not holds_no_spec(tmp_path / "a" / "code")
    _files(tmp_path / "b" / "code", ["x.py"])
    (tmp_path / "b" / "KB_SELECTION.json").write_text('{"op": "softmax"}')
    assert not holds_no_spec(tmp_path / "b" / "code")


def test_folders_found_clear_are_not_looked_at_again_and_answer_the_same(tmp_path):
    _files(tmp_path / "a" / "code", ["x.py"])
    _files(tmp_path / "b" / "code", ["x.py"])
    clear = set()
    assert holds_no_spec(tmp_path / "a" / "code", clear)
    assert str(tmp_path) in clear and str(tmp_path / "a") in clear
    (tmp_path / "b" / "KB_SELECTION.json").write_text('{"op": "softmax"}')
    assert not holds_no_spec(tmp_path / "b" / "code", clear)  # b itself was never found clear
    (tmp_path / "KB_SELECTION.json").write_text('{"op": "softmax"}')
    assert holds_no_spec(tmp_path / "a" / "code", clear)  # within one run, what was found clear stays so
    assert not holds_no_spec(tmp_path / "a" / "code")
