"""Every worked operator of the catalog (each ops/<op>.yaml with an examples/<op>/ folder), one
parametrised harness: each passes ``kbt verify``, audits clean with one launch, has a fully
filled, honest KB_USAGE.json and small saved legs for every declared dtype, and its own tests
pass with the kernel running on Triton's interpreter (each example's tests, built on
examples/harness.py, plant their own violation in a copy and show the check that names it
catching it). tests/test_examples.py adds the plants that test verify itself, on softmax."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO
from kb_tools.contract.specs import load_spec
from kb_tools.kb.pages import load_kb

OPS = sorted(p.stem for p in (REPO / "ops").glob("*.yaml") if (REPO / "examples" / p.stem).is_dir())
SMALL = 64 * 1024  # bytes per saved leg


@pytest.mark.parametrize("op", OPS)
def test_example_passes_verify(kbt, op):
    example = REPO / "examples" / op
    result = kbt("verify", example, "--root", example)
    stale = "US041" in result.err or "US043" in result.err
    assert result.code == 0, result.err + (f"\nA page {op} selects was edited: run `make examples`, then fill any "
                                           f"new record in examples/{op}/KB_USAGE.json." if stale else "")
    assert "PASS (0 errors, 0 warnings" in result.out and f"{op}_wrapper.py" in result.out


@pytest.mark.parametrize("op", OPS)
def test_example_audits_clean(kbt, op):
    result = kbt("audit", REPO / "examples" / op, "--format", "json")
    report = json.loads(result.out)
    assert result.code == 0 and report["findings"] == [], report["findings"]
    assert [w["name"] for w in report["wrappers"]] == [f"{op}_wrapper"]
    assert [w["launches"] for w in report["wrappers"]] == [1]


@pytest.mark.parametrize("op", OPS)
def test_usage_is_fully_filled_and_honest(op):
    example = REPO / "examples" / op
    usage = json.loads((example / "KB_USAGE.json").read_text())
    kb = load_kb(REPO)
    statuses = {record["implementation"]["status"] for record in usage["invariants"]}
    assert statuses == {"implemented", "deviated", "not_applicable"}  # a worked example shows each in use
    for record in usage["invariants"]:
        impl, why = record["implementation"], record["justification"]
        assert impl["status"] in ("implemented", "deviated", "not_applicable"), record["invariant_id"]
        if impl["status"] == "not_applicable":
            assert why and impl["file"] is None
        else:
            assert (example / impl["file"]).is_file() and impl["symbol"] in (example / impl["file"]).read_text()
        if impl["status"] == "deviated":
            assert len(why) > 40
        page = kb.by_path(record["reference"])
        invariant = next(i for i in page.invariants if i.id == record["invariant_id"])
        if invariant.check == "static":  # never waived: the audit decides it
            assert impl["status"] == "implemented", record["invariant_id"]
            if invariant.rule.startswith("WB"):
                assert impl["file"] == f"ops/wrappers/{op}_wrapper.py"


@pytest.mark.parametrize("op", OPS)
def test_saved_legs_cover_every_declared_dtype_and_are_small(op):
    spec = load_spec(REPO / "ops" / f"{op}.yaml")
    assert spec.wrapper == f"ops/wrappers/{op}_wrapper.py" and spec.tensors == "tensors"
    for dtype in spec.dtypes:
        folder = REPO / "examples" / op / spec.tensors / dtype
        legs = ("dut", "golden", "third_party") if spec.criteria[dtype] == "cross_check" else ("dut", "golden")
        for leg in ("input", *legs):
            found = [p for p in folder.glob(f"{leg}.*") if p.suffix in (".npy", ".pt")]
            assert len(found) == 1 and found[0].stat().st_size < SMALL, (dtype, leg)


@pytest.mark.parametrize("op", OPS)
def test_example_own_tests_pass_on_the_interpreter(op):
    """The runtime claims, the saved DUT tensors equal to a fresh interpreted run, and the planted
    violation; one process per example (each has its own ops/ and legs/ packages)."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}  # per process, before triton is imported
    test = REPO / "examples" / op / f"test_{op}.py"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(test)],
                          cwd=REPO, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout and "planted" in test.read_text()
