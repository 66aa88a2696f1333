"""TS101 (sample-driver-vs-delivery): no test reaches the delivered wrapper (a ``*_wrapper``, a
name imported from the spec's wrapper module or any ``*_wrapper``/``wrappers``/``_impl``
module) or a kernel launch, directly or through same-file helpers; a test file holding no test
whose kernel runs only when the file is run as a script (a ``__main__`` launch); a test file
with nothing of the delivery in sight whose tests run an operator's golden and library code
only (``golden_only``), whether or not its folder holds the implementation.
"""

from __future__ import annotations

import ast
import builtins
from functools import lru_cache
from pathlib import Path

from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.golden_rules import defines_kernels
from kb_tools.audit.module import FUNCTION_DEFS, launch_target
from kb_tools.audit.names import dotted
from kb_tools.audit.roles import TEST, is_golden_name, is_test_name
from kb_tools.audit.suite_rules import collect_tests, wrapper_targets
from kb_tools.syntax import child_nodes, walk_nodes

CODE = "TS101"
ROLES = (TEST,)  # the file roles (kb_tools/audit/roles.py) the rule reads


def _reaches(fn: ast.AST, targets: set[str], launchers: set[str], calls: dict[str, ast.AST], seen: set[str]) -> bool:
    """Whether ``fn`` names a target or launches, itself or through the same-file functions it
    names (walked with a work list: a long call chain costs no recursion)."""
    work = [fn]
    while work:
        for node in walk_nodes(work.pop()):
            if isinstance(node, ast.Name):
                if node.id in targets:
                    return True
                if node.id in calls and node.id not in seen:
                    seen.add(node.id)
                    work.append(calls[node.id])
            elif isinstance(node, ast.Call) and launch_target(node, launchers):
                return True
    return False


def _script_launch(ctx: FileContext) -> ast.Call | None:
    """A kernel launch (or a call of a launching function) in the module's own statements,
    such as a ``__main__`` block: it runs when the file is run as a script, never in a test."""
    launching = {f.name for f in ctx.module.functions if f.top and ctx.module.launches(f.node)}
    work = [s for s in ctx.tree.body if not isinstance(s, (*FUNCTION_DEFS, ast.ClassDef))]
    while work:  # the module's statements, not the bodies of functions they define (a registration under try:)
        node = work.pop(0)
        if isinstance(node, ast.Call) and (launch_target(node, ctx.module.launchers)
                                           or isinstance(node.func, ast.Name) and node.func.id in launching):
            return node
        work.extend(c for c in child_nodes(node) if not isinstance(c, (*FUNCTION_DEFS, ast.ClassDef, ast.Lambda)))
    return None


def check(ctx: FileContext) -> list[RawFinding]:
    tests = collect_tests(ctx.tree, ctx.module.kernels)
    if not tests:  # a test file with no test: a test run collects nothing, so its kernel never runs there
        launch = _script_launch(ctx) if is_test_name(Path(ctx.path).stem) else None
        return [RawFinding(launch.lineno, launch.col_offset, CODE, "no test reaches the delivered wrapper or its "
                           "kernel: this test file holds no test function; its kernel runs only as a script")] if launch else []
    targets = wrapper_targets(ctx)
    if not targets and ctx.spec is None:
        return []  # nothing names a delivery: a test of something else (framework, utilities)
    launchers = ctx.module.launchers
    calls = dict(ctx.module.helpers)
    calls.update({n.name: n for n in ctx.tree.body if isinstance(n, FUNCTION_DEFS)})
    if any(_reaches(t, targets, launchers, calls, {t.name}) for t in tests):
        return []
    what = "nothing in this file names a delivered wrapper or launches a kernel" if not targets and not launchers else \
        f"none of {len(tests)} tests calls {', '.join(sorted(targets | launchers)[:3])}"
    first = tests[0]
    return [RawFinding(first.lineno, first.col_offset, CODE, f"no test reaches the delivered wrapper or its kernel: {what}")]


LIBRARY_ROOTS = frozenset({"torch", "numpy", "pytest", "math", "random", "itertools", "functools", "unittest", "typing",
                           "os", "sys", "pathlib", "json", "time", "copy", "re", "collections", "dataclasses", "contextlib",
                           "warnings", "logging", "tempfile", "operator", "statistics", "scipy", "einops", "hypothesis"})
MAX_SIBLINGS = 200  # files of a test's folder read for an implementation


def _golden_call(node: ast.AST) -> str | None:
    """The name of an operator's golden a call names (``golden_relu``, ``relu_golden``)."""
    if isinstance(node, ast.Call):
        last = (dotted(node.func) or [""])[-1]
        if is_golden_name(last) and last != "golden":
            return last
    return None


def _runs_only_known_code(test: ast.AST, functions: dict[str, ast.AST], aliases: dict[str, str]) -> bool:
    """Whether every call a test makes, itself or through same-file functions, is to a library
    (torch, numpy, pytest, the standard library), a builtin or a golden: then nothing it runs
    can be the delivery. A call of a parameter, a local callable, a class or an imported name
    from elsewhere may be, and so is not known."""
    work, seen = [test], {test.name}
    while work:
        for node in walk_nodes(work.pop()):
            if not isinstance(node, ast.Call) or _golden_call(node):
                continue
            parts = dotted(node.func)
            if parts is None:
                return False  # kernel[grid](...), factory(n)(...)
            head = parts[0]
            if len(parts) == 1 and head in functions:
                if head not in seen:
                    seen.add(head)
                    work.append(functions[head])
            elif head in aliases:
                if aliases[head].split(".")[0] not in LIBRARY_ROOTS:
                    return False
            elif len(parts) == 1 and not hasattr(builtins, head):
                return False
    return True


@lru_cache(maxsize=512)
def folder_implementation(folder: Path) -> str | None:
    """A file beside the tests that holds the implementation (a ``*_wrapper``/``*_impl`` module,
    or one that imports a kernel framework and decorates a ``jit``), by name."""
    try:
        siblings = sorted(p for p in folder.iterdir() if p.suffix == ".py")[:MAX_SIBLINGS]
    except OSError:
        return None
    return next((p.name for p in siblings if p.stem.endswith(("_wrapper", "_impl")) or defines_kernels(p)), None)


def golden_only(ctx: FileContext) -> list[RawFinding]:
    """TS101 for a test file with no kernel, framework, wrapper or spec in sight: its tests
    call an operator's golden and nothing that could be the delivery, whether or not the
    folder holds the implementation."""
    if not any("golden" in name for pair in ctx.aliases.items() for name in pair) and not any(
            isinstance(n, FUNCTION_DEFS) and "golden" in n.name for n in ctx.tree.body):
        return []  # no golden imported or defined: nothing to call one
    tests = collect_tests(ctx.tree, ctx.module.kernels)
    golden = next((g for g in (_golden_call(n) for n in ctx.nodes if isinstance(n, ast.Call)) if g), None)
    if not tests or golden is None:
        return []
    functions = {n.name: n for n in ctx.tree.body if isinstance(n, FUNCTION_DEFS)}
    if not all(_runs_only_known_code(t, functions, ctx.aliases) for t in tests):
        return []
    beside = folder_implementation(Path(ctx.path).resolve().parent)
    where = f"`{beside}` beside it, which no test runs" if beside else "the folder holds no implementation"
    return [RawFinding(tests[0].lineno, tests[0].col_offset, CODE, f"no test reaches the delivered wrapper or its kernel: "
                       f"the tests run the golden `{golden}` and library code only ({where})")]
