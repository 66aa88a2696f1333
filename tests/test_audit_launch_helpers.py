"""Launches counted through helpers of the same repository (issue 37: 7 second launches made by
calling a function that launches, 2 second launch sites on another branch inside a helper were
missed): a launching method reached through an instance (``Launcher(b).run(x)``, ``launcher =
Launcher(b); launcher.run(x)``), a launching function of another module, and a helper whose
second launch sits on another branch."""

from __future__ import annotations

import textwrap

from audit_cases import HEAD, codes, tree_findings

from kb_tools.audit import audit_source

LAUNCHER = """
    class Launcher:
        def __init__(self, block):
            self.block = block

        def run(self, x, y):
            k[(1,)](x, y, x.numel(), self.block)

        def maybe_twice(self, x, y, split):
            if split:
                k[(1,)](x, y, x.numel(), 0)
            k[(2,)](x, y, x.numel(), 0)

"""


def test_a_launch_through_an_instance_method_is_counted():
    for made in ("Launcher(128).run(x, y)", "launcher = Launcher(128)\n    launcher.run(x, y)"):
        body = f"def op(x):\n    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n    {made}\n" \
               "    k[(1,)](x, y, x.numel(), 0)\n    return y\n"
        found = codes(textwrap.dedent(LAUNCHER) + body)
        assert (17 + made.count("\n"), "WB109") in found, made
    once = "def op(x):\n    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n    Launcher(128).run(x, y)\n    return y\n"
    assert codes(textwrap.dedent(LAUNCHER) + once) == [(12, "WB109")]  # maybe_twice's own second launch, nothing in op


def test_an_instance_rebound_to_something_else_is_not_followed():
    body = "def op(x):\n    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n    launcher = Launcher(128)\n" \
           "    launcher = make_other()\n    launcher.run(x, y)\n    k[(1,)](x, y, x.numel(), 0)\n    return y\n"
    assert codes(textwrap.dedent(LAUNCHER) + body) == [(12, "WB109")]


def test_a_second_launch_in_a_helper_of_another_module_and_on_a_helpers_branch(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "other.py").write_text("import torch\nimport triton\n\n\n@triton.jit\ndef k2(x, y, n):\n"
                                               "    pass\n\n\nclass Launcher:\n" + textwrap.indent(textwrap.dedent("""\
        def maybe_twice(self, x, y, split):
            if split:
                k2[(1,)](x, y, x.numel())
            k2[(2,)](x, y, x.numel())


        def finish(self, y, out):
            k2[(1,)](y, out, y.numel())
    """), "    "))
    (tmp_path / "pkg" / "op.py").write_text(textwrap.dedent("""\
        import torch
        import triton

        from pkg.other import Launcher


        @triton.jit
        def k(x, y, n):
            pass


        def twice_user(x, split):
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            Launcher().maybe_twice(x, y, split)
            return y


        def then_finish(x):
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, x.numel())
            launcher = Launcher()
            launcher.finish(x, y)
            return y
    """))
    assert tree_findings(tmp_path) == [("pkg/op.py", 14, "WB109", ("twice_user",)),
                                       ("pkg/op.py", 22, "WB109", ("then_finish",)),
                                       ("pkg/other.py", 14, "WB109", ("maybe_twice",))]


NORM = """
    class Norm(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.c = c

        def forward(self, x):
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, x.numel(), self.c)
            return y

"""


def test_calling_a_module_instance_runs_its_forward():
    member = """
    class Twice(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.norm = Norm(c)

        def forward(self, x):
            return self.norm(self.norm(x.float()))
    """
    assert codes(NORM + member) == [(19, "WB101"), (19, "WB109")]
    assert codes(NORM + "    def use(x):\n        return Norm(4)(x.contiguous())\n") == [(13, "WB102")]
    assert codes(NORM + "    def use(x):\n        layer = Norm(4)\n        return layer(layer(x))\n") == [(14, "WB109")]


def test_an_instance_of_a_class_neither_callable_nor_a_module_runs_nothing():
    plain = NORM.replace("class Norm(torch.nn.Module):", "class Norm:")
    result = audit_source(HEAD + textwrap.dedent(plain + "    def use(x):\n        return Norm(4)(x.float())\n"), "w.py")
    assert [w.name for w in result.wrapper_info] == ["forward"] and result.findings == []
