"""kbt audit under hostile wrappers and options (hostile-3 repros 06, 07, 08, 23, 24): a
wrapper built to make the checker quadratic, cubic or memory-hungry stays inside the CPU
and memory bar, a broken API inventory is said rather than silently switching KN103 off,
and an option that leaves nothing to check is an error."""

from __future__ import annotations

import shutil

from conftest import REPO
from test_bad_input_limits import assert_bounded, run_kbt

ANTIPATTERN = REPO / "ops" / "wrappers" / "softmax_antipattern.py"


def _ended_cleanly(result):
    """Findings (exit 1) or one refusal line (exit 2), never a traceback, inside the bar."""
    assert "Traceback" not in result.err, result.err[-2000:]
    assert result.code in (1, 2), (result.code, result.err[-2000:])
    if result.code == 2:
        assert len(result.err_lines) == 1, result.err_lines[:5]
    assert_bounded(result)


def test_a_long_chained_comparison_stays_bounded(tmp_path):
    """Repro 06: 4,000 terms of `dim < dim < ...` took 7 s and 1.15 GB."""
    text = ANTIPATTERN.read_text()
    anchor = "    dim = dim % input_tensor.ndim\n"
    assert anchor in text
    (tmp_path / "cmp.py").write_text(text.replace(anchor, anchor + "    q = " + " < ".join(["dim"] * 4000) + "\n"))
    _ended_cleanly(run_kbt("audit", "cmp.py", cwd=tmp_path))


def test_a_long_chain_of_helpers_stays_bounded(tmp_path):
    """Repro 07: a launch reached through 400 same-file helpers took 12-15 s."""
    n = 400
    lines = ["import torch", "import pypto_pro.language as pl", "", "@pl.jit", "def k(x):", "    pass", ""]
    for i in range(n):
        lines += [f"def h{i}(x):", "    x = x.contiguous()", f"    return h{i + 1}(x)", ""]
    lines += [f"def h{n}(x):", "    k(x)", "    return x", "", "def top_wrapper(x):", "    return h0(x)", ""]
    (tmp_path / "helpers.py").write_text("\n".join(lines))
    _ended_cleanly(run_kbt("audit", "helpers.py", cwd=tmp_path))


def test_one_very_long_line_stays_bounded(tmp_path):
    """Repro 08: a 1.8 MB list literal on one line (under the 2 MiB limit) peaked near 900 MB."""
    (tmp_path / "big.py").write_text("x = [" + ",".join(["1"] * 900_000) + "]\n")
    result = run_kbt("audit", "big.py", cwd=tmp_path)
    assert "Traceback" not in result.err, result.err[-2000:]
    assert_bounded(result)


KN_WRAPPER = """import torch
import pypto.language as pl
from pypto.language import vf

@pl.jit
def k(x, y):
    y[0] = vf.cast(x, 'float32')

def k_wrapper(x):
    y = torch.empty(3)
    k(x, y)
    return y
"""


def test_a_broken_api_inventory_is_said_not_silently_skipped(kbt, repo_copy):
    """Repro 23: an inventory that did not parse switched KN103 off (audit exit 0, lint passed)."""
    (repo_copy / "kn_wrapper.py").write_text(KN_WRAPPER)
    (repo_copy / "kb" / "api_inventory.yaml").write_text("x: [\n")
    result = kbt("audit", repo_copy / "kn_wrapper.py", root=repo_copy)
    assert result.code != 0 and "Traceback" not in result.err
    assert any("api_inventory.yaml" in line for line in result.err.splitlines()), result.err
    lint = kbt("lint", "-q", root=repo_copy)
    assert lint.code != 0 and any("api_inventory.yaml" in line for line in lint.err.splitlines()), lint.err


def test_a_select_that_selects_no_rule_is_an_error(kbt, tmp_path):
    """Repro 24: --select ',,' selected nothing and the anti-pattern passed with exit 0."""
    shutil.copy(ANTIPATTERN, tmp_path / "w.py")
    result = kbt("audit", tmp_path / "w.py", "--select", ",,")
    assert result.code == 2 and "Traceback" not in result.err
    assert len(result.err.strip().splitlines()) == 1 and "--select" in result.err


def test_a_wrapper_pattern_that_matches_nothing_is_an_error(kbt, tmp_path):
    """Repro 24: a mistyped --wrapper-pattern passed, and AU012 wrongly said no function launches a kernel."""
    shutil.copy(ANTIPATTERN, tmp_path / "w.py")
    result = kbt("audit", tmp_path / "w.py", "--wrapper-pattern", "softmax_antipatern_wrapper")
    assert result.code != 0 and "Traceback" not in result.err
    assert "softmax_antipatern_wrapper" in result.err
    assert "no function launches a kernel" not in result.err
