"""The golden / third-party rules on CANN-layout folders written for these tests (seed 000 §3-§8)."""

import os
import shutil
import time
from pathlib import Path

import pytest

from kb_tools.cann.golden_flow import GOLDEN, golden_files, judge_golden
from kb_tools.cann.kernel import kernel_facts

ROOT = Path(__file__).parent / "fixtures" / "cann_golden"


def judged(op):
    golden = ROOT / "math" / op / GOLDEN
    findings, error = judge_golden(golden, f"math/{op}/{GOLDEN.as_posix()}")
    assert error is None
    return [(f.line, f.code, f.severity) for f in findings], findings


def judged_as(tmp_path, fixture, op, text):
    """The findings on ``text`` as the golden of ``op``, a copy of the fixture folder ``fixture``."""
    folder = tmp_path / "math" / op
    shutil.copytree(ROOT / "math" / fixture, folder)
    (folder / GOLDEN).write_text(text)
    findings, error = judge_golden(folder / GOLDEN, f"math/{op}/{GOLDEN.as_posix()}")
    assert error is None
    return findings


def test_clean_three_party_golden_and_dead_bf16_branch_are_not_findings():
    assert judged("scale_add_good")[0] == []


def test_three_party_casts_exit_cast_and_legs_are_each_found():
    lines, findings = judged("scale_add_bad")
    assert lines == [
        (13, "GD102", "error"),  # getattr(torch, _ACC) through a module constant, in a helper
        (17, "GD102", "error"),  # cumsum(..., dtype=torch.float32)
        (22, "GD110", "error"),  # the leg widens and never narrows back
        (29, "GD107", "error"),  # exit cast through the dtype map _DTYPES["fp32"]
        (40, "GD109", "error"),  # a numpy third-party leg
    ]
    exit_cast = findings[3]
    assert "cross_check for float16 (math/scale_add_bad/tests/assets/golden.py:9)" in exit_cast.message
    assert exit_cast.path == "math/scale_add_bad/tests/assets/golden.py"
    assert "output_dtypes" in exit_cast.fix


def test_two_party_golden_may_widen_as_the_kernel_but_not_further():
    assert judged("mean_two_good")[0] == []
    lines, findings = judged("mean_two_bad")
    assert lines == [(8, "GD108", "error")]
    assert "math/mean_two_bad/op_kernel/mean_two_bad.h:5" in findings[0].message
    assert "mix_tolerance" in findings[0].message


def test_widening_where_the_kernel_never_casts_is_found():
    assert judged("max_copy_bad")[0] == [(10, "GD108", "error"), (11, "GD108", "error")]
    facts = kernel_facts(ROOT / "math" / "max_copy_bad")
    assert facts.widening == "none" and facts.float_dtypes == {"float16", "bfloat16", "float32"}


def test_a_computed_tolerance_makes_the_mode_uncertain_so_a_warning():
    lines, findings = judged("mode_unknown")
    assert lines == [(14, "GD102", "warning")]
    assert "case mode unknown" in findings[0].message


def test_syntax_error_is_one_line_with_path_and_line():
    findings, error = judge_golden(ROOT / "math" / "broken" / GOLDEN, "broken/golden.py")
    assert findings == [] and error.startswith("broken/golden.py:1: the golden does not parse")


def test_repository_walk_finds_every_golden_and_survives_a_symlink_loop(tmp_path):
    shutil.copytree(ROOT, tmp_path / "repo")
    os.symlink(tmp_path / "repo", tmp_path / "repo" / "math" / "loop")
    start = time.monotonic()
    found = golden_files(tmp_path / "repo")
    assert time.monotonic() - start < 10
    assert sorted(p.parts[-4] for p in found) == sorted(p.name for p in (ROOT / "math").iterdir())


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_golden_is_refused_without_blocking(tmp_path):
    op = tmp_path / "math" / "fifo_op"
    (op / "tests" / "assets").mkdir(parents=True)
    os.mkfifo(op / GOLDEN)
    findings, error = judge_golden(op / GOLDEN, "math/fifo_op/tests/assets/golden.py")
    assert findings == [] and error.startswith("math/fifo_op/tests/assets/golden.py:1: cannot read")


