"""The kernel's widening is read per registered float: a widening inside a branch on the kernel's
dtype widens only the floats that take it, and GD108 judges a two-party golden's widening of each
low float that reaches the cast against that float's own widening."""

import shutil
from pathlib import Path

import pytest

from kb_tools.cann.golden_flow import judge_golden
from kb_tools.cann.kernel import kernel_facts

ROOT = Path(__file__).parent / "fixtures" / "cann_kernel_per_dtype" / "math"
GOLDEN = Path("tests") / "assets" / "golden.py"


def _findings(folder: Path) -> list[tuple[str, int, str]]:
    findings, error = judge_golden(folder / GOLDEN, f"{folder.name}/{GOLDEN.as_posix()}")
    assert error is None
    return [(f.code, f.line, f.severity) for f in findings]


def _widening(folder: Path) -> dict[str, str]:
    return {d: w for d, (w, _) in kernel_facts(folder, folder.name).per_dtype.items()}


def test_a_cast_in_the_bfloat16_branch_widens_bfloat16_only():
    facts = kernel_facts(ROOT / "scaled_add", "scaled_add")
    assert (facts.widening, facts.widening_at) == ("float32", "scaled_add/op_kernel/scaled_add.h:9")
    assert facts.per_dtype == {
        "bfloat16": ("float32", "scaled_add/op_kernel/scaled_add.h:9"),
        "float16": ("none", "scaled_add/op_kernel/scaled_add.h:9: float only under bfloat16"),
        "float32": ("none", "scaled_add/op_kernel/scaled_add.h:9: float only under bfloat16"),
    }


def test_widening_float16_where_the_kernel_widens_bfloat16_only_is_an_error():
    """Line 12 widens bfloat16 only (guarded): fine. Line 14 widens float16 only, line 15 both:
    errors naming float16. The second entry never widens: GD103 names bfloat16, not float16."""
    assert _findings(ROOT / "scaled_add") == [("GD108", 14, "error"), ("GD108", 15, "error"),
                                              ("GD103", 19, "warning")]
    findings, _ = judge_golden(ROOT / "scaled_add" / GOLDEN, "scaled_add/tests/assets/golden.py")
    assert findings[0].message.startswith("scaled_add: the two-party golden computes float16 in float32 ")
    assert "(none, scaled_add/op_kernel/scaled_add.h:9: float only under bfloat16)" in findings[0].message
    assert "never widens bfloat16, while" in findings[2].message


def test_a_simt_conversion_under_bfloat16_and_a_golden_widening_bfloat16_only_is_fine():
    assert _widening(ROOT / "strided_sum") == {"bfloat16": "unknown", "float16": "none", "float32": "none"}
    assert kernel_facts(ROOT / "strided_sum").widening == "unknown"  # the kernel-wide value is unchanged
    assert _findings(ROOT / "strided_sum") == []


def test_the_same_golden_widening_float16_too_is_an_error(tmp_path):
    folder = tmp_path / "strided_sum"
    shutil.copytree(ROOT / "strided_sum", folder)
    golden = folder / GOLDEN
    golden.write_text(golden.read_text().replace('if a.dtype.name == "bfloat16":', "if True:"))
    assert _findings(folder) == [("GD108", 12, "error"), ("GD108", 13, "error")]


def test_a_kernel_that_widens_every_half_dtype_draws_nothing():
    facts = kernel_facts(ROOT / "wide_sum", "wide_sum")
    assert facts.per_dtype == {
        "bfloat16": ("float32", "wide_sum/op_kernel/wide_sum.h:10"),
        "float16": ("float32", "wide_sum/op_kernel/wide_sum.h:6"),
        "float32": ("unknown", "wide_sum/op_kernel/wide_sum.h:3"),
    }
    assert _findings(ROOT / "wide_sum") == []


def test_a_branch_on_another_type_parameter_stays_unknown():
    assert _widening(ROOT / "opaque_sum") == {"bfloat16": "unknown", "float16": "unknown"}
    assert _findings(ROOT / "opaque_sum") == []


def test_an_if_on_the_input_dtype_macro_places_the_float():
    assert _widening(ROOT / "macro_sum") == {"bfloat16": "unknown", "float16": "none"}
    assert _findings(ROOT / "macro_sum") == [("GD108", 11, "error")]


