"""The worked operator under examples/: it passes ``kbt verify``, its own tests pass, and a
violation planted in a copy — a host ``.contiguous()``, a claim at a symbol that does not
exist — is caught by verify."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import REPO
from kb_tools.contract.specs import load_spec
from kb_tools.kb.pages import load_kb

EXAMPLE = REPO / "examples" / "softmax"


@pytest.fixture
def example_copy(tmp_path):
    dest = tmp_path / "softmax"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_worked_example_passes_verify(kbt):
    result = kbt("verify", EXAMPLE, "--root", EXAMPLE)
    stale = "US041" in result.err or "US043" in result.err
    assert result.code == 0, result.err + (
        "\nA page softmax selects was edited: run `make examples`, then fill any new record "
        "in examples/softmax/KB_USAGE.json." if stale else "")
    assert "PASS (0 errors, 0 warnings" in result.out and "softmax_wrapper.py" in result.out


def test_usage_is_fully_filled_and_honest():
    usage = json.loads((EXAMPLE / "KB_USAGE.json").read_text())
    kb = load_kb(REPO)
    statuses = set()
    for record in usage["invariants"]:
        impl = record["implementation"]
        statuses.add(impl["status"])
        assert impl["status"] in ("implemented", "deviated", "not_applicable"), record["invariant_id"]
        if impl["status"] == "not_applicable":
            assert record["justification"] and impl["file"] is None
        else:
            assert (EXAMPLE / impl["file"]).is_file() and impl["symbol"]
        if impl["status"] == "deviated":
            assert len(record["justification"]) > 40
        page = kb.by_path(record["reference"])
        invariant = next(i for i in page.invariants if i.id == record["invariant_id"])
        if invariant.check == "static":  # a static invariant is never waived: the audit decides it
            assert impl["status"] == "implemented"
            if invariant.rule.startswith("WB"):  # the wrapper boundary is claimed at the delivered wrapper
                assert impl["file"] == "ops/wrappers/softmax_wrapper.py"
    assert statuses == {"implemented", "deviated", "not_applicable"}


def test_saved_tensors_cover_every_dtype_of_the_spec():
    spec = load_spec(REPO / "ops" / "softmax.yaml")
    for dtype in spec.dtypes:
        folder = EXAMPLE / spec.tensors / dtype
        for leg in ("input", "dut", "golden", "third_party"):
            found = [p for p in folder.glob(f"{leg}.*") if p.suffix in (".npy", ".pt")]
            assert len(found) == 1 and found[0].stat().st_size < 64 * 1024, (dtype, leg)


def test_worked_example_own_tests_pass():
    """The runtime claims (accumulator, launch count, dispatch trace, legs, boundary cases)."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE / "test_softmax.py")],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


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


def test_worked_example_is_clean_under_every_audit_family(kbt):
    """The example is what a newcomer copies: no wrapper, golden, test or kernel finding,
    warnings included."""
    result = kbt("audit", EXAMPLE, "--format", "json")
    report = json.loads(result.out)
    assert report["findings"] == [], report["findings"]
    assert [w["name"] for w in report["wrappers"]] == ["softmax_wrapper"]
