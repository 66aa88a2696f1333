"""The test family (TS101-TS106): one bad and one good fixture per code, reaching the
wrapper through helpers and launches, criteria that are not element-wise, derived dtypes."""

from __future__ import annotations

import json

from audit_family_fixtures import audit, codes, fixture, found
from conftest import REPO
from kb_tools.contract.specs import load_spec

TS = codes("TS")


def test_the_family_has_its_six_codes():
    assert TS == ["TS101", "TS102", "TS103", "TS104", "TS105", "TS106"]


def test_a_kernel_launch_in_the_test_file_reaches_the_kernel(tmp_path):
    src = tmp_path / "test_add.py"
    src.write_text("import torch\nimport triton\n\n\n@triton.jit\ndef add_kernel(x, y, n):\n    pass\n\n\n"
                   "def run(x):\n    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n"
                   "    add_kernel[(1,)](x, y, x.numel())\n    return y\n\n\n"
                   "def test_add():\n    assert torch.equal(run(torch.ones(3)), torch.ones(3))\n")
    result = audit(src)
    assert result.roles == {"impl", "test"}
    assert [f.code for f in result.findings] == []


def test_spec_tolerances_apply_only_to_element_wise_criteria():
    bad = fixture("TS103", "bad")
    assert [c for *_, c in found(bad)] == ["TS103"]  # add2's close / binary_equal
    assert found(bad, spec=load_spec(REPO / "ops" / "softmax.yaml")) == []  # cross_check: no per-element rtol


def test_dtypes_read_from_a_spec_or_prototype_count_as_covered(tmp_path):
    src = tmp_path / "test_softmax.py"
    src.write_text("import torch\nfrom ops.wrappers.softmax_wrapper import softmax_wrapper\n"
                   "from ops.prototypes.softmax import SUPPORTED_DTYPES\n\n\ndef test_rows():\n"
                   "    for name in SUPPORTED_DTYPES:\n        x = torch.zeros(2, 4, dtype=getattr(torch, name))\n"
                   "        assert torch.equal(softmax_wrapper(x), torch.full((2, 4), 0.25, dtype=x.dtype))\n")
    assert found(src, spec=load_spec(REPO / "ops" / "softmax.yaml")) == []
    src.write_text(src.read_text().replace("from ops.prototypes.softmax import SUPPORTED_DTYPES\n", "")
                   .replace("in SUPPORTED_DTYPES", "in ['float16', 'float32']"))
    findings = audit(src, spec=load_spec(REPO / "ops" / "softmax.yaml")).findings
    assert [f.code for f in findings] == ["TS104"] and "bfloat16" in findings[0].message


def test_unseeded_random_is_a_warning_that_does_not_fail_the_run(kbt):
    bad = fixture("TS105", "bad")
    r = kbt("audit", bad, "--format", "sarif")
    assert r.code == 0
    results = json.loads(r.out)["runs"][0]["results"]
    assert [(x["ruleId"], x["level"]) for x in results] == [("TS105", "warning")]
    assert "1 findings (1 warnings)" in kbt("audit", bad).out


def test_the_worked_example_reaches_its_wrapper_and_covers_its_dtypes():
    result = audit(REPO / "examples" / "softmax" / "test_softmax.py")
    assert result.roles == {"test"}
    assert [f.code for f in result.findings if f.code != "TS105"] == []


SEEDED_ELSEWHERE = """import torch
from relu_wrapper import relu_wrapper


def test_first():
{first}    x = torch.randn(8)
    assert torch.equal(relu_wrapper(x), torch.relu(x))


def test_second():
    torch.manual_seed(0)
    x = torch.randn(8)
    assert torch.equal(relu_wrapper(x), torch.relu(x))
"""


def test_a_seed_in_another_test_does_not_seed_this_one(tmp_path):
    src = tmp_path / "test_relu.py"
    src.write_text(SEEDED_ELSEWHERE.format(first=""))
    assert found(src, find_specs=False) == [(6, 15, "TS105")]
    src.write_text(SEEDED_ELSEWHERE.format(first="    torch.manual_seed(1)\n"))
    assert found(src, find_specs=False) == []