def test_hostile_goldens_are_one_line_each(tmp_path):
    op = tmp_path / "math" / "hostile"
    (op / "tests" / "assets").mkdir(parents=True)
    golden = op / GOLDEN
    golden.write_text("def golden(x):\n    return " + "+".join(["x"] * 60000) + "\n")
    findings, error = judge_golden(golden, "hostile/golden.py")
    assert findings == [] and error.startswith("hostile/golden.py:")
    source = "# 中文注释\n__golden__ = {'kernel': {'hostile': 'g'}}\ndef g(x):\n    return x.astype('float64') * 2\n"
    for data in (source.encode("gbk"), "\ufeff".encode() + source.encode()):  # GBK text, a UTF-8 BOM
        golden.write_bytes(data)
        findings, error = judge_golden(golden, "hostile/golden.py")
        assert error is None and [(f.line, f.code) for f in findings] == [(4, "GD108")]  # no kernel: unknown, no double


def test_a_testspec_found_by_ttk_naming_convention_shadows_the_legacy_golden(tmp_path):
    op = tmp_path / "math" / "conv_op"
    shutil.copytree(ROOT / "math" / "mean_two_good" / "op_kernel", op / "op_kernel")
    (op / "op_host").mkdir()
    (op / "tests" / "assets").mkdir(parents=True)
    (op / GOLDEN).write_text(
        "import numpy as np\n"
        "__golden__ = {'kernel': {'conv_op': 'legacy'}}\n"
        "def legacy(x, **kwargs):\n"
        "    return x.astype(np.float64)\n"  # unreached: ConvOpTestSpec is found first
        "class ConvOpTestSpec:\n"
        "    @staticmethod\n"
        "    def golden(x, **kwargs):\n"
        "        return [x.astype(np.float32)]\n"
        "    tolerance = {'float16': {'standard': 'cross_check'}}\n")
    findings, error = judge_golden(op / GOLDEN, "math/conv_op/tests/assets/golden.py")
    assert error is None and [(f.line, f.code) for f in findings] == [(8, "GD107")]


def test_a_leg_that_never_widens_half_while_the_kernel_does_is_a_warning(tmp_path):
    text = (ROOT / "math" / "scale_add_good" / GOLDEN).read_text()
    findings = judged_as(tmp_path, "scale_add_good", "leg_op", text.replace(
        "        wide = x.to(torch.float32)\n        return [(wide * 2.0).to(x.dtype)]", "        return [x * 2.0]"))
    assert [(f.line, f.code, f.severity) for f in findings] == [(25, "GD110", "warning")]  # its __call__
    assert "never widens bfloat16, float16" in findings[0].message


def test_methods_called_through_self_or_the_class_are_followed(tmp_path):
    findings = judged_as(tmp_path, "scale_add_good", "meth_op", (
        "import torch\n"
        "__spec__ = {'meth_op': 'MethSpec'}\n"
        "class _Leg:\n"
        "    def _wide(self, x):\n"
        "        return x.to(torch.float32)\n"
        "    def __call__(self, x, **kwargs):\n"
        "        return [self._wide(x) * 2.0]\n"
        "class MethSpec:\n"
        "    @staticmethod\n"
        "    def _exit(y):\n"
        "        return y.to(torch.float16)\n"
        "    @staticmethod\n"
        "    def golden(x, **kwargs):\n"
        "        return [MethSpec._exit(torch.from_numpy(x) * 2.0)]\n"
        "    third_party = {'torch': _Leg}\n"
        "    tolerance = {'float16': {'standard': 'cross_check'}}\n"))
    assert [(f.line, f.code) for f in findings] == [(5, "GD110"), (11, "GD107")]


def test_a_dtype_held_in_a_local_name_is_followed(tmp_path):
    findings = judged_as(tmp_path, "mean_two_good", "local_op", (
        "import numpy as np\n"
        "__golden__ = {'kernel': {'local_op': 'g'}}\n"
        "def g(x, **kwargs):\n"
        "    cast_type = np.float32 if x.dtype.name == 'float16' else np.float64\n"
        "    keep = np.float32\n"
        "    keep = x.dtype\n"  # assigned twice: not a constant
        "    return (x.astype(cast_type) * 2).astype(keep)\n"))
    assert [(f.line, f.code) for f in findings] == [(7, "GD108")]
    assert "float64" in findings[0].message


KERNELS = Path(__file__).parent / "fixtures" / "cann_kernel"


def kernel_judged(op):
    golden = KERNELS / "math" / op / GOLDEN
    findings, error = judge_golden(golden, f"math/{op}/{GOLDEN.as_posix()}")
    assert error is None
    return [(f.line, f.code, f.severity) for f in findings]


