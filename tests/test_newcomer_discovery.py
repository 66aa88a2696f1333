"""Issue 41.1 and 41.3: the spec a newcomer's command needs is found as they would expect, or
one line names the flag to pass; a spec with a gap is refused, naming the dtype and its line."""

from __future__ import annotations

import os
import time

import pytest

from kb_tools.contract import discovery

SPEC = ("op: rmsnorm\ntopologies: [row-reduction]\nproperties:\n  dtypes: [float16, float32]\n"
        "criteria:\n  float16: cross_check\n  float32: close\nwrapper: code/launch.py\n")


def project(tmp_path, spec: str = SPEC):
    """A newcomer's folder, not named after the operator: ops/rmsnorm.yaml, code/launch.py, legs/golden.py."""
    root = tmp_path / "my_project"
    for sub in ("ops", "code", "legs"):
        (root / sub).mkdir(parents=True)
    (root / "ops" / "rmsnorm.yaml").write_text(spec)
    (root / "code" / "launch.py").write_text("def launch(x):\n    return x\n")
    (root / "legs" / "golden.py").write_text("def golden(x):\n    return x\n")
    return root


def test_the_only_spec_above_a_file_is_found_from_a_folder_not_named_after_the_operator(tmp_path):
    root = project(tmp_path)
    found = discovery.discover(root / "legs" / "golden.py")
    assert found.spec.op == "rmsnorm" and "only spec" in found.how


def test_among_several_specs_the_one_naming_the_file_as_wrapper_or_by_name_is_found(tmp_path):
    root = project(tmp_path)
    (root / "ops" / "other.yaml").write_text(SPEC.replace("op: rmsnorm", "op: other").replace("wrapper: code/launch.py\n", ""))
    assert discovery.discover(root / "code" / "launch.py").spec.op == "rmsnorm"  # the wrapper it names
    (root / "other").mkdir()
    assert discovery.discover(root / "other" / "kernel.py").spec.op == "other"  # the folder's name
    with pytest.raises(discovery.KbError) as caught:
        discovery.discover(root / "legs" / "golden.py", "--spec X")
    line = str(caught.value)
    assert "\n" not in line and "2 specs could be this operator's" in line and line.endswith("pass --spec X")
    assert caught.value.exit_code == 2


def test_a_selection_beside_the_code_names_the_spec(tmp_path, kbt):
    root = project(tmp_path)
    (root / "ops" / "other.yaml").write_text(SPEC.replace("op: rmsnorm", "op: other"))
    (root / "legs" / "KB_SELECTION.json").write_text('{"op": "other", "class_id": "."}')
    found = discovery.discover(root / "legs" / "golden.py")
    assert found.spec.op == "other" and "KB_SELECTION.json" in found.how
    (root / "legs" / "KB_SELECTION.json").write_text('{"op": "nobody"}')
    with pytest.raises(discovery.KbError, match="names op 'nobody', but no ops/\\*.yaml above it declares it"):
        discovery.discover(root / "legs" / "golden.py")
    (root / "legs" / "KB_SELECTION.json").write_text("[" * 100_000)
    with pytest.raises(discovery.KbError, match="cannot be read as JSON"):
        discovery.discover(root / "legs" / "golden.py")


def test_commands_find_the_spec_from_the_current_folder_and_say_which(tmp_path, kbt, monkeypatch):
    root = project(tmp_path)
    monkeypatch.chdir(root / "legs")
    result = kbt("usage", "-o", tmp_path / "out")
    assert result.code == 0, result.err
    assert f"kbt usage: spec {root / 'ops' / 'rmsnorm.yaml'} (the only spec in {root / 'ops'})" in result.err
    assert (tmp_path / "out" / "KB_USAGE.json").is_file()
    result = kbt("select", "golden.py", "-o", tmp_path / "sel")
    assert result.code == 0 and (tmp_path / "sel" / "KB_SELECTION.json").is_file()


def test_no_spec_is_one_line_naming_the_flag_to_pass(tmp_path, kbt, monkeypatch):
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    result = kbt("usage")
    assert result.code == 2
    assert result.err.splitlines() == [
        ".: SP040 no operator spec found: no KB_SELECTION.json and no ops/*.yaml in this folder or 7 above it; "
        "pass --spec ops/<op>.yaml to kbt usage"]


def test_a_broken_only_spec_is_reported_with_its_line_not_passed_over(tmp_path, kbt):
    root = project(tmp_path, SPEC.replace("row-reduction", "reduction"))
    result = kbt("select", root / "legs" / "golden.py")
    assert result.code == 1
    assert result.err.splitlines()[-1].startswith(f"{root / 'ops' / 'rmsnorm.yaml'}:2: SP020 topologies.0: 'reduction'")