@pytest.mark.parametrize("condition, expected", [
    ("std::is_same_v<T, half> || std::is_same_v<T, bfloat16_t>", {"bfloat16": "float32", "float16": "float32"}),
    ("!std::is_same_v<T, half>", {"bfloat16": "float32", "float16": "none"}),
    ("std::is_same<half, T>::value && isTail", {"bfloat16": "none", "float16": "float32"}),
    ("isTail", {"bfloat16": "float32", "float16": "float32"}),
    ("std::is_same_v<T, int32_t>", {"bfloat16": "float32", "float16": "float32"}),
    ("IsSameType<Acc, half>::value", {"bfloat16": "unknown", "float16": "unknown"}),
])
def test_conditions_on_the_dtype(tmp_path, condition, expected):
    """``||``, ``!`` and ``&&`` of tests on T place the cast; a test on something else (a flag,
    an integer type) leaves it to every float; a test on another parameter cannot be placed."""
    folder = tmp_path / "opaque_sum"
    shutil.copytree(ROOT / "opaque_sum", folder)
    (folder / "op_kernel" / "opaque_sum.h").write_text(
        "template <typename T>\n"
        "__aicore__ inline void Reduce(LocalTensor<T>& y, LocalTensor<T>& x, TBuf<>& buf, uint32_t n, bool isTail)\n"
        "{\n"
        f"    if constexpr ({condition}) {{\n"
        "        Cast<float, T>(buf.Get<float>(), x, RoundMode::CAST_NONE, n);\n"
        "    }\n"
        "    ReduceSum(y, x, n);\n"
        "}\n")
    assert _widening(folder) == expected


def test_an_else_branch_takes_the_floats_its_if_does_not(tmp_path):
    folder = tmp_path / "opaque_sum"
    shutil.copytree(ROOT / "opaque_sum", folder)
    (folder / "op_kernel" / "opaque_sum.h").write_text(
        "template <typename T>\n"
        "__aicore__ inline void Reduce(LocalTensor<T>& y, LocalTensor<T>& x, TBuf<>& buf, uint32_t n)\n"
        "{\n"
        "    if constexpr (std::is_same_v<T, bfloat16_t>) {\n"
        "        ReduceSum(y, x, n);\n"
        "    } else if (n > 1)\n"
        "        Cast<float, T>(buf.Get<float>(), x, RoundMode::CAST_NONE, n);\n"
        "    ReduceSum(y, x, n);\n"
        "}\n")
    assert _widening(folder) == {"bfloat16": "none", "float16": "float32"}


def test_a_kernel_file_written_for_one_float_widens_that_float_only():
    """split_floor_f32.h names float as its own element type: half and bfloat16, each floored
    in its own file, are not widened, so the golden's float32 floor is an error for both."""
    assert _widening(ROOT / "split_floor") == {"bfloat16": "none", "float16": "none", "float32": "unknown"}
    findings = _findings(ROOT / "split_floor")
    assert findings[0] == ("GD108", 11, "error")


def test_the_name_tested_against_a_dtype_is_narrowed_in_the_other_branch(tmp_path):
    """``calc = np.float32 if dtype == np.float16 else dtype``: calc is never float16, so
    ``np.float32 if calc == np.float32 else np.float64`` picks float64 only for what else is
    registered: bfloat16 here (line 19), nothing once the OpDef registers half and float32 only
    (line 19 then widens half to float32 alone, which the half kernel does not do)."""
    def line_19(folder):
        findings, _ = judge_golden(folder / GOLDEN, "golden.py")
        return [f.message.split(" in split_floor_calc")[0] for f in findings if f.line == 19]

    assert line_19(ROOT / "split_floor") == ["aclnnSplitFloor: the two-party golden computes in float64"]
    folder = tmp_path / "split_floor"
    shutil.copytree(ROOT / "split_floor", folder)
    opdef = folder / "op_host" / "split_floor_def.cpp"
    opdef.write_text(opdef.read_text().replace("ge::DT_BF16, ", ""))
    assert line_19(folder) == ["aclnnSplitFloor: the two-party golden computes float16 in float32"]


def test_a_golden_casting_a_wider_input_down_before_computing_is_narrower_than_the_kernel():
    findings, _ = judge_golden(ROOT / "narrow_max" / GOLDEN, "golden.py")
    assert [(f.code, f.line, f.severity) for f in findings] == [("GD103", 11, "error"), ("GD103", 12, "error")]
    assert "where the OpDef hands it float32" in findings[0].message


def test_casting_down_an_input_no_wider_float_reaches_is_fine(tmp_path):
    folder = tmp_path / "narrow_max"
    shutil.copytree(ROOT / "narrow_max", folder)
    opdef = folder / "op_host" / "narrow_max_def.cpp"
    opdef.write_text(opdef.read_text().replace(", ge::DT_FLOAT}", "}"))
    assert _findings(folder) == []
