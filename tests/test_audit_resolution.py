"""Aliases, method chains, helpers, tensor vs Python values, suppressions, launches."""

from __future__ import annotations

import textwrap

from kb_tools.audit import audit_source

HEAD = "import pypto_pro.language as pl\n\n@pl.jit\ndef k(*a):\n    pass\n\n"


def codes(body: str, **kw) -> list[tuple[int, str]]:
    src = HEAD + textwrap.dedent(body)
    return [(f.line - HEAD.count("\n"), f.code) for f in audit_source(src, "t.py", **kw).findings]


def test_aliases_are_resolved():
    assert codes("""
        import torch as th
        from torch import zeros, cat
        import torch.nn.functional as F
        def a_wrapper(x):
            z = zeros(3)
            c = cat([x, x])
            p = F.pad(x, (1, 1))
            s = th.cuda.synchronize()
            y = th.empty(x.shape)
            k(x, y)
            return y
        """) == [(6, "WB104"), (7, "WB105"), (8, "WB105"), (9, "WB108")]


def test_helper_findings_sit_in_the_helper_and_name_the_wrapper():
    src = HEAD + textwrap.dedent("""
        import torch
        def _prep(t):
            return t.float()
        def h_wrapper(x):
            y = torch.empty(x.shape)
            k(_prep(x), y)
            return y
        """)
    (f,) = audit_source(src, "t.py").findings
    assert (f.line - HEAD.count("\n"), f.code, f.wrapper) == (4, "WB101", "h_wrapper")
    assert "_prep" in f.message


def test_metadata_is_not_slicing_but_subscripting_a_tensor_is():
    assert codes("""
        import torch
        def m_wrapper(x):
            n = x.shape[0] * x.size(1) + len(x.shape)
            s = x.stride()[-1]
            row = x[n]
            y = torch.empty(x.shape)
            k(row, y, n, s)
            return y
        """) == [(6, "WB103")]


def test_tensor_in_condition_and_item():
    assert codes("""
        import torch
        def c_wrapper(x):
            if x.sum() > 0:
                pass
            v = x.max().item()
            y = torch.empty(x.shape)
            k(x, y, v)
            return y
        """) == [(4, "WB106"), (4, "WB107"), (6, "WB107"), (6, "WB106")]


def test_comments_and_strings_are_never_flagged():
    assert codes('''
        import torch
        def s_wrapper(x):
            """x.to(torch.float32), torch.zeros(3), x.contiguous()"""
            msg = "x.reshape(4) torch.cat"  # x.half() torch.npu.synchronize()
            y = torch.empty(x.shape)
            k(x, y, msg)
            return y
        ''') == []


def test_launch_in_loop_and_launch_count_and_custom_launcher():
    assert codes("""
        import torch
        def l_wrapper(xs):
            for x in xs:
                k(x)
        """) == [(5, "WB110")]
    assert codes("""
        def n_wrapper(x):
            return x
        """)[0][1] == "WB109"
    grid = "from kernels import imported\nimport torch\ndef i_wrapper(x):\n    y = torch.empty(x.shape)\n    imported[None, 4](x, y)\n    return y\n"
    assert audit_source(grid, "t.py").findings == []  # kernel[grid](...) launches whatever it names
    plain = grid.replace("imported[None, 4](", "imported(")
    assert [f.code for f in audit_source(plain, "t.py").findings] == ["WB109"]
    assert audit_source(plain, "t.py", launchers=["imported"]).findings == []


def test_suppression_is_listed_not_silent():
    src = HEAD + "import torch\ndef q_wrapper(x: torch.Tensor):\n    a = x.float()  # kbt: ignore[WB101]\n    b = x.half()\n    k(a, b)\n"
    result = audit_source(src, "t.py")
    assert [f.code for f in result.findings] == ["WB101"]
    assert [f.code for f in result.suppressed] == ["WB101"]
    assert "# kbt: ignore" not in src.split("x.half()")[1]


