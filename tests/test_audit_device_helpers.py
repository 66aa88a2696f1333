"""A device guard entered through a helper that hands back torch by another name
(``with get_device_module().device(x.device):``, the helper returning ``torch.cuda`` or
``torch.npu``) is a torch call like ``with torch.cuda.device(...)`` (issue 37: 10 lines the
blind labels marked were missed). A helper that returns anything else is not torch."""

from __future__ import annotations

import textwrap

from audit_cases import codes, tree_findings

WRAPPER = """
    def op_wrapper(x):
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        with get_device_module().device(x.device):
            k[(1,)](x, y, x.numel(), 0)
        return y
"""


def test_a_helper_returning_a_torch_device_module_on_every_branch_is_a_device_guard():
    helper = """
        def get_device_module():
            if hasattr(torch, "npu"):
                return torch.npu
            return getattr(torch, "cuda")
    """
    assert codes(textwrap.dedent(helper) + textwrap.dedent(WRAPPER)) == [(9, "WB113")]


def test_a_helper_returning_something_else_is_not_torch():
    for returned in ("DeviceContexts()", "torch.cuda if fast else Fallback()", "None"):
        helper = f"""
            class DeviceContexts:
                def device(self, d):
                    return d

            def get_device_module():
                return {returned}
        """
        assert codes(textwrap.dedent(helper) + textwrap.dedent(WRAPPER)) == [], returned
    assert codes(textwrap.dedent("""
        def get_device_module():
            if hasattr(torch, "npu"):
                return torch.npu
            return make_module()
    """) + textwrap.dedent(WRAPPER)) == []


def test_the_helper_may_sit_in_another_module_of_the_tree(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "runtime.py").write_text("import torch\n\n\ndef device_module():\n    return torch.cuda\n")
    (tmp_path / "pkg" / "op.py").write_text(textwrap.dedent("""\
        import torch
        import triton

        from pkg.runtime import device_module


        @triton.jit
        def k(x, y, n):
            pass


        def op_wrapper(x):
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            with device_module().device(x.device):
                k[(1,)](x, y, x.numel())
            return y
    """))
    assert [(p, line, code) for p, line, code, _ in tree_findings(tmp_path)] == [("pkg/op.py", 14, "WB113")]
