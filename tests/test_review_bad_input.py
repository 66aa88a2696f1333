"""A review of what is not there yet, and of inputs that are wrong: a spec with no wrapper says
first that no implementation exists yet; a wrapper path that names no file, a usage file for
another operator and saved legs whose dtype or shape is not the spec's each get one verdict
line naming the file, and the other checks still run."""

from __future__ import annotations

import shutil

import nbformat
import numpy as np

from conftest import REPO
from kb_tools.outputs.review_checks import VERDICT_LINE


def verdicts(path) -> dict:
    nb = nbformat.read(path, as_version=4)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    return {m.group(2): (m.group(1), m.group(3)) for m in VERDICT_LINE.finditer(text)}


def test_a_spec_without_an_implementation_says_so_first(kbt, tmp_path):
    spec = tmp_path / "relu.yaml"
    spec.write_text("op: relu\nclass_id: \".\"\ndescription: max(x, 0), element by element.\n"
                    "topologies: [elementwise]\nproperties:\n  dtypes: [float32]\n  ranks: [1, 2]\n"
                    "target: a2\ncriteria:\n  float32: binary_equal\n")
    target = tmp_path / "r.ipynb"
    result = kbt("review", spec, "--format", "notebook", "--execute", "--root", tmp_path, "-o", target)
    assert result.code == 1 and len(result.out.strip().splitlines()) == 1
    assert result.out.startswith(f"kbt review: {target}: no implementation exists yet (relu: the spec names no wrapper);")
    nb = nbformat.read(target, as_version=4)
    assert nb.cells[0].source.splitlines()[0] == "# Design review: relu (no implementation exists yet)"
    assert {status for status, _ in verdicts(target).values()} == {"MISSING"}
    markdown = kbt("review", spec, "--root", tmp_path)
    assert markdown.out.splitlines()[0] == "# Design review: relu (no implementation exists yet)"


def test_wrong_inputs_each_get_one_line_naming_the_file_and_the_review_goes_on(kbt, tmp_path):
    root = tmp_path / "src"
    shutil.copytree(REPO / "examples" / "add", root, ignore=shutil.ignore_patterns("__pycache__"))
    spec = tmp_path / "add.yaml"
    spec.write_text((REPO / "ops" / "add.yaml").read_text().replace("wrapper: ops/wrappers/add_wrapper.py",
                                                                    "wrapper: ops/wrappers/gone.py"))
    shutil.copy(REPO / "examples" / "floor_divide" / "KB_USAGE.json", root / "KB_USAGE.json")
    int8 = root / "tensors" / "int8" / "dut.npy"
    np.save(int8, np.load(int8).astype(np.int32))  # a leg of another dtype
    golden = root / "tensors" / "float16" / "golden.npy"
    np.save(golden, np.load(golden)[:5])  # a leg of another shape
    target = tmp_path / "r.ipynb"
    result = kbt("review", spec, "--format", "notebook", "--execute", "--root", root, "-o", target)
    assert result.code == 1 and len(result.out.strip().splitlines()) == 1 and "Traceback" not in result.out + result.err
    found = verdicts(target)
    assert found["wrapper audit"][0] == "MISSING" and "src/ops/wrappers/gone.py: no such file" in found["wrapper audit"][1]
    assert found["claims"][0] == "MISSING" and "KB_USAGE.json" in found["claims"][1] and "'floor_divide'" in found["claims"][1]
    assert found["comparison int8"][0] == "FAIL"  # present but wrong (issue 41.5); paths relative to the notebook's folder
    assert found["comparison int8"][1] == "src/tensors/int8/dut.npy holds int32, but the spec makes the dut leg of int8 int8"
    assert found["comparison float16"][0] == "FAIL" and "src/tensors/float16/golden.npy" in found["comparison float16"][1]
    assert "shape (5, 5)" in found["comparison float16"][1]
    assert all(found[f"comparison {d}"][0] == "PASS" for d in ("bfloat16", "float32", "int32", "int64"))
