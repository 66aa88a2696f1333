"""The kernel family (KN101-KN103): one bad and one good fixture per code; narrow values
told from annotations, casts and the spec; stores through aliases; the API inventory."""

from __future__ import annotations

import shutil

from audit_family_fixtures import audit, codes, fixture, found
from conftest import REPO
from kb_tools.audit.kernel_rules import absent_api
from kb_tools.contract.specs import load_spec

KN = codes("KN")


def test_the_family_has_its_three_codes():
    assert KN == ["KN101", "KN102", "KN103"]


PL_KERNEL = """import torch
import pypto_pro.language as pl
from pypto_pro.language import vf


@pl.jit
def k(x: pl.Tensor[[8], pl.BF16], y: pl.Ptr):
    r = vf.sub(x, 1.0)
    {body}
    pl.store(y, [0], e)


def k_wrapper(x):
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    k(x, y)
    return y
"""


def test_bf16_annotation_makes_a_value_narrow_until_widened(tmp_path):
    src = tmp_path / "k_impl.py"
    src.write_text(PL_KERNEL.format(body="e = vf.exp(r)"))
    assert [c for *_, c in found(src, find_specs=False)] == ["KN101"]
    src.write_text(PL_KERNEL.format(body="e = vf.exp(vf.astype(r, dtype=pl.FP32))"))
    assert found(src, find_specs=False) == []


def test_a_loaded_value_is_narrow_only_when_the_spec_declares_a_half_dtype():
    bad = fixture("KN101", "bad")
    assert [c for *_, c in found(bad)] == ["KN101"]  # softmax3: fp16/bf16 declared
    assert found(bad, find_specs=False) == []  # no spec: a load's dtype is unknown, nothing is claimed


def test_without_a_spec_the_dtypes_the_file_declares_tell_a_load_half(tmp_path):
    bad = fixture("KN101", "bad").read_text()
    src = tmp_path / "k_impl.py"
    src.write_text(bad)
    result = audit(src)
    assert [f.code for f in result.findings if f.code.startswith("KN")] == [] and "AU015 KN101" in result.note
    declared = bad + ("\n\n@pytest.mark.parametrize('dtype', [torch.bfloat16])\ndef test_it(dtype):\n"
                      "    softmax3_wrapper(torch.randn(8, dtype=dtype))\n")
    src.write_text("import pytest\n" + declared)
    found_ = [f for f in audit(src).findings if f.code == "KN101"]
    assert len(found_) == 1 and "the file declares only bfloat16" in found_[0].message
    src.write_text("import pytest\n" + declared + "\n\ndef scratch():\n    return torch.empty(8, dtype=torch.float32)\n")
    result = audit(src)  # half and fp32 both declared: which a load reads is not told
    assert [f.code for f in result.findings if f.code == "KN101"] == [] and "AU015 KN101" in result.note
    src.write_text(PL_KERNEL.format(body="e = vf.exp(r)").replace("pl.Tensor[[8], pl.BF16]", "pl.Tensor[[8], DT_BF16]"))
    assert [c for *_, c in found(src, find_specs=False)] == ["KN101"]  # a bare DT_BF16 annotation


def test_a_store_through_an_alias_counts_and_a_stub_kernel_is_skipped(tmp_path):
    src = tmp_path / "m_impl.py"
    src.write_text("import torch\nimport pypto_pro.language as pl\n\n\n@pl.jit\ndef k(x, y, dim):\n"
                   "    out = y.movedim(dim, -1)\n    out[...] = x\n\n\n@pl.jit\ndef stub(x, y):\n    pass\n\n\n"
                   "def k_wrapper(x):\n    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n    k(x, y, 0)\n    return y\n\n\n"
                   "def stub_wrapper(x):\n    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n    stub(x, y)\n    return y\n")
    assert [f.code for f in audit(src).findings if f.code.startswith("KN")] == []


def test_an_output_only_read_is_never_stored(tmp_path):
    src = tmp_path / "r_impl.py"
    src.write_text("import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
                   "def k(x_ptr, y_ptr, n):\n    v = tl.load(y_ptr + tl.arange(0, 8))\n    tl.store(x_ptr + tl.arange(0, 8), v)\n\n\n"
                   "def k_wrapper(x):\n    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n    k[(1,)](x, y, x.numel())\n    return y\n")
    findings = [f for f in audit(src).findings if f.code == "KN102"]
    assert [(f.line, f.message.split(",")[0]) for f in findings] == [(7, "kernel `k` never stores to `y_ptr`")]


