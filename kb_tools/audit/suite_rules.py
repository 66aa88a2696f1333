"""What the test family's rules (TS1xx, ``kb_tools/audit/rules/ts*.py``) read alike in a test
file: its tests, the names that stand for the delivered wrapper, its tolerance comparisons,
and whether it tests an operator at all (``operator_test``): a library's own unit tests, with
mocks and no kernel, are left alone.
"""

from __future__ import annotations

import ast
import dataclasses
from fnmatch import fnmatchcase

from kb_tools.audit.family_context import FileContext
from kb_tools.audit.module import FUNCTION_DEFS
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.roles import imports_framework

WRAPPER_MODULE_SUFFIXES = ("_wrapper", "wrappers")
# Comparisons whose defaults are nobody's criterion. torch.testing.assert_close is not one:
# its defaults are per dtype (exact for integers), a criterion of its own.
COMPARE_FUNCS = frozenset({"allclose", "isclose", "assert_allclose", "assert_array_almost_equal"})
TOLERANCE_FUNCS = COMPARE_FUNCS | {"assert_close"}


def _pytest_marked(fn: ast.AST) -> bool:
    return any((dotted(d.func if isinstance(d, ast.Call) else d) or [""])[0] == "pytest" for d in fn.decorator_list)


def collect_tests(tree: ast.Module, kernels=frozenset()) -> list[ast.FunctionDef]:
    """Top-level ``test_*`` functions and the ``test_*`` methods of ``Test*`` classes; a
    kernel named like a test (``test_gather_load_kernel``) is not one unless a pytest mark
    makes it one (``@pytest.mark.soc`` over a ``@pl.jit`` test)."""
    out = []
    for node in tree.body:
        if isinstance(node, FUNCTION_DEFS) and node.name.startswith("test") \
                and (node.name not in kernels or _pytest_marked(node)):
            out.append(node)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            out.extend(n for n in node.body if isinstance(n, FUNCTION_DEFS) and n.name.startswith("test"))
    return out


def wrapper_targets(ctx: FileContext) -> set[str]:
    """Local names that stand for the delivered wrapper: a ``*_wrapper`` defined here (not a
    test) or imported, a name from a ``*_wrapper``/``wrappers`` module or the spec's wrapper
    module, and module-level names bound from any of these (``KERNELS = make_wrapper()``)."""
    spec_stem = ctx.wrapper_stem
    names = {f.name for f in ctx.module.functions if f.top and fnmatchcase(f.name, "*_wrapper") and ctx.module.launches(f.node)}
    for local, full in ctx.aliases.items():
        parts = full.split(".")
        if fnmatchcase(parts[-1], "*_wrapper") or any(p.endswith(WRAPPER_MODULE_SUFFIXES) or p == spec_stem for p in parts):
            names.add(local)
    for node in ctx.tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.value)):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def comparisons(ctx: FileContext, names=TOLERANCE_FUNCS):
    """(call, name) of each tolerance comparison that decides something (not a negated one)."""
    negated = {id(n.operand) for n in ctx.nodes if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)}
    for node in ctx.nodes:
        if isinstance(node, ast.Call) and id(node) not in negated:  # `not allclose(...)`: asserts a difference
            parts = dotted(node.func)
            if parts and parts[-1] in names and (len(parts) > 1 or parts[0] in ctx.aliases) and parts[0] != "math" \
                    and (qualname(node.func, ctx.aliases) or "").split(".")[0] != "math":  # math.isclose: Python floats
                yield node, parts[-1]


def importorskip_aliases(ctx: FileContext) -> FileContext:
    """``torch = pytest.importorskip("torch")`` binds a module as an import does."""
    extra = {}
    for node in ctx.nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args \
                and (dotted(node.value.func) or [""])[-1] == "importorskip" \
                and isinstance(node.value.args[0], ast.Constant) and isinstance(node.value.args[0].value, str):
            extra.update({t.id: node.value.args[0].value for t in node.targets if isinstance(t, ast.Name)})
    return dataclasses.replace(ctx, aliases={**ctx.aliases, **extra}) if extra else ctx


def operator_test(ctx: FileContext) -> bool:
    """Whether the file tests an operator: a spec names it, it names a delivered wrapper,
    defines or launches a kernel, or imports a kernel framework. Other tests (a library's
    unit tests with mocks) are not this family's to judge."""
    return bool(ctx.spec or wrapper_targets(ctx) or ctx.module.kernels or ctx.module.launching
                or imports_framework(ctx.aliases))

