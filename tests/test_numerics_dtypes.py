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


FP8_GOLDEN = '''import torch


def golden_g8(x):
    y = torch.softmax(x, dim=-1)
    return y.to(torch.float8_e4m3fn), y.to(torch.float8_e5m2), y.to(torch.float8_e8m0fnu), y.to(torch.uint16)
'''
FP8_SPEC = "op: g8\ntopologies: [row-reduction]\nproperties:\n  dtypes: [float16]\ncriteria:\n  float16: cross_check\n"


def _fp8_project(tmp_path):
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "g8.yaml").write_text(FP8_SPEC)
    golden = tmp_path / "g8_golden.py"
    golden.write_text(FP8_GOLDEN)
    return golden


def test_fp8_casts_in_a_golden_are_findings_through_the_edit_hook(tmp_path, monkeypatch):
    """hostile: the float8 casts were a KeyError traceback through the CLI, MCP and the edit hook."""
    import json
    import subprocess
    import sys

    from conftest import REPO

    golden = _fp8_project(tmp_path)
    hook = subprocess.run([sys.executable, "-m", "kb_tools", "--kb-root", str(REPO), "hook", "edit"], cwd=tmp_path,
                          input=json.dumps({"tool_input": {"file_path": str(golden)}}), capture_output=True, text=True,
                          timeout=120)
    assert hook.returncode == 2 and "Traceback" not in hook.stderr and "KBT999" not in hook.stderr
    casts = [line for line in hook.stderr.splitlines() if " GD102 " in line]
    assert {"float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu"} <= {w for line in casts for w in line.split() if w.startswith("float8")}


def test_fp8_casts_over_mcp_come_back_as_findings(tmp_path):
    pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'opkb[agents]')")
    from test_agents_mcp import _session

    _fp8_project(tmp_path)

    async def steps(c):
        return await c.call_tool("audit", {"paths": ["g8_golden.py"], "spec": "ops/g8.yaml"})
    answer = _session(tmp_path, steps)
    assert not answer.is_error
    codes = [f["code"] for f in answer.structured_content["result"]["findings"]]
    assert codes.count("GD102") >= 3