def test_a_seed_in_a_fixture_or_a_called_helper_holds(tmp_path):
    src = tmp_path / "test_relu.py"
    src.write_text("import pytest\nimport torch\nfrom relu_wrapper import relu_wrapper\n\n\n@pytest.fixture(autouse=True)\n"
                   "def seeded():\n    torch.manual_seed(0)\n\n\ndef test_relu():\n    x = torch.randn(8)\n"
                   "    assert torch.equal(relu_wrapper(x), torch.relu(x))\n")
    assert found(src, find_specs=False) == []
    src.write_text("import torch\nfrom relu_wrapper import relu_wrapper\n\n\ndef make(n):\n    torch.manual_seed(n)\n"
                   "    return torch.randn(n)\n\n\ndef test_relu():\n    x = make(8)\n"
                   "    assert torch.equal(relu_wrapper(x), torch.relu(x))\n")
    assert found(src, find_specs=False) == []


def test_a_module_bound_by_importorskip_is_read_as_imported(tmp_path):
    src = tmp_path / "test_relu.py"
    body = "    assert torch.equal(relu_wrapper(x), torch.relu(x))\n"
    src.write_text("import pytest\nfrom relu_wrapper import relu_wrapper\n\n\ndef test_relu():\n"
                   "    torch = pytest.importorskip('torch')\n    x = torch.randn(8)\n" + body)
    assert found(src, find_specs=False) == [(7, 15, "TS105")]
    src.write_text("import pytest\nfrom relu_wrapper import relu_wrapper\n\n\ndef test_relu():\n"
                   "    torch = pytest.importorskip('torch')\n    torch.manual_seed(0)\n    x = torch.randn(8)\n" + body)
    assert found(src, find_specs=False) == []


def test_inputs_drawn_at_import_need_a_seed_too(tmp_path):
    src = tmp_path / "test_relu.py"
    src.write_text("import torch\nfrom relu_wrapper import relu_wrapper\n\nX = torch.randn(8)\n\n\ndef test_relu():\n"
                   "    assert torch.equal(relu_wrapper(X), torch.relu(X))\n")
    assert found(src, find_specs=False) == [(4, 11, "TS105")]
    src.write_text("import torch\nfrom relu_wrapper import relu_wrapper\n\ntorch.manual_seed(0)\nX = torch.randn(8)\n\n\n"
                   "def test_relu():\n    assert torch.equal(relu_wrapper(X), torch.relu(X))\n")
    assert found(src, find_specs=False) == []


PER_DTYPE = """import pytest
import torch

from add2_wrapper import add2_wrapper


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32])
def test_add2(dtype):
    x = torch.ones(4, dtype=dtype)
    if dtype == torch.float16:
        assert torch.allclose(add2_wrapper(x, x), x + x, rtol=1e-3, atol=1e-8)
    else:
        assert torch.allclose(add2_wrapper(x, x), x + x, rtol={fp32_rtol}, atol=1e-8)


def test_add2_fp32():
    x = torch.ones(4, dtype=torch.float32)
    assert torch.allclose(add2_wrapper(x, x), x + x, rtol={fp32_rtol}, atol=1e-8)
"""


def test_a_tolerance_is_held_to_the_dtype_it_runs_under(tmp_path):
    spec = load_spec(REPO / "tests" / "fixtures" / "audit_families" / "add2" / "ops" / "add2.yaml")  # close: fp16 1e-3, fp32 1e-4
    src = tmp_path / "test_add2.py"
    src.write_text(PER_DTYPE.format(fp32_rtol="1e-3"))  # fp16's bound: the loosest across dtypes would pass both
    findings = [f for f in audit(src, spec=spec).findings if f.code == "TS103"]
    assert [(f.line, "for float32" in f.message) for f in findings] == [(13, True), (18, True)]  # the else branch excludes fp16
    src.write_text(PER_DTYPE.format(fp32_rtol="1e-4"))
    assert [f for f in audit(src, spec=spec).findings if f.code == "TS103"] == []


