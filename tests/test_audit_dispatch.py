"""Issue 37, step 2: two recall mechanisms.

Dispatch tables: ``fn[mode](a, b)`` where ``fn`` is a literal table of same-repository functions
runs one of them, so their host work and launches are the caller's; ``KERNELS[dtype][grid](x)``
launches one of the table's kernels; a table the audit cannot read to the end is said once at the
call. Good and bad fixtures: ``fixtures/audit/patterns/dispatch_table_*`` (run by test_audit_patterns).

Discovery: a module whose text holds no launch cue is still read when its imports lead, within the
chains' bound, to one that does (``fixtures/audit/chain``: good.py and bad.py)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from audit_cases import tree_findings

from kb_tools.audit import audit_source, reach
from kb_tools.audit.batch import audit_files
from kb_tools.audit.discover import python_files
from kb_tools.audit.evidence import tensor_evidence
from kb_tools.audit.module import ModuleInfo
from kb_tools.audit.package import Tree

HEAD = """\
import torch
import triton


@triton.jit
def ka(x, y, n):
    pass


@triton.jit
def kb(x, y, n):
    pass


def a_launch(x, y):
    x = x.contiguous()
    ka[(1,)](x, y, x.numel())
    return y


def b_launch(x, y):
    kb[(1,)](x, y, x.numel())
    return y


"""


def _audit(body: str):
    return audit_source(HEAD + textwrap.dedent(body), "w.py")


def _line(body: str, text: str) -> int:
    """The line of ``text`` in the module made of HEAD and ``body``."""
    lines = (HEAD + textwrap.dedent(body)).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


CLASS_TABLE = """
class Mm(torch.autograd.Function):
    fn = {"a": a_launch, "b": b_launch}

    @staticmethod
    def forward(ctx, x, mode):
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        Mm.fn[mode](x, y)
        return y

    @staticmethod
    def backward(ctx, dy):
        if ctx.needs_input_grad[0]:
            dx = torch.empty(dy.shape, dtype=dy.dtype, device=dy.device)
            Mm.fn[ctx.mode](dy, dx)
            Mm.fn[ctx.mode](dx, dy)
            return dx, None
        return None, None