def test_select_and_wrapper_pattern():
    src = HEAD + "import torch\ndef run(x):\n    a = x.float().reshape(2)\n    k(a)\n"
    assert audit_source(src, "t.py").wrappers == ["run"]  # it launches: a wrapper by what it does
    assert audit_source(src, "t.py", wrapper_patterns=["other_*"]).wrappers == []
    result = audit_source(src, "t.py", wrapper_patterns=["run"], select={"WB103"})
    assert [f.code for f in result.findings] == ["WB103"]


def test_non_ascii_columns_count_characters():
    src = HEAD + "import torch\ndef u_wrapper(x: torch.Tensor):\n    é = x.float()\n    k(é)\n"
    (f,) = audit_source(src, "t.py").findings
    assert f.col == len("    é = x.") + 1


def test_a_wrapper_called_by_another_reports_its_lines_once_as_its_own():
    src = HEAD + textwrap.dedent("""
        import torch
        def outer(x):
            return inner(x)
        def inner(x):
            y = torch.empty(x.shape)
            k(x.float(), y)
            return y
        """)
    result = audit_source(src, "t.py")
    assert result.wrappers == ["outer", "inner"]
    (f,) = result.findings
    assert (f.code, f.wrapper, f.also, f.helper) == ("WB101", "inner", ("outer",), None)
    assert "helper" not in f.message


def test_helper_walks_are_bounded_on_a_file_built_to_explode():
    import ast

    from kb_tools.audit.checker import MAX_HELPER_WALKS, WrapperAudit
    from kb_tools.audit.module import ModuleInfo

    defs = ["def h9(x):\n    return x\n"]
    for i in range(8, -1, -1):  # each helper calls the next ten times: 10**9 walks unbounded
        defs.append(f"def h{i}(x):\n" + f"    h{i + 1}(x)\n" * 10 + "    return x\n")
    src = HEAD + "\n".join(defs) + "def a_wrapper(x):\n    h0(x)\n    k(x)\n"
    module = ModuleInfo(ast.parse(src), text=src)
    (wrapper,) = module.wrappers
    audit = WrapperAudit(module, wrapper)
    assert audit.helper_walks == MAX_HELPER_WALKS and audit.most_launches == 1


def test_a_parameter_packed_into_the_launchs_argument_list_is_a_tensor():
    assert codes("""
        import torch
        def p_wrapper(grad, n, group=128):
            out = torch.empty((n,), dtype=torch.float32)
            grouped = grad.view(-1, group)
            inputs = [grouped, grad, out]
            k(*inputs, n // group)
            return out
        """) == [(5, "WB103")]


def test_a_view_passed_to_the_launch_makes_its_source_a_tensor():
    assert codes("""
        import torch
        def v_wrapper(grad, n, group=128):
            out = torch.empty((n,), dtype=torch.float32)
            grouped = grad.view(-1, group)
            inputs = [grouped, out]
            k(*inputs)
            return out
        """) == [(5, "WB103")]


def test_a_kernel_wrapped_for_torch_compile_is_launched():
    """torch.library.wrap_triton(kernel)[grid](...) launches the kernel: the wrapper is found, its host
    work is reported, and the wrap itself (torch's own hand-back of the kernel) is no torch call."""
    case = """
        import torch
        from torch.library import wrap_triton
        def add(x, y):
            out = torch.empty(x.shape)
            x = x.contiguous()
            wrap_triton(k)[(4,)](x, y, out)
            return out
        def add2(x, y):
            out = torch.empty(x.shape)
            torch.library.wrap_triton(k)[(4,)](x, y, out)
            torch.library.wrap_triton(k)[(4,)](x, y, out)
            return out
        """
    result = audit_source(HEAD + textwrap.dedent(case), "t.py")
    assert result.wrappers == ["add", "add2"]
    assert codes(case) == [(6, "WB102"), (12, "WB109")]  # .contiguous(); a second launch