def test_float_as_one_case_of_a_dtype_dispatch_is_no_widening():
    # ToySquareOp<float> sits beside ToySquareOp<half> / <bfloat16_t>: a dispatch, and the DAG
    # multiplies in T, so the golden's float32 square of half inputs is wider than the kernel
    facts = kernel_facts(KERNELS / "math" / "toy_square", "math/toy_square")
    assert (facts.widening, facts.widening_at) == ("none", "math/toy_square/op_kernel: no Cast in 2 files")
    assert kernel_judged("toy_square") == [(10, "GD108", "error")]
    # a float accumulator in SIMT code is a widening by assignment: unknown, no error
    assert kernel_facts(KERNELS / "math" / "toy_accumulate").widening == "unknown"
    assert kernel_judged("toy_accumulate") == []


def test_static_cast_to_float_beside_one_to_half_is_a_conversion_not_a_dispatch(tmp_path):
    folder = tmp_path / "toy_square"
    shutil.copytree(KERNELS / "math" / "toy_square", folder)
    shutil.rmtree(folder / "op_kernel")
    (folder / "op_kernel").mkdir()
    (folder / "op_kernel" / "simt.h").write_text(
        "template <typename T>\n__aicore__ inline void Sq(__gm__ T* x, __gm__ T* y, int64_t i)\n"
        "{\n    y[i] = static_cast<half>(static_cast<float>(x[i]) * static_cast<float>(x[i]));\n}\n")
    assert kernel_facts(folder).widening == "unknown"


def test_a_kernel_widening_in_another_operators_included_header_is_read():
    facts = kernel_facts(KERNELS / "math" / "toy_argmin", "math/toy_argmin")
    assert facts.widening == "float32"
    assert facts.widening_at == "math/toy_reduce_core/op_kernel/arch35/toy_reduce_core.h:6"
    assert kernel_judged("toy_argmin") == []


def test_a_golden_that_never_widens_is_reported_only_where_it_chains_rounding_ops(tmp_path):
    head = 'import torch\n\n__golden__ = {"kernel": {"one": "g"}}\n\n\ndef g(x, value, **kwargs):\n'
    # one multiply: torch rounds it once, as the kernel's widen-multiply-narrow does
    single = judged_as(tmp_path / "a", "mean_two_good", "one", head + "    return torch.mul(torch.from_numpy(x), value).numpy()\n")
    assert single == []
    # a multiply then an add in half rounds twice, the kernel once: a warning
    chained = judged_as(tmp_path / "b", "mean_two_good", "one",
                        head + "    t = torch.from_numpy(x)\n    return torch.add(torch.mul(t, value), 1.0).numpy()\n")
    assert [(f.line, f.code, f.severity) for f in chained] == [(6, "GD103", "warning")]


def test_a_cast_whose_value_is_only_converted_and_returned_widens_nothing(tmp_path):
    text = ('import torch\n\n__golden__ = {"kernel": {"pick": "g"}}\n\n\n'
            'def g(cond, a, b, **kwargs):\n'
            '    x = torch.from_numpy(a).float()\n'                          # line 7: computes below in float32
            '    y = torch.from_numpy(b)\n'
            '    return torch.where(torch.from_numpy(cond), x, y).float().numpy().astype(a.dtype)\n')  # line 9
    findings = judged_as(tmp_path, "max_copy_bad", "pick", text)  # its kernel never casts
    assert [(f.line, f.code) for f in findings] == [(7, "GD108")]
    # np.sum(..., dtype=...) at the return computes in the dtype it names: still a finding
    summed = judged_as(tmp_path / "s", "max_copy_bad", "pick",
                       'import numpy as np\n\n__golden__ = {"kernel": {"pick": "g"}}\n\n\n'
                       'def g(a, **kwargs):\n    return np.sum(a, dtype="float32")\n')
    assert [(f.line, f.code) for f in summed] == [(7, "GD108")]


def test_shape_bookkeeping_is_not_a_chain_of_rounding_ops(tmp_path):
    text = ('import torch\n\n__golden__ = {"kernel": {"one": "g"}}\n\n\n'
            'def _pad(shape, rank):\n    return [1] * (rank - len(shape)) + list(shape)\n\n\n'
            'def g(a, b, **kwargs):\n    _pad(a.shape, b.ndim - 1)\n'
            '    return torch.fmod(torch.from_numpy(a), torch.from_numpy(b)).numpy()\n')
    assert judged_as(tmp_path, "mean_two_good", "one", text) == []
