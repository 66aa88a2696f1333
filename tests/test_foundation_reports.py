"""What a user reads and gets back: modes of written files, and the wording of the
contract checks on an unfilled skeleton, a lone usage file, a spec without a wrapper or
without a criterion for one of its dtypes."""

from __future__ import annotations

import json
import os
import stat

import pytest

from conftest import REPO


@pytest.fixture
def umask():
    """Set the process umask for one test and put the old one back."""
    saved = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(saved)


@pytest.mark.parametrize("mask,mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_written_files_honour_the_umask(kbt, tmp_path, umask, mask, mode):
    umask(mask)
    out = tmp_path / "out"
    assert kbt("usage", REPO / "ops" / "softmax.yaml", "-o", out).code == 0
    usage = out / "KB_USAGE.json"
    written = usage.read_bytes()
    usage.write_text(json.dumps(json.loads(written), indent=1))  # same records spelled otherwise: an equal file is kept, this one is merged
    assert kbt("usage", REPO / "ops" / "softmax.yaml", "-o", out).code == 0
    assert usage.read_bytes() == written  # the merge rewrote it, through a new file
    assert kbt("review", REPO / "ops" / "softmax.yaml", "--format", "html", "-o", out / "review.html").code == 0
    for name in ("KB_SELECTION.json", "KB_USAGE.json", "review.html"):
        assert stat.S_IMODE((out / name).stat().st_mode) == mode, name
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


@pytest.fixture
def skeleton(kbt, tmp_path):
    out = tmp_path / "sm"
    assert kbt("usage", REPO / "ops" / "softmax.yaml", "-o", out).code == 0
    return out


def test_verify_unfilled_skeleton_one_line_per_record_and_a_count(kbt, skeleton):
    records = json.loads((skeleton / "KB_USAGE.json").read_text())["invariants"]
    result = kbt("verify", skeleton)
    assert result.code == 1
    unfilled = [line for line in result.err.splitlines() if " US043 " in line]
    assert len(unfilled) == len(records)
    assert len({line.split(":")[1] for line in unfilled}) == len(records)  # each at its own line
    assert not [line for line in result.err.splitlines() if " US030 " in line]
    assert f"US048 {len(records)} of {len(records)} records unfilled" in result.out
    assert f"({len(records)} errors, 0 warnings" in result.out


def test_count_of_unfilled_records_after_filling_some(kbt, skeleton):
    path = skeleton / "KB_USAGE.json"
    doc = json.loads(path.read_text())
    for record in doc["invariants"][:3]:
        record["implementation"]["status"] = "not_applicable"
        record["justification"] = "the operator has no such path"
    path.write_text(json.dumps(doc, indent=2))
    result = kbt("check-usage", path)
    total = len(doc["invariants"])
    assert f"{total - 3} of {total} records unfilled" in result.out


def test_schema_version_as_a_string_names_the_type(kbt, skeleton):
    path = skeleton / "KB_USAGE.json"
    doc = json.loads(path.read_text())
    doc["schema_version"] = str(doc["schema_version"])
    path.write_text(json.dumps(doc, indent=2))
    result = kbt("check-usage", path)
    line = next(line for line in result.err.splitlines() if "schema_version" in line and " US030 " in line)
    assert "is a string; the integer 3 was expected" in line
    assert line.startswith(f"{path}:2:")


def test_check_usage_without_selection_still_reports_the_files_own_errors(kbt, skeleton):
    path = skeleton / "KB_USAGE.json"
    doc = json.loads(path.read_text())
    doc["invariants"][0]["implementation"]["status"] = "verified"
    doc["invariants"][1]["implementation"]["status"] = "deviated"
    path.write_text(json.dumps(doc, indent=2))
    (skeleton / "KB_SELECTION.json").unlink()
    result = kbt("check-usage", path)
    assert result.code == 2 and "Traceback" not in result.err
    lines = result.err.splitlines()
    assert any(" US001 " in line and "KB_SELECTION.json" in line for line in lines)
    verified = next(line for line in lines if " US032 " in line)
    justification = next(line for line in lines if "justification" in line)
    for line in (verified, justification):
        assert line.startswith(f"{path}:") and line.split(":")[1].isdigit(), line


def test_verify_without_wrapper_says_to_rerun_usage(kbt, tmp_path):
    out = tmp_path / "cat"
    spec = tmp_path / "ops" / "cat.yaml"  # the catalog's cat names its wrapper; a copy without it
    spec.parent.mkdir()
    spec.write_text("".join(line for line in (REPO / "ops" / "cat.yaml").read_text().splitlines(keepends=True)
                            if not line.startswith(("wrapper:", "tensors:"))))
    assert kbt("usage", spec, "-o", out).code == 0
    result = kbt("verify", out)
    line = next(line for line in result.err.splitlines() if " VF001 " in line)
    assert "add `wrapper:` to ops/cat.yaml" in line
    assert f"re-run `kbt usage ops/cat.yaml -o {out}`" in line


def test_select_refuses_a_dtype_without_criterion(kbt, tmp_path):
    spec = tmp_path / "partial.yaml"
    spec.write_text("op: partial\ntopologies: [elementwise]\nproperties:\n  dtypes:\n    - float16\n    - int32\n"
                    "criteria: {float16: close}\n")
    result = kbt("select", spec, "-o", tmp_path / "out")
    assert result.code == 1 and not (tmp_path / "out").exists()
    assert result.err.splitlines() == [
        f"{spec}:6: SP030 dtype int32 has no entry in criteria: TTK would judge it by its default "
        "binary_equal instead of this operator's standard (seed 000 §7); add `int32: <criterion>` under criteria "
        "(one of binary_equal, close, mix_tolerance, stat_rel_err, cross_check, quant, gym_gate) or drop int32 "
        "from properties.dtypes"]
    covered = kbt("select", REPO / "ops" / "softmax.yaml", "-o", tmp_path / "sm")
    assert covered.code == 0 and covered.err == ""