def test_a_tolerance_is_held_to_the_gym_gate_mix_rows(tmp_path):
    """gym_gate (the PyPTO-Pro samples' check) is TTK's mixed tolerance with mean gates on top:
    a test looser than the mix row for its dtype is looser than the gate."""
    spec_path = tmp_path / "add2.yaml"
    spec_path.write_text((REPO / "tests" / "fixtures" / "audit_families" / "add2" / "ops" / "add2.yaml")
                         .read_text().replace("float16: close", "float16: gym_gate").replace("float32: close", "float32: gym_gate"))
    spec = load_spec(spec_path)  # gym_gate: float32 rtol 2^-10 (TTK's mix row), float16 2^-9
    src = tmp_path / "test_add2.py"
    src.write_text(PER_DTYPE.format(fp32_rtol="1e-2"))
    findings = [f for f in audit(src, spec=spec).findings if f.code == "TS103"]
    assert [(f.line, "for float32" in f.message) for f in findings] == [(13, True), (18, True)]
    src.write_text(PER_DTYPE.format(fp32_rtol="1e-4"))
    assert [f for f in audit(src, spec=spec).findings if f.code == "TS103"] == []


SCRIPT_ONLY = """import torch
import triton
import triton.language as tl


@triton.jit
def test_copy_kernel(src, dst):
    tl.store(dst, tl.load(src))


def run(x):
    y = torch.empty_like(x)
    test_copy_kernel[(1,)](x, y)
    return y


if __name__ == "__main__":
    print(run(torch.ones(1)))
"""


def test_a_test_file_whose_kernel_runs_only_as_a_script_misses_it(tmp_path):
    bad = tmp_path / "test_copy.py"
    bad.write_text(SCRIPT_ONLY)  # the only test-named function is the kernel; the launch sits under __main__
    findings = [f for f in audit(bad).findings if f.code.startswith("TS")]
    assert [(f.code, f.line) for f in findings] == [("TS101", 18)]
    assert "holds no test function" in findings[0].message
    bad.write_text(SCRIPT_ONLY.replace("    print(run(torch.ones(1)))", "    test_copy_kernel[(1,)](torch.ones(1), torch.ones(1))"))
    assert [(f.code, f.line) for f in audit(bad).findings if f.code.startswith("TS")] == [("TS101", 18)]  # a direct launch
    good = tmp_path / "test_copy_good.py"
    good.write_text(SCRIPT_ONLY + "\n\ndef test_copy():\n    assert torch.equal(run(torch.ones(1)), torch.ones(1))\n")
    assert [f.code for f in audit(good).findings if f.code.startswith("TS")] == []
    script = tmp_path / "copy_demo.py"  # not named as a test: a demo script is not judged by this rule
    script.write_text(SCRIPT_ONLY)
    assert [f.code for f in audit(script).findings if f.code.startswith("TS")] == []


def test_a_marked_jit_test_is_a_test_and_a_registered_launch_is_no_script(tmp_path):
    marked = tmp_path / "test_hist.py"  # pypto's style: @pytest.mark over a @pl.jit test, also called from __main__
    marked.write_text("import pytest\nimport pypto.language as pl\n\n\n@pytest.mark.soc('950')\n@pl.jit\n"
                      "def test_hist(x, y):\n    pl.store(y, [0], x)\n\n\nif __name__ == '__main__':\n    test_hist(1, 2)\n")
    assert [f.code for f in audit(marked).findings if f.code.startswith("TS")] == []
    marked.write_text(marked.read_text().replace("@pytest.mark.soc('950')\n", ""))  # unmarked: a kernel, not a test
    assert [f.code for f in audit(marked).findings if f.code.startswith("TS")] == ["TS101"]
    registered = tmp_path / "test_graph.py"  # the launch sits in a function defined under a module-level try:
    registered.write_text(SCRIPT_ONLY.replace('if __name__ == "__main__":\n    print(run(torch.ones(1)))',
                                              "try:\n    def impl(x):\n        return run(x)\nexcept ImportError:\n    impl = None"))
    assert [f.code for f in audit(registered).findings if f.code.startswith("TS")] == []


