"""``kbt verify`` on a copy of the worked softmax example catches a violation planted in it: a
host ``.contiguous()`` in the wrapper, a claim at a symbol that does not exist. What every
worked example must pass (verify, audit, claims, saved legs, its own tests) is
tests/test_catalog_examples.py's, softmax included."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import REPO

EXAMPLE = REPO / "examples" / "softmax"


@pytest.fixture
def example_copy(tmp_path):
    dest = tmp_path / "softmax"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_verify_catches_a_host_contiguous(kbt, example_copy):
    wrapper = example_copy / "ops" / "wrappers" / "softmax_wrapper.py"
    text = wrapper.read_text()
    allocation = "    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n"
    planted = text.replace(allocation, "    x = x.contiguous()\n" + allocation)
    assert planted != text
    wrapper.write_text(planted)
    result = kbt("verify", example_copy, "--root", example_copy)
    assert result.code == 1
    assert "WB102" in result.err and "VF010" in result.err and "no-host-layout-change" in result.err
    line = planted.splitlines().index("    x = x.contiguous()") + 1
    assert f"softmax_wrapper.py:{line}:" in result.err


def test_verify_catches_a_claim_at_a_missing_symbol(kbt, example_copy):
    path = example_copy / "KB_USAGE.json"
    usage = json.loads(path.read_text())
    record = next(r for r in usage["invariants"] if r["invariant_id"] == "fp32-accumulator")
    record["implementation"]["symbol"] = "softmax_fp32_accumulate"  # occurs nowhere
    path.write_text(json.dumps(usage, indent=2))
    result = kbt("verify", example_copy, "--root", example_copy)
    assert result.code == 1
    assert "US046" in result.err and "softmax_fp32_accumulate" in result.err
    assert "PASS" not in result.out