def test_absent_api_through_an_import_alias(tmp_path):
    src = tmp_path / "c_impl.py"
    src.write_text("import pypto_pro.language as pl\nimport pypto_pro.language.vf as v\n\n\n@pl.jit\ndef k(x, y):\n"
                   "    pl.store(y, [0], v.cast(pl.load(x, [0], [8]), pl.FP32))\n")
    assert [c for *_, c in found(src)] == ["KN103"]


def test_the_inventory_is_cited_data():
    assert absent_api() == {"vf.cast": "vf.astype"}
    text = (REPO / "kb" / "api_inventory.yaml").read_text()
    assert "003_c3bf9396551a1c99.txt" in text and "migration-table" in text


def test_the_delivered_softmax_kernel_is_clean():
    for path in (REPO / "ops" / "wrappers" / "softmax_wrapper.py", REPO / "examples" / "softmax" / "ops" / "wrappers" / "softmax_wrapper.py"):
        result = audit(path)
        assert "impl" in result.roles and result.findings == []


def test_verify_holds_kernel_claims_against_the_kernel(kbt, tmp_path):
    example = tmp_path / "softmax"
    shutil.copytree(REPO / "examples" / "softmax", example, ignore=shutil.ignore_patterns("__pycache__"))
    kernel_file = example / "ops" / "wrappers" / "softmax_wrapper.py"
    text = kernel_file.read_text()
    anchor = "        running_sum = tl.zeros((), tl.float32)"
    planted = text.replace(anchor, anchor + "  # planted below: an API the inventory lists as absent\n        vf.cast(running_sum, pl.FP32)", 1)
    assert planted != text
    kernel_file.write_text(planted)
    result = kbt("verify", example, "--root", example)
    assert result.code == 1
    assert "KN103" in result.err and "VF010" in result.err and "no-absent-api" in result.err


TRITON_HELPER = """import torch
import triton
import triton.language as tl


@triton.jit
def _silu(v):
    return v / (1 + tl.exp(-v))


@triton.jit
def k(x_ptr, y_ptr):
    offs = tl.arange(0, 8)
    x = tl.load(x_ptr + offs){widen}
    tl.store(y_ptr + offs, _silu(x))


def k_wrapper(x):
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    k[(1,)](x, y)
    return y
"""


def test_an_exponential_in_a_helper_is_judged_with_the_width_the_kernel_passes(tmp_path):
    spec = REPO / "tests" / "fixtures" / "audit_families" / "softmax3" / "ops" / "softmax3.yaml"  # declares fp16/bf16
    src = tmp_path / "k_impl.py"
    src.write_text(TRITON_HELPER.format(widen=""))
    findings = [f for f in audit(src, spec=load_spec(spec)).findings if f.code == "KN101"]
    assert [(f.line, "passed to `_silu` by `k` at line 15" in f.message) for f in findings] == [(8, True)]
    src.write_text(TRITON_HELPER.format(widen=".to(tl.float32)"))
    assert [f for f in audit(src, spec=load_spec(spec)).findings if f.code == "KN101"] == []
    src.write_text(TRITON_HELPER.format(widen=""))
    assert [f for f in audit(src).findings if f.code == "KN101"] == []  # no spec: a load's dtype is unknown


PLACEHOLDER = """import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, sink_ptr, y_ptr, USE_SINK: tl.constexpr):
    offs = tl.arange(0, 8)
    v = tl.load(x_ptr + offs)
    if USE_SINK:
        v += tl.load(sink_ptr)
    tl.store({target} + offs, v)


def k_wrapper(x):
    sink = torch.empty(1, device=x.device)
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    k[(1,)](
        x,
        sink,
        y,
        USE_SINK=False,
    )
    return y
"""


def test_an_argument_on_a_later_line_of_the_launch_is_not_read_after_it(tmp_path):
    src = tmp_path / "s_impl.py"
    src.write_text(PLACEHOLDER.format(target="y_ptr"))
    assert [f for f in audit(src).findings if f.code == "KN102"] == []  # sink: a placeholder the host never reads back
    src.write_text(PLACEHOLDER.format(target="x_ptr"))
    assert [(f.line, f.message.split(",")[0]) for f in audit(src).findings if f.code == "KN102"] == \
        [(7, "kernel `k` never stores to `y_ptr`")]
