"""check-usage accepts a claimed symbol only where the code defines or uses it, never in a
comment or a string (issue 41 item 4)."""

from __future__ import annotations

import json

import pytest

from conftest import REPO
from hostile_support import filled, filled_usage, load
from kb_tools.contract.code_names import Unreadable, c_names, python_names

PY = '''# fused_rms_norm does the work
"""fused_rms_norm, in a docstring"""
import torch as th
from triton import language as tl


def wrapper(x, *, eps=1e-6):
    label = "fused_rms_norm"
    return th.ops.mine.kernel(x, eps=eps).float()


class Norm:
    def forward(self, x):
        return wrapper(x)
'''


def test_python_names_come_from_code_only():
    names = python_names(PY)
    assert "fused_rms_norm" not in names
    assert {"wrapper", "x", "eps", "th", "torch", "tl", "language", "kernel", "float", "Norm", "forward", "label"} <= names


def test_c_names_skip_comments_and_literals():
    text = '// fused_a\n/* fused_b\n */ int real_fn(int n) { const char *s = "fused_c // x"; return \'d\'; }\n'
    names = c_names(text)
    assert {"real_fn", "n", "s", "int", "char"} <= names
    assert not names & {"fused_a", "fused_b", "fused_c", "x"}


def test_a_python_file_that_does_not_parse_says_where():
    with pytest.raises(Unreadable, match="line 2"):
        python_names("x = 1\ndef (:\n")


@pytest.mark.parametrize(("symbol", "found"), [("fused_rms_norm", False), ("wrapper", True), ("Norm.forward", True),
                                                ("Norm.fused_rms_norm", False)])
def test_check_usage_reads_the_symbol_from_the_code(kbt, tmp_path, symbol, found):
    root = tmp_path / "src"
    root.mkdir()
    (root / "impl.py").write_text(PY)
    usage = filled_usage(kbt, tmp_path / "out")
    doc = load(usage)
    record = next(r for r in filled(doc["invariants"]) if r["implementation"]["status"] == "implemented")
    record["implementation"].update(file="impl.py", symbol=symbol)
    usage.write_text(json.dumps(doc, indent=2) + "\n")
    result = kbt("check-usage", usage, "--root", root, root=REPO)
    mine = [line for line in result.err.splitlines() if " US046 " in line and repr(symbol) in line]
    assert bool(mine) is not found, result.err
    if mine:
        assert record["invariant_id"] in mine[0] and "comment" in mine[0]


def test_an_unparsable_implementation_file_is_a_finding(kbt, tmp_path):
    root = tmp_path / "src"
    root.mkdir()
    (root / "impl.py").write_text("def wrapper(:\n")
    usage = filled_usage(kbt, tmp_path / "out")
    doc = load(usage)
    record = next(r for r in filled(doc["invariants"]) if r["implementation"]["status"] == "implemented")
    record["implementation"].update(file="impl.py", symbol="wrapper")
    usage.write_text(json.dumps(doc, indent=2) + "\n")
    result = kbt("check-usage", usage, "--root", root, root=REPO)
    assert result.code == 1
    assert any(" US045 " in line and "impl.py" in line and "line 1" in line for line in result.err.splitlines()), result.err
