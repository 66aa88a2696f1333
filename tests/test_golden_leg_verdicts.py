"""A golden that is present but wrong is a FAIL with the finding, never MISSING (issue 41.5),
and kbt compare warns when a cross_check golden is the third-party leg bit for bit (41.2)."""

from __future__ import annotations

import shutil

import numpy as np
import torch

from conftest import REPO
from kb_tools.numerics.collapsed import GOLDEN_PAGE, collapsed_warning, same_bits
from kb_tools.outputs.review_checks import ReviewSession


def _softmax_copy(tmp_path):
    root = tmp_path / "src"
    shutil.copytree(REPO / "examples" / "softmax", root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_a_golden_cast_back_is_fail_naming_the_cause(tmp_path, capsys):
    root = _softmax_copy(tmp_path)
    legs = root / "tensors" / "float16"
    shutil.copy(legs / "third_party.npy", legs / "golden.npy")  # the golden narrowed to float16
    session = ReviewSession.open(REPO / "ops" / "softmax.yaml", root=root, kb_root=REPO)
    check = session.compare("float16")
    assert check.status == "FAIL"
    assert "golden.npy holds float16" in check.summary and "device's precision" in check.summary and GOLDEN_PAGE in check.summary
    assert session.compare("float32").status == "PASS"  # the untouched legs still pass


def test_an_absent_golden_is_still_missing(tmp_path, capsys):
    root = _softmax_copy(tmp_path)
    (root / "tensors" / "float16" / "golden.npy").unlink()
    check = ReviewSession.open(REPO / "ops" / "softmax.yaml", root=root, kb_root=REPO).compare("float16")
    assert check.status == "MISSING" and "no golden" in check.summary


def test_same_bits_reads_bytes_not_values():
    nan = torch.tensor([float("nan"), 1.0])
    assert same_bits(nan, nan.clone())
    assert not same_bits(torch.tensor([0.0]), torch.tensor([-0.0]))  # equal values, other bits
    assert not same_bits(torch.ones(3, dtype=torch.float16), torch.ones(3, dtype=torch.float32))
    assert collapsed_warning(torch.ones(3), None) is None


def test_compare_warns_about_a_collapsed_golden(kbt, tmp_path):
    third = np.load(REPO / "examples" / "softmax" / "tensors" / "float16" / "third_party.npy")
    dut = REPO / "examples" / "softmax" / "tensors" / "float16" / "dut.npy"
    np.save(tmp_path / "third.npy", third)
    np.save(tmp_path / "golden16.npy", third.copy())
    collapsed = kbt("compare", "--dut", dut, "--golden", tmp_path / "golden16.npy", "--third-party", tmp_path / "third.npy",
                    "--criterion", "cross_check")
    warning = [line for line in collapsed.out.splitlines() if line.startswith("  warning:")]
    assert len(warning) == 1 and "bit for bit" in warning[0] and "device's precision" in warning[0] and GOLDEN_PAGE in warning[0]
    honest = kbt("compare", "--dut", dut, "--golden", REPO / "examples" / "softmax" / "tensors" / "float16" / "golden.npy",
                 "--third-party", tmp_path / "third.npy", "--criterion", "cross_check")
    assert "bit for bit" not in honest.out and honest.code == 0, honest.out + honest.err


def test_the_review_claims_check_fails_a_golden_that_casts_back(tmp_path, capsys):
    root = _softmax_copy(tmp_path)
    (root / "ops" / "softmax.yaml").write_bytes((REPO / "ops" / "softmax.yaml").read_bytes())
    golden = root / "legs" / "golden.py"
    golden.write_text(golden.read_text().replace("return torch.softmax(x, dim=dim)", "return torch.softmax(x, dim=dim).half()"))
    session = ReviewSession.open(REPO / "ops" / "softmax.yaml", root=root, usage=root / "KB_USAGE.json", kb_root=REPO)
    check = session.claims()
    assert check.status == "FAIL" and "error" in check.summary
    assert {"GD102", "VF011"} <= set(check.table["code"])
