"""A CANN operator folder is a spec for every command that takes one (kb_tools.contract.cann_spec)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kb_tools.contract.cann_spec import as_spec
from kb_tools.cli import main
from kb_tools.contract.discovery import spec_for

TOY_ADD = Path(__file__).parent / "fixtures" / "cann" / "math" / "toy_add"


def test_folder_facts_become_the_spec_with_inferences_stated():
    spec = as_spec(TOY_ADD)
    assert spec.op == "toy_add" and spec.dtypes == ("bfloat16", "float16", "float32", "int32")
    assert spec.criteria == {"float16": "cross_check", "float32": "cross_check"}  # stale int8 dropped
    assert spec.widening == {"bfloat16": "float32", "float16": "float32"}
    assert spec.topologies == ("elementwise",) and spec.target == "a5"
    assert "Topology elementwise: default for a math/" in spec.description
    assert "Target a5: the newest SoC it registers, ascend950" in spec.description
    assert spec.dtype_lines["float16"] == 19


def test_discovery_finds_the_folder_spec():
    found = spec_for(str(TOY_ADD), None)
    assert found.spec.op == "toy_add" and found.how.startswith("the CANN operator folder")


def test_select_on_a_folder_refuses_its_gaps_and_selects_when_covered(tmp_path, capsys):
    assert main(["select", str(TOY_ADD), "-o", str(tmp_path / "a")]) == 1
    err = capsys.readouterr().err
    assert "toy_add/op_host/toy_add_def.cpp:19: SP030 dtype bfloat16" in err
    # the fix is made in the folder: a tolerance in its TestSpec, or the dtype out of its OpDef
    gap = next(line for line in err.splitlines() if "SP030 dtype bfloat16" in line)
    assert "toy_add/tests/assets/golden.py" in gap and "drop ge::DT_BF16 from this DataType list" in gap
    assert "properties.dtypes" not in err and "ops/" not in gap
    assert not (tmp_path / "a" / "KB_SELECTION.json").exists()
    op = tmp_path / "math" / "toy_add"
    shutil.copytree(TOY_ADD, op)
    golden = op / "tests" / "assets" / "golden.py"
    golden.write_text(golden.read_text(encoding="utf-8").replace(
        '"int8": {"standard": "binary_equal"},',
        '"bfloat16": _TOL_FLOAT, "int32": {"standard": "binary_equal"},'), encoding="utf-8")
    assert main(["select", str(op), "-o", str(tmp_path / "b")]) == 0
    selection = json.loads((tmp_path / "b" / "KB_SELECTION.json").read_text(encoding="utf-8"))
    assert selection["op"] == "toy_add"


def test_load_spec_takes_a_folder_so_audit_spec_does(tmp_path, capsys):
    from kb_tools.contract.specs import load_spec
    from kb_tools.diagnostics import KbErrors

    assert load_spec(TOY_ADD).op == "toy_add"
    golden = TOY_ADD / "tests" / "assets" / "golden.py"
    assert main(["audit", "--spec", str(TOY_ADD), str(golden)]) == 0
    assert "0 findings" in capsys.readouterr().out
    bare = tmp_path / "bare"
    (bare / "op_host").mkdir(parents=True)
    try:
        load_spec(bare)
    except KbErrors as exc:
        assert str(exc.diagnostics[0]).startswith(f"{bare / 'op_host'}:1: SP013")
    else:
        raise AssertionError("a folder with no dtypes must be refused")


def test_compare_takes_the_criterion_from_the_folder(tmp_path, capsys):
    import numpy as np

    x = np.linspace(-1, 1, 256, dtype=np.float32)
    np.save(tmp_path / "dut.npy", x.astype(np.float16))
    np.save(tmp_path / "golden.npy", x)
    np.save(tmp_path / "tp.npy", x.astype(np.float16))
    legs = ["--dut", str(tmp_path / "dut.npy"), "--golden", str(tmp_path / "golden.npy")]
    assert main(["compare", *legs, "--spec", str(TOY_ADD)]) == 2  # float16 is cross_check there
    assert "declares cross_check for float16, which needs --third-party" in capsys.readouterr().err
    main(["compare", *legs, "--third-party", str(tmp_path / "tp.npy"), "--spec", str(TOY_ADD), "--format", "json"])
    assert json.loads(capsys.readouterr().out)["criterion"] == "cross_check"


WORKED = Path(__file__).parent / "fixtures" / "cann_worked"


def _worked_copy(tmp_path, monkeypatch, fixed: bool) -> str:
    shutil.copytree(WORKED, tmp_path / "cann_worked")
    monkeypatch.chdir(tmp_path)
    if fixed:
        shutil.copyfile("cann_worked/fixed/golden.py", "cann_worked/math/scale_add/tests/assets/golden.py")
    return "cann_worked/math/scale_add"


def test_select_usage_verify_on_a_folder_audit_its_golden(tmp_path, monkeypatch, capsys):
    folder = _worked_copy(tmp_path, monkeypatch, fixed=False)
    assert main(["select", folder, "-o", folder]) == 0
    assert main(["usage", folder, "-o", folder]) == 0  # the selection in the folder names the folder's op
    capsys.readouterr()
    assert main(["verify", folder]) == 1
    out = capsys.readouterr()
    golden = f"{folder}/tests/assets/golden.py"
    assert f"audited {golden}" in out.out
    # the golden stands where a wrapper would: its findings, and the claims they contradict
    assert f"{golden}:30: GD107" in out.err and f"{golden}:28: GD102" in out.err
    assert "VF010 constraints/golden-promote.md no-float-cast-in-source" in out.err
    assert "VF001" not in out.err and "wrapper `None`" not in out.err
    shutil.copyfile("cann_worked/fixed/golden.py", golden)
    assert main(["verify", folder]) == 1  # the claims are still unfilled, the golden is clean
    err = capsys.readouterr().err
    assert " GD1" not in err and "VF010" not in err and "US043" in err


def test_review_on_a_folder_audits_its_golden(tmp_path, monkeypatch, capsys):
    folder = _worked_copy(tmp_path, monkeypatch, fixed=False)
    assert main(["review", folder]) == 0
    text = capsys.readouterr().out
    assert text.startswith("# Design review: scale_add\n")  # not "no implementation exists yet"
    assert f"`kbt audit {folder}/tests/assets/golden.py` (the folder's golden): 3 findings." in text
    assert "| `no-float-cast-in-source` (static (GD102))" in text and "**FAIL** 1: line 28" in text
    assert "/tmp" not in text.split("## Wrapper audit")[0]  # paths as the user typed them


def test_a_folder_named_like_a_shipped_example_is_its_own_root(tmp_path, monkeypatch, capsys):
    shutil.copytree(TOY_ADD, tmp_path / "add")  # opkb ships examples/add with its own KB_USAGE.json
    monkeypatch.chdir(tmp_path)
    assert main(["review", "add"]) == 0
    text = capsys.readouterr().out
    assert "legs/golden.py" not in text and "**implemented**" not in text


def test_topology_and_target_flags_override_the_folder_inference_and_say_so(tmp_path, capsys):
    folder = str(WORKED / "math" / "scale_add")
    assert main(["select", folder, "-o", str(tmp_path / "inferred")]) == 0
    err = capsys.readouterr().err
    assert "topology elementwise inferred: default for a math/ operator" in err and "pass --topology" in err
    assert "target a2 inferred: the newest SoC it registers, ascend910b" in err
    assert main(["select", folder, "--topology", "row-reduction", "--target", "a5", "-o", str(tmp_path / "given")]) == 0
    err = capsys.readouterr().err
    assert "topology row-reduction given by --topology (inferred elementwise: default for a math/" in err
    assert "target a5 given by --target (inferred a2: the newest SoC it registers, ascend910b)" in err
    inferred, given = (json.loads((tmp_path / d / "KB_SELECTION.json").read_text(encoding="utf-8"))
                       for d in ("inferred", "given"))
    assert (inferred["topologies"], inferred["target"]) == (["elementwise"], "a2")
    assert (given["topologies"], given["target"]) == (["row-reduction"], "a5")
    assert main(["review", folder, "--target", "a3"]) == 0
    assert "Target a3: given by --target; inferred a2 (the newest SoC" in capsys.readouterr().out


def test_topology_flag_on_a_yaml_spec_is_refused_in_one_line(capsys):
    spec = Path(__file__).parents[1] / "ops" / "softmax.yaml"
    assert main(["usage", str(spec), "--topology", "scan", "-o", "/nonexistent/never"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "SP041 --topology set what a CANN operator folder cannot say" in err[0]


def test_a_review_notebook_reads_the_folder_with_the_given_topology(tmp_path, monkeypatch, capsys):
    from kb_tools.outputs.review_checks import ReviewSession

    folder = _worked_copy(tmp_path, monkeypatch, fixed=True)
    # exit 1: no KB_USAGE.json yet, which the notebook reports as a missing input
    assert main(["review", folder, "--topology", "row-reduction", "--format", "notebook", "-o", "rev.ipynb"]) == 1
    source = json.loads(Path("rev.ipynb").read_text(encoding="utf-8"))
    code = "".join("".join(c["source"]) for c in source["cells"] if c["cell_type"] == "code")
    assert "topology='row-reduction')" in code and "target=" not in code
    session = ReviewSession.open(spec=folder, root=folder, kb_root=str(Path(__file__).parents[1]), topology="row-reduction")
    assert session.spec.topologies == ("row-reduction",) and session.spec.target == "a2"
