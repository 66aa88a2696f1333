"""Blind batch 11's general causes (issue 37): another tensor framework's host work read as
torch's (MindSpore's torch-compatible ``mint``, the ``ops`` functions of torch's meaning, its
tensors' ``asnumpy``), tensors an autograd ``backward`` gets back from what ``forward`` kept,
and torch.library decorators that only register the wrapper. The pattern fixtures
``framework_namespace``, ``saved_tensors`` and ``registering_decorator`` hold one good and one
bad wrapper of each (tests/test_audit_patterns.py)."""

from __future__ import annotations

import textwrap

import pytest

from audit_cases import codes
from kb_tools.audit import audit_source
from kb_tools.audit.evidence import torch_name


@pytest.mark.parametrize("written, read", [
    ("torch.zeros", "zeros"), ("torch_npu.npu_rotary_mul", "npu_rotary_mul"), ("torch_mlu.mlu.synchronize", "mlu.synchronize"),
    ("mindspore.mint.empty", "empty"), ("mindspore.mint.nn.functional.pad", "nn.functional.pad"),
    ("mindspore.ops.cast", "Tensor.to"), ("mindspore.ops.transpose", "permute"), ("mindspore.ops.zeros", "zeros"),
    ("mindspore.runtime.synchronize", "accelerator.synchronize"),
    # not torch's meaning, or not torch at all: read as nothing
    ("mindspore.ops.gather", None), ("mindspore.ops.depend", None), ("mindspore.float32", None),
    ("torch", None), ("torchvision.ops.nms", None), ("numpy.zeros", None), (None, None),
])
def test_each_framework_name_is_read_as_the_torch_name_of_its_meaning(written, read):
    assert torch_name(written) == read


MINDSPORE = """
    def op_wrapper(x):
        {line}
        y = ms.mint.empty(x.shape, dtype=x.dtype)
        k[(1,)](x, y, x.numel(), 0)
        return y
"""


def ms(body: str, **options):
    """``codes`` of a case that imports MindSpore (two lines above the case's own)."""
    return codes("import mindspore as ms\nfrom mindspore import mint, ops" + textwrap.dedent(body), **options)


@pytest.mark.parametrize("line, found", [
    ("x = mint.zeros_like(x)", "WB104"), ("x = ops.zeros((4,), ms.float32)", "WB104"),
    ("x = ops.cat([x, x])", "WB105"), ("x = ops.transpose(x, (1, 0))", "WB102"), ("x = ops.cast(x, ms.float16)", "WB101"),
    ("x = mint.nn.functional.pad(x, (0, 1))", "WB105"), ("n = x.asnumpy()", "WB106"), ("x = x.astype(ms.float16)", "WB101"),
])
def test_mindspore_host_work_gets_the_code_torch_s_gets(line, found):
    assert ms(MINDSPORE.format(line=line)) == [(4, found)]


def test_mindspore_names_without_torch_s_meaning_and_metadata_are_not_reported():
    assert ms(MINDSPORE.format(line="x = ops.depend(x, x)")) == []
    assert ms(MINDSPORE.format(line="n = x.shape[0] * 2")) == []


def test_a_mindspore_scratch_buffer_is_strict_only_as_torch_s():
    body = """
        def op_wrapper(x):
            y = mint.empty(x.shape, dtype=x.dtype)
            tmp = mint.empty(x.shape, dtype=ms.float32)
            k[(1,)](x, y, tmp, 0)
            return y
    """
    assert ms(body) == [(5, "WB104")]
    assert ms(body, policy="lenient") == []


def test_a_report_names_the_call_as_written():
    source = "import mindspore as ms\nimport triton\n\n\n@triton.jit\ndef k(x, y):\n    pass\n\n\n" \
             "def op_wrapper(x):\n    y = ms.mint.zeros(x.shape)\n    k[(1,)](x, y)\n    return y\n"
    [finding] = audit_source(source, "w.py").findings
    assert "`ms.mint.zeros`, read as torch's" in finding.message


BACKWARD = """
    class Fn(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x: torch.Tensor, lens: torch.Tensor):
            ctx.lens = lens
            ctx.scale = 0.5
            ctx.save_for_backward(x, lens)
            return x

        @staticmethod
        def backward(ctx, dy):
            {restore}
            {use}
            dx = torch.empty(dy.shape, dtype=dy.dtype, device=dy.device)
            k[(1,)](dy, dx, n, 0)
            return dx, None
"""


@pytest.mark.parametrize("restore", [
    "x, lens = ctx.saved_tensors", "x, lens = ctx.saved_variables", "lens = ctx.saved_tensors[1]", "lens = ctx.lens",
])
def test_what_backward_gets_back_from_forward_is_a_tensor(restore):
    assert codes(BACKWARD.format(restore=restore, use="n = lens.max().item()")) == [(13, "WB106"), (13, "WB107")]


def test_a_number_forward_stored_on_ctx_stays_a_number():
    assert codes(BACKWARD.format(restore="lens = ctx.scale", use="n = lens * 2")) == []


def test_a_plain_function_s_first_parameter_is_not_a_ctx():
    assert codes("""
        def op_wrapper(cfg, x):
            lens = cfg.lens
            n = lens.max().item()
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, n, 0)
            return y
    """) == []


@pytest.mark.parametrize("decorator, found", [
    ("@impl(npu_lib, 'silu')", []), ("@torch.library.impl('demo::silu', 'cpu')", []),
    ("@torch.library.define(npu_lib, 'silu(Tensor x) -> Tensor')", []),
    ("@torch.library.custom_op('demo::silu', mutates_args=())", [(4, "WB113")]),
    ("@torch.library.register_kernel('demo::silu', 'cpu')", [(4, "WB113")]),
])
def test_only_decorators_that_wrap_each_call_are_torch_work(decorator, found):
    assert codes(f"""
        from torch.library import Library, impl
        npu_lib = Library("demo", "IMPL", "PrivateUse1")
        {decorator}
        def silu(x):
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, x.numel(), 0)
            return y
    """) == found
