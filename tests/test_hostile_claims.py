"""Claims that look filled but say nothing are findings, and so are spec entries that repeat
a dtype under another name (hostile-3 repros 20-22)."""

from __future__ import annotations

import json

import pytest

from conftest import REPO
from hostile_support import SOFTMAX_ROOT, filled, filled_usage, load, spec_with


def _check_with(kbt, tmp_path, edit):
    """check-usage of the filled softmax folder after ``edit(record)`` on its first filled
    implemented record; returns (result, that record's reference and invariant id)."""
    usage = filled_usage(kbt, tmp_path / "out")
    doc = load(usage)
    record = next(r for r in filled(doc["invariants"]) if r["implementation"]["status"] == "implemented")
    edit(record)
    usage.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    return kbt("check-usage", usage, "--root", SOFTMAX_ROOT, root=REPO), record


def _findings(result, code):
    return [line for line in result.err.splitlines() if f" {code} " in line]


@pytest.mark.parametrize("symbol", ["no_such_function.", ".", " ", ".*", "softmax_wrapper..x"])
def test_a_symbol_that_is_not_a_name_is_a_finding(kbt, tmp_path, symbol):
    """Repro 20: only the last dotted part was searched, and an empty part matched anywhere."""
    result, record = _check_with(kbt, tmp_path, lambda r: r["implementation"].update(symbol=symbol))
    assert result.code == 1
    (line,) = _findings(result, "US051")
    assert record["invariant_id"] in line and repr(symbol) in line


def test_every_part_of_a_dotted_symbol_must_occur(kbt, tmp_path):
    result, _ = _check_with(kbt, tmp_path, lambda r: r["implementation"].update(symbol="no_such_class." + r["implementation"]["symbol"]))
    assert result.code == 1
    assert any("no_such_class" in line for line in _findings(result, "US046")), result.err


@pytest.mark.parametrize("name", ["/etc/hostname", "../../../../../../etc/hostname"])
def test_an_implementation_file_outside_the_root_is_a_finding(kbt, tmp_path, name):
    """Repro 20: /etc/passwd and ../.. were accepted as implementation files."""
    result, record = _check_with(kbt, tmp_path, lambda r: r["implementation"].update(file=name, symbol="localhost"))
    assert result.code == 1
    (line,) = [line for line in _findings(result, "US045") if repr(name) in line]
    assert "outside" in line and record["invariant_id"] in line


def test_a_binary_implementation_file_is_a_finding(kbt, tmp_path):
    (SOFTMAX_ROOT / "tensors").is_dir() or pytest.skip("the example ships no tensors")
    binary = next(p for p in sorted((SOFTMAX_ROOT / "tensors").rglob("*.npy")))
    name = binary.relative_to(SOFTMAX_ROOT).as_posix()
    result, _ = _check_with(kbt, tmp_path, lambda r: r["implementation"].update(file=name, symbol="x"))
    assert result.code == 1
    assert any("binary" in line for line in _findings(result, "US045")), result.err


def test_a_blank_justification_is_a_finding(kbt, tmp_path):
    def blank(record):
        record["implementation"].update(status="not_applicable", file=None, symbol=None)
        record["justification"] = "   "

    result, record = _check_with(kbt, tmp_path, blank)
    assert result.code == 1
    (line,) = _findings(result, "US053")
    assert record["invariant_id"] in line


def test_an_invariant_id_not_on_its_page_is_a_finding(kbt, tmp_path):
    """Repro 21: check-usage passed a misspelt invariant_id that kbt usage then parked as stale."""
    meant = {}

    def misspell(record):
        meant["id"] = record["invariant_id"]
        record["invariant_id"] = record["invariant_id"][:-1]

    result, record = _check_with(kbt, tmp_path, misspell)
    assert result.code == 1
    (line,) = [line for line in _findings(result, "US054") if repr(record["invariant_id"]) in line]
    assert record["reference"] in line and repr(meant["id"]) in line  # the id meant


@pytest.mark.parametrize("old,new,named", [
    ("dtypes: [float16, bfloat16, float32]", "dtypes: [float16, fp16, half, bfloat16, float32]", "float16"),
    ("  float32: cross_check\n", "  float32: cross_check\n  fp32: binary_equal\n", "float32"),
])
def test_a_dtype_spelt_twice_is_refused(kbt, repo_copy, tmp_path, old, new, named):
    """Repro 22: aliases defeated uniqueItems: float16 three times, two criteria for float32."""
    spec = tmp_path / "dup.yaml"
    spec.write_text(spec_with(old, new))
    result = kbt("usage", spec, "-o", tmp_path / "out", root=REPO)
    assert result.code == 1 and "Traceback" not in result.err
    lines = [line for line in result.err.splitlines() if " SP022 " in line]
    assert lines and all(line.startswith(f"{spec}:") and named in line for line in lines), result.err
    assert not (tmp_path / "out").exists()
    (repo_copy / "ops" / "dup.yaml").write_text(spec.read_text())
    lint = kbt("lint", "-q", root=repo_copy)
    assert lint.code == 1 and any("dup.yaml" in line and " SP022 " in line for line in lint.err.splitlines()), lint.err
