"""kbt verify audits every claim's evidence by the rule the claim names, and names every
mistake in wrapper, golden, test and kernel (issue 38 item 1, issue 41 item 2): a newcomer's
three classic mistakes, in a folder not named after the operator, are all reported."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, copy_example


@pytest.fixture
def newcomer(tmp_path):
    """The softmax example under a folder of another name, its spec beside it in ops/."""
    root = tmp_path / "my_norm_work"
    copy_example("softmax", root, ignore=("__pycache__", "tensors"))
    (root / "ops" / "softmax.yaml").write_bytes((REPO / "ops" / "softmax.yaml").read_bytes())
    return root


def _plant(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return new.strip().splitlines()


def _line_of(path, needle):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def _lines(result, code):
    return [line for line in result.err.splitlines() if f" {code} " in line]


def test_the_three_classic_mistakes_are_all_named(kbt, newcomer):
    wrapper = newcomer / "ops" / "wrappers" / "softmax_wrapper.py"
    allocation = "    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n"
    _plant(wrapper, allocation, "    x = x.float()\n    x = x.contiguous()\n" + allocation)
    golden = newcomer / "legs" / "golden.py"
    _plant(golden, "    return torch.softmax(x, dim=dim)", "    return torch.softmax(x, dim=dim).to(torch.float16)")
    result = kbt("verify", newcomer, "--root", newcomer, root=REPO)
    assert result.code == 1 and "FAIL" in result.out
    cast, contiguous = _line_of(wrapper, "x = x.float()"), _line_of(wrapper, "x = x.contiguous()")
    back = _line_of(golden, "torch.float16")
    assert any(f"softmax_wrapper.py:{cast}:" in line for line in _lines(result, "WB101")), result.err
    assert any(f"softmax_wrapper.py:{contiguous}:" in line for line in _lines(result, "WB102")), result.err
    assert any(f"golden.py:{back}:" in line for line in _lines(result, "GD102")), result.err
    (claim,) = [line for line in _lines(result, "VF011") if "golden-promote.md" in line and "no-float-cast-in-source" in line]
    assert f"legs/golden.py:{back}" in claim and "GD102" in claim


def test_an_implemented_claim_on_a_broken_test_fails(kbt, newcomer):
    test = newcomer / "test_softmax.py"
    text = test.read_text()
    assert "# kbt: ignore[TS106]" in text
    test.write_text(text.replace("  # kbt: ignore[TS106]", ""))  # the exact comparison, no longer declared on purpose
    usage = newcomer / "KB_USAGE.json"
    result = kbt("verify", newcomer, "--root", newcomer, root=REPO)
    assert result.code == 1
    line = _line_of(test, "assert torch.equal(run(x), torch.softmax(x.float(), -1).to(torch.bfloat16))")
    assert any(f"test_softmax.py:{line}:" in entry for entry in _lines(result, "TS106")), result.err
    (claim,) = [entry for entry in _lines(result, "VF011") if "floats-not-compared-exactly" in entry]
    record = next(r for r in json.loads(usage.read_text())["invariants"] if r["invariant_id"] == "floats-not-compared-exactly")
    assert record["implementation"]["file"] == "test_softmax.py" and f"test_softmax.py:{line}" in claim


def test_a_claim_on_a_clean_leg_passes(kbt, newcomer):
    result = kbt("verify", newcomer, "--root", newcomer, root=REPO)
    assert result.code == 0 and "PASS" in result.out, result.err
    assert not _lines(result, "VF011")


def test_over_mcp_a_false_claim_about_the_golden_does_not_pass(newcomer):
    pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'opkb[agents]')")
    from test_agents_mcp import _session

    golden = newcomer / "legs" / "golden.py"
    _plant(golden, "    return torch.softmax(x, dim=dim)", "    return torch.softmax(x, dim=dim).half()")

    async def steps(c):
        return await c.call_tool("verify", {"folder": ".", "root": "."})
    answer = _session(newcomer, steps).structured_content
    assert answer["exit_code"] == 1 and not answer["passed"]
    codes = {d["code"] for d in answer["diagnostics"]}
    assert {"GD102", "VF011"} <= codes


KERNEL = '''import triton
import triton.language as tl


@triton.jit
def narrow_exp_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, tl.exp(x), mask=offs < n)
'''


def test_an_implemented_claim_on_a_kernel_file_that_breaks_its_rule_fails(kbt, newcomer):
    (newcomer / "kern.py").write_text(KERNEL)
    usage = newcomer / "KB_USAGE.json"
    doc = json.loads(usage.read_text())
    record = next(r for r in doc["invariants"] if r["invariant_id"] == "bf16-exp-in-fp32")
    record["implementation"].update(file="kern.py", symbol="narrow_exp_kernel")
    usage.write_text(json.dumps(doc, indent=2))
    result = kbt("verify", newcomer, "--root", newcomer, root=REPO)
    assert result.code == 1
    exp_line = _line_of(newcomer / "kern.py", "tl.exp(x)")
    assert any(f"kern.py:{exp_line}:" in line for line in _lines(result, "KN101")), result.err
    (claim,) = [line for line in _lines(result, "VF011") if "bf16-exp-in-fp32" in line]
    assert f"kern.py:{exp_line}" in claim and "KN101" in claim
