"""Two-party goldens are handed only the dtypes the OpDef registers: a branch that needs another
dtype is dead, and a framework reached through a re-exporting module is still that framework."""

import shutil
from pathlib import Path

from kb_tools.cann.golden_flow import judge_golden
from kb_tools.cann.testspec import read_testspec

ROOT = Path(__file__).parent / "fixtures" / "cann_two_party_guards" / "math"
GOLDEN = Path("tests") / "assets" / "golden.py"


def _gd108(folder: Path) -> list[int]:
    findings, error = judge_golden(folder / GOLDEN)
    assert error is None
    return [f.line for f in findings if f.code == "GD108"]


def test_a_guard_on_an_unregistered_dtype_is_dead():
    assert _gd108(ROOT / "soft_floor") == []


def test_the_same_guard_is_live_where_the_dtype_is_registered():
    assert _gd108(ROOT / "soft_floor_bf16") == [11, 12, 14]


def test_conditionals_on_the_input_dtype_follow_the_registered_dtypes():
    assert _gd108(ROOT / "pair_force") == []


def test_a_registered_half_input_keeps_the_wide_alternative_live(tmp_path):
    folder = tmp_path / "pair_force"
    shutil.copytree(ROOT / "pair_force", folder)
    opdef = folder / "op_host" / "pair_force_def.cpp"
    opdef.write_text(opdef.read_text().replace('Input("deriv").DataType({ge::DT_FLOAT})',
                                               'Input("deriv").DataType({ge::DT_FLOAT16, ge::DT_FLOAT})'))
    assert _gd108(folder) == [16]


def test_an_unresolved_opdef_decides_nothing(tmp_path):
    folder = tmp_path / "soft_floor"
    shutil.copytree(ROOT / "soft_floor", folder)
    (folder / "op_host" / "soft_floor_def.cpp").write_text(
        'this->Input("x").DataType(UNKNOWN_LIST);\nthis->Output("y").DataType({ge::DT_FLOAT16});\n')
    assert _gd108(folder) == [11, 12, 14]


def test_a_framework_re_exported_under_its_name_is_that_framework():
    facts = read_testspec(ROOT / "pair_force" / GOLDEN, "golden.py", "pair_force")
    assert (facts.framework, facts.framework_line) == ("tf", 11)


def test_a_substring_test_on_an_unknown_tensor_is_not_taken_as_true(tmp_path):
    """``"float" in str(x.dtype)`` where x is reassigned (so its dtype is not the input's) may
    be false for an integer: the branch stays open, and its widening is still judged."""
    folder = tmp_path / "soft_floor"
    shutil.copytree(ROOT / "soft_floor", folder)
    golden = folder / GOLDEN
    golden.write_text(golden.read_text().replace('"bfloat16" in str(x.dtype)', '"float" not in str(x.dtype)'))
    assert _gd108(folder) == [11, 12]
