"""Host work the audit did not see (issue 37): an ``nn.Module`` the class built run on the host
(``self.bn(x)``), ``torch.ops.aten`` reached through a name the function binds, comparisons
joined by ``&`` (a mask: Python joins bools with ``and``), arithmetic on a tensor in a helper
reached through its class (``1.0 / t``)."""

from __future__ import annotations

from audit_cases import codes

MODULE = """
    class Fused(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.bn = torch.nn.BatchNorm1d(c)
            self.block = 128

        def forward(self, x):
            {first}
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, x.numel(), self.block)
            return y
"""


def test_a_torch_module_the_class_built_run_on_the_host_is_a_torch_call():
    assert codes(MODULE.format(first="x = self.bn(x)")) == [(9, "WB113")]
    assert codes(MODULE.format(first="n = self.block * 2")) == []
    gelu = MODULE.replace("self.block = 128", "self.block = 128\n            self.act = torch.nn.functional.gelu")
    assert codes(gelu.format(first="x = self.act(x)")) == [(10, "WB113")]


def test_torch_ops_through_a_name_bound_in_the_body():
    body = """
        def op_wrapper(x):
            aten = torch.ops.aten
            x = aten.abs.default(x)
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, x.numel(), 0)
            return y
    """
    assert codes(body) == [(4, "WB113")]
    assert codes(body.replace("x = aten.abs", "aten = Registry()\n            x = aten.abs")) == []


def test_comparisons_joined_by_an_ampersand_are_a_mask():
    assert codes("""
        def op_wrapper(x, idx):
            valid = (idx >= 0) & (idx < x.shape[0])
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, valid, 0)
            return y
    """) == [(3, "WB107")]
    assert codes("""
        def op_wrapper(x):
            both = (x.shape[0] > 0) & (x.shape[-1] > 0)
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, x.numel(), both)
            return y
    """) == []


def test_arithmetic_on_a_tensor_in_a_helper_reached_through_its_class():
    assert codes("""
        class Scales:
            @staticmethod
            def recip(t):
                return 1.0 / t

        def op_wrapper(x, scale):
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, Scales.recip(scale), scale)
            return y
    """) == [(5, "WB107")]
