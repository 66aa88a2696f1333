"""``kbt lint`` holds every Do/Don't Python block to its marker: each injected defect on a
copy of the real KB yields exactly its finding, with the page and the block's line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kb_tools.kb.page_code import parse_block
from kb_tools.kb.pages import load_kb
from kb_tools.lint import LintContext, check_page_code

from conftest import REPO, copy_repo

WB = "kb/constraints/wrapper-boundary.md"
DO_MARKER = "# tested: do reduced_axis, op_wrapper; edges: empty, 0-d, one, strided, bool\n"


def _diagnostics(root: Path):
    return check_page_code(LintContext(root, load_kb(root)))[1]


def _findings(root: Path) -> set[tuple[str, str]]:
    return {(Path(d.path).name, d.code) for d in _diagnostics(root)}


@pytest.fixture(scope="module")
def kb_copy(tmp_path_factory) -> Path:
    """One copy of the KB for the module; each test puts back what it changed."""
    return copy_repo(tmp_path_factory.mktemp("repo"))


@pytest.fixture
def edit(kb_copy):
    originals = {}

    def change(rel, old, new):
        path = kb_copy / rel
        text = originals.setdefault(path, path.read_text("utf-8"))
        assert text.count(old) == 1, (rel, old)
        path.write_text(text.replace(old, new), "utf-8")

    yield change
    for path, text in originals.items():
        path.write_text(text, "utf-8")


CONTROLS = [
    ("no marker", WB, DO_MARKER, "", "LN130"),
    ("unknown role", WB, "# tested: do reduced_axis", "# tested: maybe reduced_axis", "LN131"),
    ("unknown edge", WB, "strided, bool\n", "strided, huge\n", "LN131"),
    ("unknown field", WB, "strided, bool\n", "strided, bool; speed: fast\n", "LN131"),
    ("dont without its failure", WB, "# tested: dont op_wrapper; fails: WB101, WB102, WB103", "# tested: dont op_wrapper", "LN131"),
    ("unknown code", WB, "fails: WB101, WB102, WB103", "fails: WB101, WB999", "LN131"),
    ("entry not defined", WB, "# tested: do reduced_axis, op_wrapper", "# tested: do reduced_axis, op_wrapperz", "LN132"),
    ("not run without reason", WB, DO_MARKER, "# not run:\n", "LN133"),
    ("plain Python not run", WB, DO_MARKER, "# not run: too hard to test\n", "LN133"),
    ("uses a missing page", "kb/constraints/layout-format.md", "uses: wrapper-boundary", "uses: no-such-page", "LN134"),
]


@pytest.mark.parametrize("name,rel,old,new,code", CONTROLS, ids=[c[0] for c in CONTROLS])
def test_marker_defect_is_found(kb_copy, edit, name, rel, old, new, code):
    assert _findings(kb_copy) == set()  # the copy has no tests/: only the markers are judged
    edit(rel, old, new)
    assert _findings(kb_copy) == {(Path(rel).name, code)}


def test_a_tested_block_without_its_check_is_found(repo_copy):
    (repo_copy / "tests").mkdir()
    shutil.copy(REPO / "tests" / "test_kb_page_code.py", repo_copy / "tests")
    assert _findings(repo_copy) == set()
    checks = repo_copy / "tests" / "test_kb_page_code.py"
    checks.write_text(checks.read_text("utf-8").replace('"wrapper-boundary:do:reduced_axis+op_wrapper"', '"wrapper-boundary:do:gone"'), "utf-8")
    diags = [d for d in _diagnostics(repo_copy) if d.code == "LN135"]
    assert len(diags) == 1 and diags[0].line == _marker_line(repo_copy / WB, DO_MARKER)
    assert "no test runs this block" in diags[0].message


def _marker_line(page: Path, marker: str) -> int:
    return page.read_text("utf-8")[: page.read_text("utf-8").index(marker)].count("\n") + 1


@pytest.mark.parametrize("text", ["(" * 100_000 + "\n", "x = 1\x00\n", "def f(:\n"], ids=["deep", "nul", "syntax"])
def test_a_broken_tested_block_is_one_finding(text):
    block, problems = parse_block("p", 7, "# tested: do f\n" + text)
    assert block is None and [p.code for p in problems] == ["LN132"] and problems[0].line == 7
