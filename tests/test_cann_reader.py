"""kb_tools.cann reads a CANN operator folder statically (fixtures written for opkb in the CANN layout)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kb_tools.cann import find_operators, read_operator
from kb_tools.cann.opdef import read_opdef
from kb_tools.cli import main
from kb_tools.commands import spec as spec_command

FIXTURES = Path(__file__).parent / "fixtures" / "cann"
TOY_ADD = FIXTURES / "math" / "toy_add"


def test_opdef_vectors_macros_socs_and_follow_are_read():
    facts = read_operator(TOY_ADD, "toy_add")
    # kToyTypes (a vector above the class, comment inside) plus the 910b config's macro list
    assert facts.dtypes == ["bfloat16", "float16", "float32", "int32"]
    assert facts.socs == ["ascend950", "ascend910b"]
    assert facts.outputs == {"y": ["float16", "float32", "bfloat16", "int32"]}
    # each dtype points at the .DataType( line that registers it, not the Output( line
    assert facts.sources["dtype float16"] == "toy_add/op_host/toy_add_def.cpp:19"
    assert facts.sources["dtype int32"] == "toy_add/op_host/toy_add_def.cpp:22"
    copy = read_operator(FIXTURES / "conversion" / "toy_copy", "c")
    assert copy.dtypes == ["bool", "float32"]  # y follows x


def test_std_get_of_a_filler_function_and_a_vector_alias_are_resolved():
    root = Path(__file__).parent / "fixtures" / "cann_opdef" / "conversion"
    facts = read_operator(root / "toy_pack", "toy_pack")
    # y = kOut = kData; x and index come from std::get<N> of Pairs(), filled by copies only
    assert facts.dtypes == ["float16", "int8"]
    assert not [p for p in facts.problems if "not resolved" in p]
    assert facts.sources["dtype int8"] == "toy_pack/op_host/toy_pack_def.cpp:43"
    od = read_opdef(root / "toy_pack" / "op_host" / "toy_pack_def.cpp", "d.cpp")
    assert {t.name: t.dtypes for t in od.tensors} == {
        "x": ["float16", "int8"], "index": ["int32", "int64"], "y": ["float16", "int8"]}


def test_a_filler_that_is_not_a_plain_copy_stays_a_path_line_problem():
    root = Path(__file__).parent / "fixtures" / "cann_opdef" / "conversion"
    facts = read_operator(root / "toy_odd", "toy_odd")
    assert facts.dtypes == [] and facts.stale == []
    assert [p.split(": ")[0] for p in facts.problems if "not resolved" in p] == ["toy_odd/op_host/toy_odd_def.cpp:22"]


def test_tensors_handed_to_a_local_helper_take_its_dtypes_and_a_bare_one_is_a_problem():
    facts = read_operator(Path(__file__).parent / "fixtures" / "cann_opdef" / "math" / "toy_grad", "toy_grad")
    # dx through a lambda, index through a member function defined below its call
    assert facts.outputs == {"dx": ["float32", "bfloat16"], "index": ["int32"], "mask": []}
    assert facts.sources["dtype bfloat16"] == "toy_grad/op_host/toy_grad_def.cpp:11"
    assert facts.sources["dtype int32"] == "toy_grad/op_host/toy_grad_def.cpp:24"
    # mask registers nothing: said with its line, and stale is withheld rather than guessed
    assert facts.problems == ["toy_grad/op_host/toy_grad_def.cpp:17: output 'mask' registers no .DataType or .Follow that this reader finds"]
    assert facts.stale == []


def test_criteria_are_the_reached_ones_through_module_constants():
    facts = read_operator(TOY_ADD, "toy_add")
    # _UNUSED_TOL names bfloat16 but no spec class uses it: not a criterion
    assert facts.criteria == {"float16": "cross_check", "float32": "cross_check", "int8": "binary_equal"}
    assert facts.uncovered == ["bfloat16", "int32"]
    assert facts.stale == ["int8"]
    assert facts.three_party and facts.mode == "three_party"
    assert facts.sources["criterion float16"] == "toy_add/tests/assets/golden.py:9"
    assert facts.golden_framework == "torch"


def test_cases_skip_disabled_rows_and_read_the_aclnn_layout():
    facts = read_operator(TOY_ADD, "toy_add")
    assert facts.untested == ["bfloat16", "float32"]  # float32's only case is disabled
    copy = read_operator(FIXTURES / "conversion" / "toy_copy", "c")
    assert copy.untested == ["bool"]  # the bool row is malformed: named, not counted
    assert copy.problems == ["c/tests/st/ttk_aclnn_toy_copy.csv:3: malformed row (4 fields, header has 5)"]
    assert copy.criteria == {} and copy.uncovered == ["bool", "float32"] and copy.golden_framework == "numpy"


def test_kernel_widening_is_read_where_plain():
    facts = read_operator(TOY_ADD, "toy_add")
    assert facts.widening == "float32"
    assert facts.widening_at == "toy_add/op_kernel/toy_add.cpp:5"


def test_kbt_spec_json_is_the_issue_shape(capsys):
    rc = main(["spec", str(FIXTURES), "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 1  # the malformed CSV row is a problem line
    ops = out["operators"]
    assert [o["folder"] for o in ops] == ["conversion/toy_copy", "math/toy_add"]
    assert list(ops[1]) == ["op", "folder", "dtypes", "criteria", "uncovered", "stale", "three_party",
                            "untested", "golden_framework", "sources"]
    rc = main(["spec", str(TOY_ADD), "--format", "json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["operators"][0]["folder"] == "."


def test_kbt_spec_text_is_a_table(capsys):
    assert main(["spec", str(TOY_ADD)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["op", "folder", "dtypes"]
    assert lines[1].startswith("toy_add") and "yes" in lines[1]


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "repo" / "math" / "toy_add"
    shutil.copytree(TOY_ADD, dst)
    return dst


def test_unbalanced_cpp_and_unknown_names_are_path_line(tmp_path):
    op = _copy(tmp_path)
    (op / "op_host" / "toy_add_def.cpp").write_text(
        'class T : public OpDef {\n  T() {\n    this->Output("y").DataType({ge::DT_FLOAT16,\n'
        '    this->Output("z").DataType(SOMEWHERE_ELSE);\n', encoding="utf-8")
    facts = read_operator(op, "t")
    assert any(p.startswith("t/op_host/toy_add_def.cpp:3:") and "unbalanced" in p for p in facts.problems)
    assert any(p.startswith("t/op_host/toy_add_def.cpp:4:") and "SOMEWHERE_ELSE" in p for p in facts.problems)
    assert facts.stale == []  # an unresolved output never makes a criterion stale


@pytest.mark.parametrize("data, line", [(b"def golden(:\n", 1), (b"\n\nx = (\n", 3)])
def test_golden_syntax_error_is_one_line_and_the_rest_is_read(tmp_path, data, line):
    op = _copy(tmp_path)
    (op / "tests" / "assets" / "golden.py").write_bytes(data)
    facts = read_operator(op, "t")
    assert [p for p in facts.problems if "golden" in p][0].startswith(f"t/tests/assets/golden.py:{line}: syntax error")
    assert facts.dtypes == ["bfloat16", "float16", "float32", "int32"]


def test_gbk_and_bom_goldens_are_read(tmp_path):
    op = _copy(tmp_path)
    golden = op / "tests" / "assets" / "golden.py"
    text = golden.read_text(encoding="utf-8").replace('"""Toy', '"""判据 Toy')
    golden.write_bytes(text.encode("gbk"))
    assert read_operator(op, "t").criteria["float16"] == "cross_check"
    golden.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    assert read_operator(op, "t").criteria["float16"] == "cross_check"


def test_huge_csv_stops_at_the_row_limit(tmp_path, monkeypatch):
    from kb_tools.cann import cases
    monkeypatch.setattr(cases, "MAX_ROWS", 1000)
    op = _copy(tmp_path)
    row = 'c,toy_add,"(\'bfloat16\',)","(\'bfloat16\',)",True\n'
    (op / "tests" / "st" / "ttk_big.csv").write_text("testcase_name,op_name,input_dtypes,output_dtypes,is_enabled\n"
                                                     + row * 5000, encoding="utf-8")
    facts = read_operator(op, "t")
    assert "t/tests/st/ttk_big.csv:1001: more than 1000 rows; the rest not read" in facts.problems
    assert "bfloat16" not in facts.untested


def test_symlink_loop_and_folder_without_def(tmp_path):
    repo = tmp_path / "repo"
    _copy(tmp_path)
    (repo / "math" / "loop").symlink_to(repo / "math")
    (repo / "math" / "bare" / "op_host").mkdir(parents=True)
    found = find_operators(repo)
    assert [f.name for f in found] == ["bare", "toy_add"]
    bare = read_operator(found[0], "math/bare")
    assert bare.problems == ["math/bare/op_host:1: no op_host/*_def.cpp; registered dtypes unknown"]


def test_two_thousand_operators_parallel_output_equals_serial(tmp_path, capsys):
    repo = tmp_path / "repo"
    for i in range(2000):
        host = repo / f"cat{i % 4}" / f"op{i:04d}" / "op_host"
        host.mkdir(parents=True)
        (host / f"op{i:04d}_def.cpp").write_text(
            f'class Op{i} : public OpDef {{ Op{i}() {{ this->Output("y").DataType({{ge::DT_FLOAT16}}); }} }};\n',
            encoding="utf-8")
    assert len(find_operators(repo)) == 2000
    assert main(["spec", str(repo), "--format", "json", "--jobs", "1"]) == 0
    serial = capsys.readouterr().out
    assert len(find_operators(repo)) >= spec_command.PARALLEL_FROM  # the pool runs
    assert main(["spec", str(repo), "--format", "json", "--jobs", "2"]) == 0
    assert capsys.readouterr().out == serial
    assert json.loads(serial)["operators"][0]["untested"] == ["float16"]


def test_not_a_folder_is_one_line(tmp_path, capsys):
    assert main(["spec", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "SP050" in err and "Traceback" not in err
    assert os.path.exists(tmp_path) and main(["spec", str(tmp_path)]) == 1
    assert "SP051" in capsys.readouterr().err


def test_a_fifo_named_like_an_opdef_is_not_read(tmp_path):
    op = _copy(tmp_path)
    (op / "op_host" / "toy_add_def.cpp").unlink()
    os.mkfifo(op / "op_host" / "toy_add_def.cpp")
    facts = read_operator(op, "t")  # returns instead of blocking on the FIFO
    assert facts.dtypes == [] and "t/op_host:1: no op_host/*_def.cpp; registered dtypes unknown" in facts.problems


def test_a_golden_that_calls_no_framework_computes_in_numpy(tmp_path):
    """TTK hands a legacy golden numpy arrays: one that imports nothing, or imports a framework
    it never calls (a remote client's loader), computes on them in numpy."""
    from kb_tools.cann.testspec import read_testspec

    golden = tmp_path / "golden.py"
    cases = {
        "def add_golden(x, y, **kw):\n    return x + y\n": ("numpy", 0),
        "import numpy as np\n\ndef g(x, **kw):\n    import torch\n    return x * 2\n": ("numpy", 1),
        "import numpy as np\nimport torch\n\ndef g(x, **kw):\n    return torch.abs(torch.from_numpy(x))\n": ("torch", 2),
    }
    for text, want in cases.items():
        golden.write_text(text)
        facts = read_testspec(golden, "golden.py", "add")
        assert (facts.framework, facts.framework_line) == want, text