"""


def test_a_class_table_of_launching_helpers_is_a_call_of_each_and_their_host_work_is_the_callers():
    result = _audit(CLASS_TABLE)
    assert [(w.name, w.launches) for w in result.wrapper_info] == [("a_launch", 1), ("b_launch", 1),
                                                                   ("forward", 1), ("backward", 2)]
    contiguous = [f for f in result.findings if f.code == "WB102"]
    want = ("a_launch", "forward", "backward")
    assert [(f.line, f.wrappers) for f in contiguous] == [(_line("", "x.contiguous()"), want)]
    launches = sorted((f.line, f.code) for f in result.findings if f.code == "WB109")
    second, bare = _line(CLASS_TABLE, "Mm.fn[ctx.mode](dx, dy)"), _line(CLASS_TABLE, "return None, None")
    assert launches == [(second, "WB109"), (bare, "WB109")]  # a second launch; a return with no launch


def test_picking_among_a_tables_helpers_is_no_kernel_choice_but_a_kernel_table_is():
    result = _audit(CLASS_TABLE)
    assert not any("second kernel beside" in f.message for f in result.findings)
    kernels = _audit("""
        KERNELS = {torch.float16: ka, torch.float32: kb}


        def by_dtype(x, y):
            KERNELS[x.dtype][(1,)](x, y, x.numel())
            return y
        """)
    assert [(w.name, w.launches) for w in kernels.wrapper_info][-1] == ("by_dtype", 1)
    assert [f.message.split(";")[0] for f in kernels.findings if f.code == "WB109"] == \
        ["launches one of 2 kernels (ka, kb) chosen on the host"]


def test_a_value_picked_from_a_table_and_called_is_the_table_call():
    body = """
        OPS = [a_launch, b_launch]


        def pick(x, y, i):
            impl = OPS[i]
            impl(x, y)
            return y
        """
    result = _audit(body)
    assert ("pick", 1) in [(w.name, w.launches) for w in result.wrapper_info]
    assert [f.wrappers for f in result.findings if f.code == "WB102"] == [("a_launch", "pick")]


def test_self_and_cls_reach_the_class_table():
    result = _audit("""
        class Op:
            impls = (a_launch, b_launch)

            def run(self, x, y, i):
                self.impls[i](x, y)
                return y
        """)
    assert ("run", 1) in [(w.name, w.launches) for w in result.wrapper_info]
    static = _audit("""
        class Op:
            impls = (a_launch, b_launch)

            @staticmethod
            def run(ctx, x, y):
                ctx.impls[0](x, y)
                return y
        """)
    assert ("run", 1) in [(w.name, w.launches) for w in static.wrapper_info]  # ctx is no Op: read as before
    assert all("run" not in f.wrappers for f in static.findings)  # a_launch is not reached through ctx


def test_arguments_are_tensors_only_as_far_as_the_tables_functions_use_them():
    source = HEAD + textwrap.dedent("""
        def launch_dims(x, y, dims):
            ka[(dims[0],)](x, y, dims[0] * dims[1])
            return y


        OPS = {"d": launch_dims}


        def run(x, y, dims, k):
            OPS[k](x, y, dims)
            return y
        """)
    tree = ast.parse(source)
    info = ModuleInfo(tree, text=source)
    run = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "run")
    # ka[...] takes x, y (tensors: launched); dims only in a grid and arithmetic: a Python value
    assert tensor_evidence(run, info.index, info.launchers, info.aliases) == {"x", "y"}


def test_an_unknown_table_is_said_once_at_the_call_and_not_guessed():
    body = """
        OPS = {"a": a_launch, "lazy": make_op("b")}


        def run(x, y, k):
            OPS[k](x, y)
            return y
        """
    result = _audit(body)
    line = _line(body, "OPS[k](x, y)")
    assert result.unfollowed == (f"w.py:{line} `OPS` (a dispatch table with values not followed)",)
    assert ("run", 1) in [(w.name, w.launches) for w in result.wrapper_info]
    assert not any(f.code == "WB109" and "run" in f.wrappers for f in result.findings)


def test_a_table_of_torch_functions_is_torch_work_on_the_host_and_no_launch():
    body = """
        import torch.nn.functional as F

        ACT = {"gelu": F.gelu, "relu": torch.relu}


        def run(x, y, act):
            h = ACT[act](x)
            a_launch(h, y)
            return y
        """
    result = _audit(body)
    assert ("run", 1) in [(w.name, w.launches) for w in result.wrapper_info]  # one launch: a_launch's
    assert sorted((f.line, f.code) for f in result.findings if f.wrappers[0] == "run") == \
        [(_line(body, "ACT[act](x)"), "WB113")]


def test_an_element_of_a_torch_module_container_is_no_launch():
    body = """
        class Stack(torch.nn.Module):
            def __init__(self, dims):
                super().__init__()
                self.layers = torch.nn.ModuleList([torch.nn.Linear(d, d) for d in dims])

            def forward(self, x, i):
                return self.layers[i](x)

            def fused(self, x, y, i):
                h = self.layers[i](x)
                b_launch(h, y)
                return y
        """
    result = _audit(body)
    assert [w.name for w in result.wrapper_info if w.name in ("forward", "fused")] == ["fused"]
    line = _line(body, "h = self.layers[i](x)")
    assert result.unfollowed == (f"w.py:{line} `Stack.layers` (an element of a torch.nn.ModuleList, a module, "
                                 "not followed)",)


def test_a_name_that_shadows_a_table_is_not_the_table():
    result = _audit("""
        OPS = {"a": a_launch}


        def run(OPS, x, y):
            OPS[(1,)](x, y, x.numel())
            return y
        """)
    assert ("run", 1) in [(w.name, w.launches) for w in result.wrapper_info]  # a parameter may be a kernel


def test_a_table_of_functions_imported_from_another_module_is_followed(tmp_path: Path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "impl.py").write_text(HEAD)
    (pkg / "api.py").write_text(textwrap.dedent("""\
        import torch
        from pkg.impl import a_launch, b_launch

        OPS = {"a": a_launch, "b": b_launch}


        def run(x, mode):
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            OPS[mode](x.float(), y)
            return y
        """))
    found = tree_findings(tmp_path)
    assert ("pkg/api.py", 9, "WB101", ("run",)) in found  # the wrapper is found through the table
    assert ("pkg/impl.py", _line("", "x.contiguous()"), "WB102", ("a_launch", "run")) in found  # the helper's host work is run's too


CHAIN = Path(__file__).parent / "fixtures" / "audit" / "chain"


def test_discovery_follows_a_module_without_launch_cues_to_the_module_that_launches():
    """good.py and bad.py call ``api.matmul``; api.py holds no ``](``, ``jit`` or ``.apply(`` and
    calls ``impl.mm``, which launches: both callers are wrappers, and bad.py's host work is found."""
    results, errors, _ = audit_files(python_files([str(CHAIN)]), roots=[CHAIN])
    assert errors == []
    wrappers = sorted((Path(w.path).name, w.name, w.launches) for r in results for w in r.wrapper_info)
    assert wrappers == [("api.py", "matmul", 1), ("bad.py", "linear", 1), ("good.py", "linear", 1),
                        ("impl.py", "mm", 1)]
    assert sorted((Path(p).name, line, code, w) for p, line, code, w in tree_findings(CHAIN)) == \
        [("bad.py", 5, "WB101", ("linear",)), ("bad.py", 5, "WB102", ("linear",))]


def _chain(root: Path, hops: int, cycle: bool = False) -> None:
    """caller.py -> m0 -> m1 -> ... -> m{hops-1} -> launcher.py, none of the m's holding a cue;
    with ``cycle`` the last m imports m0 back instead of reaching the launcher."""
    pkg = root / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "launcher.py").write_text("import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\n"
                                     "def f(x):\n    k[(1,)](x)\n    return x\n")
    for i in range(hops):
        after = "m0" if cycle and i == hops - 1 else f"m{i + 1}" if i < hops - 1 else "launcher"
        (pkg / f"m{i}.py").write_text(f"from pkg.{after} import f\n")
    (pkg / "caller.py").write_text("from pkg.m0 import f\n\n\ndef run(x):\n    return f(x.float())\n")


def _caller_is_wrapper(root: Path) -> bool:
    results, errors, _ = audit_files(python_files([str(root)]), roots=[root])
    assert errors == []
    return any(Path(w.path).name == "caller.py" for r in results for w in r.wrapper_info)


def test_re_exports_through_modules_without_cues_are_followed_within_the_bound(tmp_path: Path):
    near, far, cycle = tmp_path / "near", tmp_path / "far", tmp_path / "cycle"
    for folder, hops, loop in ((near, 3, False), (far, reach.MAX_REACH + 2, False), (cycle, 4, True)):
        folder.mkdir()
        _chain(folder, hops, loop)
    assert _caller_is_wrapper(near)
    assert not _caller_is_wrapper(far)  # past MAX_REACH modules: not followed
    assert not _caller_is_wrapper(cycle)  # a cycle of modules that never launch ends


def test_the_gate_answers_alike_whichever_module_is_asked_first(tmp_path: Path):
    _chain(tmp_path, 3)
    files = python_files([str(tmp_path)])
    answers = []
    for order in (["pkg.m0", "pkg.m1", "pkg.m2"], ["pkg.m2", "pkg.m1", "pkg.m0"]):
        tree = Tree(files, [tmp_path], lambda path, name: None)
        gate = reach.Reach(tree)
        answers.append({name: gate.readable(name) for name in order})
    assert answers[0] == answers[1] == {"pkg.m0": True, "pkg.m1": True, "pkg.m2": True}