HARNESS_SUITE = """import pytest
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst):
    tl.store(dst, tl.load(src))


class Spec:
    def __init__(self, name, init_value=None):
        self.name, self.init_value = name, init_value


class _Case:
    def run(self):
        x = self.define_tensors()[0].init_value()
        y = torch.empty_like(x)
        copy_kernel[(1,)](x, y)
        return y


class CaseA(_Case):
    def define_tensors(self):
        return [Spec("x", init_value=torch.randn)]


class CaseB(_Case):
    def define_tensors(self):
        return [Spec("x", init_value=lambda: torch.ones(4, generator=None))]


CASES = [CaseA]


@pytest.mark.parametrize("case", CASES)
def test_case(case):
    assert case().run() is not None
"""


def test_a_draw_handed_to_a_harness_case_is_reached(tmp_path):
    src = tmp_path / "test_cases.py"  # the test reaches CaseA through CASES, a draw handed over uncalled
    src.write_text(HARNESS_SUITE)
    findings = [f for f in audit(src).findings if f.code == "TS105"]
    assert [(f.code, f.line) for f in findings] == [("TS105", 27)] and "torch.randn" in findings[0].message
    src.write_text(HARNESS_SUITE.replace("    assert case().run()", "    torch.manual_seed(0)\n    assert case().run()"))
    assert [f.code for f in audit(src).findings if f.code == "TS105"] == []  # the test seeds before the case draws
    src.write_text(HARNESS_SUITE.replace("CASES = [CaseA]", "CASES = [CaseB]"))
    assert [f.code for f in audit(src).findings if f.code == "TS105"] == []  # CaseB draws nothing


def test_a_seed_in_one_of_several_same_named_methods_is_not_module_level(tmp_path):
    src = tmp_path / "test_cases.py"  # CaseS.define_tensors seeds, CaseA's (same name, later) draws; only CaseA runs
    src.write_text(HARNESS_SUITE.replace("class CaseA(_Case):", "class CaseS(_Case):\n    def define_tensors(self):\n"
                                         "        torch.manual_seed(0)\n        return []\n\n\nclass CaseA(_Case):"))
    assert [f.code for f in audit(src).findings if f.code == "TS105"] == ["TS105"]


FIXTURE_SEEDED = """import pytest
import torch
from relu_wrapper import relu_wrapper


@pytest.fixture
def seeded():
    torch.manual_seed(0)


def test_relu():
    x = torch.randn(8)
    assert torch.equal(relu_wrapper(x), torch.relu(x))
"""


def test_a_seeding_fixture_counts_only_where_it_runs(tmp_path):
    src = tmp_path / "test_relu.py"
    src.write_text(FIXTURE_SEEDED)  # defined, never requested, not autouse: the test runs unseeded
    assert [f.code for f in audit(src).findings] == ["TS105"]
    for requested in (FIXTURE_SEEDED.replace("def test_relu():", "def test_relu(seeded):"),
                      FIXTURE_SEEDED.replace("\n\ndef test_relu():", "\n\n@pytest.mark.usefixtures('seeded')\ndef test_relu():"),
                      FIXTURE_SEEDED + "\n\npytestmark = pytest.mark.usefixtures('seeded')\n",
                      FIXTURE_SEEDED.replace("@pytest.fixture\n", "@pytest.fixture(autouse=True)\n")):
        src.write_text(requested)
        assert [f.code for f in audit(src).findings] == [], requested


GOLDEN_ONLY = """import torch

from relu_golden import golden_relu


def test_relu():
    torch.manual_seed(0)
    x = torch.randn(8)
    torch.testing.assert_close(golden_relu(x), torch.relu(x), rtol=0, atol=0)
"""


