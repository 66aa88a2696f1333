"""Every dtype torch has is known to the memory arithmetic and the numerics: an answer where a
rule applies, one line where none does, never a traceback (issue 38 item 6, repro hostile-4/12)."""

from __future__ import annotations

import pytest
import torch

from kb_tools.numerics.dtypes import WIDTHS, canonical, width


def _torch_dtypes():
    return {name: value for name in dir(torch) if isinstance(value := getattr(torch, name), torch.dtype)}


def test_the_table_names_every_torch_dtype_with_its_itemsize():
    for name, dtype in _torch_dtypes().items():
        found = canonical(name)
        assert found == str(dtype).removeprefix("torch."), name
        assert width(f"torch.{name}") == dtype.itemsize, name
    assert set(WIDTHS) == {str(d).removeprefix("torch.") for d in _torch_dtypes().values()}


def test_an_unknown_name_is_none():
    assert width("float7") is None and canonical("") is None


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "uint16", "complex32", "fp8_e5m2"])
def test_waves_and_tiling_answer_for_every_dtype(kbt, dtype):
    for args in (("waves", "--n", "1000"), ("tiling", "--ub", "196608", "--n", "1000")):
        result = kbt(*args, "--dtype", dtype)
        assert result.code == 0, result.err
        assert "Traceback" not in result.err and "KBT999" not in result.err


def test_an_unknown_dtype_is_one_line(kbt):
    result = kbt("waves", "--n", "1000", "--dtype", "float7")
    assert result.code != 0 and "KBT999" not in result.err
    assert len(result.err.strip().splitlines()) == 1 and "float7" in result.err


@pytest.mark.parametrize("dtype", ["float8_e4m3fnuz", "complex32", "uint32", "float8_e5m2"])
def test_compare_judges_or_refuses_in_one_line(kbt, tmp_path, dtype):
    values = torch.linspace(0, 4, 64)
    tensor = torch.complex(values, values).to(torch.complex32) if dtype == "complex32" else values.to(getattr(torch, dtype))
    path = tmp_path / "t.pt"
    torch.save(tensor, path)
    result = kbt("compare", "--dut", path, "--golden", path)
    assert "Traceback" not in result.err and "KBT999" not in result.err
    if result.code:
        assert len(result.err.strip().splitlines()) == 1 and dtype in result.err
    else:
        assert "PASS" in result.out or "differing 0" in result.out, result.out


@pytest.mark.parametrize("name", ["float8_e8m0fnu", "float8_e4m3fnuz", "complex32", "chalf", "uint16", "int4", "bits8"])
def test_the_audit_reads_a_view_to_any_torch_dtype_as_a_bit_reinterpretation(name):
    from kb_tools.audit import audit_source

    source = ("import torch\nimport triton\n\n@triton.jit\ndef kernel(x):\n    pass\n\n"
              f"def op_wrapper(x):\n    kernel[(1,)](x.view(torch.{name}))\n")
    findings = audit_source(source, "w.py").findings
    assert [(f.code, f.line) for f in findings] == [("WB112", 9)]
