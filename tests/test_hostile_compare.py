"""kbt compare under hostile tensor files (hostile-3 repros 09, 10, 30 and 36's --dtype ""):
each is refused in one line before any data is walked, inside the CPU and memory bar. The
fixes are in kb_tools.numerics (issue 27); these tests hold them."""

from __future__ import annotations

import os

import numpy as np
import pytest

from test_bad_input_limits import assert_one_clean_line, run_kbt


@pytest.fixture
def golden(tmp_path):
    np.save(tmp_path / "golden.npy", np.zeros(3, np.float32))
    return "golden.npy"


def test_a_fifo_named_like_a_tensor_is_refused_without_opening_it(tmp_path, golden):
    """Repro 09: np.load opened the FIFO and blocked for ever."""
    os.mkfifo(tmp_path / "dut.npy")
    result = run_kbt("compare", "--dut", "dut.npy", "--golden", golden, cwd=tmp_path)
    assert_one_clean_line(result, "dut.npy", "CMP001", exit_code=2)
    assert "FIFO" in result.err


def test_a_tiny_pt_declaring_a_trillion_elements_is_refused_from_its_header(tmp_path):
    """Repro 10: a 1.3 KB stride-0 expand to 10**12 elements ran for hours."""
    torch = pytest.importorskip("torch")
    for name in ("dut.pt", "golden.pt"):
        torch.save(torch.zeros(1).expand(10**12), tmp_path / name)
    assert (tmp_path / "dut.pt").stat().st_size < 4096
    result = run_kbt("compare", "--dut", "dut.pt", "--golden", "golden.pt", cwd=tmp_path)
    assert_one_clean_line(result, "dut.pt", "CMP001", exit_code=2)
    assert "1000000000000 elements" in result.err


def test_cross_check_refuses_a_third_party_leg_of_another_dtype(kbt, tmp_path):
    """Repro 30: int8 zeros as the third party of a float16 DUT passed, with no word."""
    values = np.random.default_rng(0).standard_normal(100)
    np.save(tmp_path / "dut.npy", values.astype(np.float16))
    np.save(tmp_path / "golden.npy", values.astype(np.float32))
    np.save(tmp_path / "tp.npy", np.zeros(100, np.int8))
    result = kbt("compare", "--dut", tmp_path / "dut.npy", "--golden", tmp_path / "golden.npy",
                 "--third-party", tmp_path / "tp.npy", "--criterion", "cross_check")
    assert result.code == 2 and "PASS" not in result.out, (result.out, result.err)
    (line,) = result.err.strip().splitlines()
    assert " CMP001 " in line and "int8" in line


def test_an_empty_dtype_is_an_unknown_dtype(kbt, tmp_path, golden):
    """Repro 36: --dtype "" was taken as "no --dtype"."""
    np.save(tmp_path / "dut.npy", np.zeros(3, np.float32))
    result = kbt("compare", "--dut", tmp_path / "dut.npy", "--golden", tmp_path / golden, "--dtype", "")
    assert result.code == 2
    (line,) = result.err.strip().splitlines()
    assert line.startswith("--dtype: CMP001 ") and "''" in line