def test_a_test_of_the_golden_alone_misses_the_delivery_whether_or_not_the_folder_holds_it(tmp_path):
    src = tmp_path / "test_relu.py"
    src.write_text(GOLDEN_ONLY)
    alone = [f for f in audit(src, find_specs=False).findings]
    assert [(f.code, f.line) for f in alone] == [("TS101", 6)] and "folder holds no implementation" in alone[0].message
    (tmp_path / "relu_impl.py").write_text("import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n")
    other = tmp_path / "beside"
    other.mkdir()
    (other / "relu_impl.py").write_text("def relu_impl(x):\n    return x\n")
    (other / "test_relu.py").write_text(GOLDEN_ONLY)
    beside = audit(other / "test_relu.py", find_specs=False).findings
    assert [f.code for f in beside] == ["TS101"] and "`relu_impl.py` beside it" in beside[0].message
    src.write_text(GOLDEN_ONLY.replace("from relu_golden import golden_relu", "from relu_golden import golden_relu\nfrom mylib import relu")
                   .replace("torch.relu(x)", "relu(x)"))  # an imported function may be the delivery: not judged
    assert audit(src, find_specs=False).findings == []


def test_exact_comparison_follows_the_spec_criterion_and_says_once_when_it_cannot_tell(tmp_path):
    spec_dir = tmp_path / "ops"
    spec_dir.mkdir()
    (spec_dir / "cp.yaml").write_text("op: cp\ntopologies: [elementwise]\nproperties:\n  dtypes: [float16]\n"
                                      "criteria:\n  float16: binary_equal\nwrapper: cp_wrapper.py\n")
    body = ("import torch\n\nfrom cp_wrapper import cp_wrapper\n\n\ndef test_cp():\n    torch.manual_seed(0)\n"
            "    x = torch.randn(8, dtype=torch.float16) * 2\n    assert torch.equal(cp_wrapper(x), torch.exp(x))\n")
    src = tmp_path / "test_cp.py"
    src.write_text(body)
    assert audit(src).findings == []  # the spec says binary_equal for float16
    assert [f.code for f in audit(src, find_specs=False).findings] == ["TS106"]
    src.write_text(body.replace("torch.randn(8, dtype=torch.float16) * 2", "load_case()"))
    result = audit(src, find_specs=False)
    assert result.findings == [] and result.note.count("AU015") == 1 and "line 9" in result.note


def test_one_tree_judged_under_two_specs_gets_two_verdicts(tmp_path):
    """A rule's memo of the last file is held by the tree and spec themselves: the same tree read
    first under a spec that says binary_equal, then with none, is judged afresh (a memo keyed by
    the tree's id answered the second reading with the first one's verdict whenever an id was reused)."""
    import ast

    from kb_tools.audit.families import FamilyOptions, family_findings
    from kb_tools.audit.module import ModuleInfo

    spec_file = tmp_path / "cp.yaml"
    spec_file.write_text("op: cp\ntopologies: [elementwise]\nproperties:\n  dtypes: [float16]\n"
                         "criteria:\n  float16: binary_equal\nwrapper: cp_wrapper.py\n")
    text = ("import torch\n\nfrom cp_wrapper import cp_wrapper\n\n\ndef test_cp():\n    torch.manual_seed(0)\n"
            "    x = torch.randn(8, dtype=torch.float16) * 2\n    assert torch.equal(cp_wrapper(x), torch.exp(x))\n")
    tree = ast.parse(text)
    module = ModuleInfo(tree, text=text)
    path = str(tmp_path / "test_cp.py")
    with_spec = family_findings(tree, module, path, FamilyOptions(spec=load_spec(spec_file)))[1]
    without = family_findings(tree, module, path, FamilyOptions(find_specs=False))[1]
    assert [f.code for f in with_spec] == [] and [f.code for f in without] == ["TS106"]