def test_a_symlink_loop_and_an_unreadable_folder_end_the_search_in_one_line(tmp_path, kbt, monkeypatch):
    root = project(tmp_path)
    (root / "loop").symlink_to(root / "loop")
    result = kbt("usage", root / "loop" / "x.py")
    assert result.code == 2 and len(result.err.splitlines()) == 1
    assert "symlink loop" in result.err and "pass --spec ops/<op>.yaml to kbt usage" in result.err
    (root / "ops" / "other.yaml").write_text(SPEC.replace("op: rmsnorm", "op: other").replace("code/launch.py", "loop/x.py"))
    result = kbt("usage", root / "code" / "launch.py", "-o", tmp_path / "out")  # a spec's wrapper path in the loop
    assert result.code == 0 and "(the spec in" in result.err
    real_scandir = os.scandir

    def refused(path):  # what an unreadable folder does, whoever runs the suite (root reads any folder)
        if str(path).endswith("ops"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", refused)
    result = kbt("usage", root / "legs" / "golden.py")
    assert result.code == 2
    assert result.err.splitlines() == [f"{root / 'ops'}: SP040 cannot be read (Permission denied) to search for the "
                                       "operator's spec; pass --spec ops/<op>.yaml to kbt usage"]


def test_ten_thousand_yaml_files_are_refused_quickly_without_loading_them(tmp_path, kbt):
    ops = tmp_path / "big" / "ops"
    ops.mkdir(parents=True)
    for i in range(10_000):
        (ops / f"s{i}.yaml").write_text("")
    started = time.process_time()
    result = kbt("usage", tmp_path / "big")
    assert result.code == 2 and len(result.err.splitlines()) == 1
    assert "over 2000 entries" in result.err and "pass --spec ops/<op>.yaml" in result.err
    assert time.process_time() - started < 5  # a bound on the search, not a timing claim: it loads no spec


def test_a_gap_or_an_undeclared_criterion_is_an_error_with_its_line_and_the_fix(tmp_path, kbt):
    root = project(tmp_path, SPEC.replace("  float32: close\n", ""))
    result = kbt("usage", "--spec", root / "ops" / "rmsnorm.yaml", "-o", tmp_path / "out")
    assert result.code == 1 and not (tmp_path / "out").exists()
    assert f"{root / 'ops' / 'rmsnorm.yaml'}:4: SP030 dtype float32 has no entry in criteria" in result.err
    assert "add `float32: <criterion>` under criteria" in result.err
    (root / "ops" / "rmsnorm.yaml").write_text(SPEC.replace("  float32: close\n", "  float32: close\n  int8: binary_equal\n"))
    result = kbt("select", root / "ops" / "rmsnorm.yaml", "-o", tmp_path / "out")
    assert result.code == 1
    assert (f"{root / 'ops' / 'rmsnorm.yaml'}:8: SP021 criteria names 'int8', which is not in properties.dtypes; "
            "add int8 to properties.dtypes or drop this entry") in result.err


def test_every_shipped_spec_has_a_criterion_for_each_dtype(kbt, tmp_path):
    from kb_tools.contract.specs import load_spec, spec_files
    from conftest import REPO

    for path in spec_files(REPO / "ops"):
        assert load_spec(path).criterion_gaps() == [], path


def test_build_refuses_a_spec_with_a_gap_and_builds_the_others(tmp_path, kbt):
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "rmsnorm.yaml").write_text(SPEC.replace("  float32: close\n", ""))
    (ops / "other.yaml").write_text(SPEC.replace("op: rmsnorm", "op: other"))
    result = kbt("build", ops, "-o", tmp_path / "out")
    assert result.code == 1
    assert f"{ops / 'rmsnorm.yaml'}:4: SP030 dtype float32 has no entry in criteria" in result.err
    assert (tmp_path / "out" / "other" / "KB_USAGE.json").is_file() and not (tmp_path / "out" / "rmsnorm").exists()


def test_a_cann_operator_folder_without_a_spec_says_so_and_names_the_flag(tmp_path, kbt):
    folder = tmp_path / "add_custom"
    (folder / "op_host").mkdir(parents=True)
    result = kbt("usage", folder)
    assert result.code == 2 and result.err.splitlines() == [
        f"{folder}: SP040 no operator spec found: no KB_SELECTION.json and no ops/*.yaml in this folder or 7 above it "
        f"(its op_host/ registers no output dtype opkb reads; kbt spec {folder} says what was not read); "
        "pass --spec ops/<op>.yaml to kbt usage"]
