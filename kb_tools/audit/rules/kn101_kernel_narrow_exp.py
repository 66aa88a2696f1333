"""KN101 (accumulator-precision, platform-gated-conversion): an exponential (``vf.exp``,
``vf.exp_sub``, ``pl.exp``, ``tl.exp``) fed a bf16/fp16 value never widened to fp32. A value is
narrow when cast to fp16/bf16, annotated so, or loaded while the spec declares a half dtype
(with no spec, while the file itself declares only half floats: ``file_dtypes``; when it
declares none, or half and wide ones, one note says the loads were not judged); a cast to fp32
(or arithmetic with a wide value) widens it. A same-file helper a kernel calls with a narrow
argument is read with that argument's width.
"""

from __future__ import annotations

import ast

from kb_tools.audit.casts import cast_target, dtype_name
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.file_dtypes import declared_dtypes, literal_dtype
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.kernel_rules import bound_arguments, is_load
from kb_tools.audit.module import FUNCTION_DEFS
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.roles import IMPL
from kb_tools.kb import vocabulary as V
from kb_tools.syntax import walk_nodes

CODE = "KN101"
ROLES = (IMPL,)  # the file roles (kb_tools/audit/roles.py) the rule reads
NARROW, WIDE = "narrow", "wide"
EXP_NAMES = frozenset({"exp", "exp_sub", "exp2"})


KERNEL_MODULES = ("vf", "pl", "tl", "pypto", "pypto_pro", "triton", "libdevice", "math")


def _framework_call(call: ast.Call, aliases: dict[str, str]) -> bool:
    parts = dotted(call.func)
    if not parts or len(parts) < 2:
        return False
    root = (qualname(call.func, aliases) or ".".join(parts)).split(".")[0]
    return parts[0] in KERNEL_MODULES or root in KERNEL_MODULES


def _width(expr: ast.AST, env: dict[str, str], halves: str, aliases: dict[str, str]) -> str | None:
    """NARROW, WIDE or None (unknown) for one expression of a kernel body."""
    if isinstance(expr, ast.Name):
        return env.get(expr.id)
    if isinstance(expr, ast.Subscript):
        return _width(expr.value, env, halves, aliases)
    if isinstance(expr, ast.Call):
        cast = cast_target(expr)
        if cast:
            return None if cast[0] is None else NARROW if cast[0] in V.HALF_DTYPES else WIDE if cast[0] in ("float32", "float64") else None
        if is_load(expr):
            return NARROW if halves else None
        if _framework_call(expr, aliases):
            named = [dtype_name(a) for a in [*expr.args, *(k.value for k in expr.keywords)]]
            named = [d for d in named if d]
            if named:  # pypto.matmul(a, b, DT_FP32), pypto.tensor(shape, DT_FP32): the result's dtype
                return NARROW if named[-1] in V.HALF_DTYPES else WIDE if named[-1] in ("float32", "float64") else None
            return _join([_width(a, env, halves, aliases) for a in expr.args])
        return None
    if isinstance(expr, ast.BinOp):
        return _join([_width(expr.left, env, halves, aliases), _width(expr.right, env, halves, aliases)])
    if isinstance(expr, ast.UnaryOp):
        return _width(expr.operand, env, halves, aliases)
    if isinstance(expr, ast.IfExp):
        return _join([_width(expr.body, env, halves, aliases), _width(expr.orelse, env, halves, aliases)])
    return None


def _join(widths: list[str | None]) -> str | None:
    """Arithmetic with a wide operand is wide (promotion); otherwise narrow if any is."""
    if WIDE in widths:
        return WIDE
    return NARROW if NARROW in widths else None


def _statements_in_order(ctx: FileContext, fn: ast.AST) -> list[ast.AST]:
    """``fn``'s assignments and calls in source order, sorted once per file for every reading."""
    key = (CODE, "order", id(fn))
    if key not in ctx.memo:
        ctx.memo[key] = _sorted_statements(ctx.walk(fn))
    return ctx.memo[key]


def _sorted_statements(nodes: list[ast.AST]) -> list[ast.AST]:
    return sorted((n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call))),
                  key=lambda n: (n.lineno, n.col_offset, not isinstance(n, ast.Call)))


def _annotated_env(fn: ast.AST) -> dict[str, str]:
    return {arg.arg: NARROW for arg in fn.args.args + fn.args.kwonlyargs
            if arg.annotation is not None and any(literal_dtype(n) in V.HALF_DTYPES for n in walk_nodes(arg.annotation))}


def _bound_widths(call: ast.Call, helper: ast.AST, widths) -> dict[str, str]:
    """The helper's parameters bound to the widths of the arguments a call passes."""
    bound = {p.arg: widths(a) for p, a in bound_arguments(call, helper)}
    return {name: w for name, w in bound.items() if w is not None}


def _scan(fn: ast.AST, ordered: list[ast.AST], env: dict[str, str], halves: str, aliases: dict[str, str],
          helpers: dict[str, ast.AST], via: str) -> tuple[list[RawFinding], list[tuple[ast.AST, dict[str, str], str]]]:
    """KN101 findings in one function body (``ordered``: its statements in source order) read with ``env``, and the
    same-file helpers it calls with a narrow argument (to be read in turn with those widths)."""
    found, calls = [], []
    for node in ordered:
        if isinstance(node, ast.Call):
            parts = dotted(node.func) or []
            if parts and parts[-1] in EXP_NAMES and len(parts) >= 2 and _framework_call(node, aliases):
                if _join([_width(a, env, halves, aliases) for a in node.args[:2]]) == NARROW:
                    why = f"{halves} and the loaded value is never cast to fp32" if halves else "it is a bf16/fp16 value"
                    found.append(RawFinding(node.lineno, node.col_offset, CODE,
                                            f"{'.'.join(parts)} on a value never widened to fp32 ({why}{via}); "
                                            "vf.exp / vf.exp_sub have no BF16 row"))
            elif len(parts) == 1 and parts[0] in helpers and helpers[parts[0]] is not fn:
                bound = _bound_widths(node, helpers[parts[0]], lambda a: _width(a, env, halves, aliases))
                if NARROW in bound.values():
                    calls.append((helpers[parts[0]], bound, f", passed to `{parts[0]}` by `{fn.name}` at line {node.lineno}"))
            continue
        value = node.value
        if value is None:
            continue
        width = _width(value, env, halves, aliases)
        if isinstance(node, ast.AugAssign):
            width = _join([env.get(node.target.id) if isinstance(node.target, ast.Name) else None, width])
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:  # x[:] = v writes into x and keeps its dtype: only names rebind
            elements = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
            for name in (n.id for n in elements if isinstance(n, ast.Name)):
                if width is None:
                    env.pop(name, None)
                else:
                    env[name] = width
    return found, calls


def _exponentials(ctx: FileContext) -> bool:
    """Whether the file calls an exponential at all (else no load's width matters): its
    attributes read once from the index, the answer kept for ``undecided``."""
    key = (CODE, "exponentials")
    if key not in ctx.memo:
        ctx.memo[key] = ctx.may_name(EXP_NAMES) and any(n.attr in EXP_NAMES for n in ctx.module.index.of(ast.Attribute))
    return ctx.memo[key]


_declared_memo: list = [None, None]  # [tree, its declared dtypes] of the last file: KN101 and its note read them once


def half_loads(ctx: FileContext) -> str | None:
    """Why loads are read as half ("the spec declares a half dtype", "no spec; the file
    declares only bfloat16 (line 12)"), "" when they are not, None when nothing says (no
    spec, and the file declares no dtype, or half and wide floats both)."""
    if ctx.spec is not None:
        return "the spec declares a half dtype" if any(d in V.HALF_DTYPES for d in ctx.spec.dtypes) else ""
    if _declared_memo[0] is not ctx.tree:  # the tree itself: an id is reused once a tree is freed
        _declared_memo[:] = [ctx.tree, declared_dtypes(ctx.tree, ctx.nodes, ctx.module.kernels, ctx.aliases)]
    declared = _declared_memo[1]
    floats = [d for d in declared if d in V.FLOAT_DTYPES]
    halves = [d for d in V.HALF_DTYPES if d in declared]
    if not declared or (halves and len(halves) < len(floats)):
        return None  # nothing declared, or half and wide floats both: which one a load reads is not told
    return f"no spec; the file declares only {' and '.join(f'{d} (line {declared[d]})' for d in halves)}" if halves else ""


def check(ctx: FileContext, halves: str | None = None) -> list[RawFinding]:
    """Each kernel read from its annotations; each same-file helper it calls with a narrow
    argument read again with those widths (a work list; each helper once per set of widths).
    ``halves``: why loads are half ("" when not; None: ask ``half_loads``)."""
    if not _exponentials(ctx):
        return []
    if halves is None:
        halves = half_loads(ctx) or ""
    key = (CODE, "found", halves)  # ``undecided`` asks again for what the rule's own run found
    if key not in ctx.memo:
        ctx.memo[key] = _found(ctx, halves)
    return ctx.memo[key]


def _found(ctx: FileContext, halves: str) -> list[RawFinding]:
    """``check``'s findings with loads read as ``halves`` says, computed once per file."""
    helpers = {n.name: n for n in ctx.tree.body if isinstance(n, FUNCTION_DEFS)}
    work = [(fn, _annotated_env(fn), "") for fn, _flavour in ctx.module.kernels.values()]
    seen, out = set(), {}
    while work:
        fn, env, via = work.pop()
        key = (id(fn), frozenset(env.items()))
        if key in seen:
            continue
        seen.add(key)
        found, calls = _scan(fn, _statements_in_order(ctx, fn), {**_annotated_env(fn), **env}, halves, ctx.aliases, helpers, via)
        for f in found:
            out.setdefault((f.line, f.col), f)
        work.extend(calls)
    return [out[k] for k in sorted(out)]


def undecided(ctx: FileContext) -> str | None:
    """One note when an exponential is fed a loaded value whose width nothing tells (no spec;
    the file declares no dtype, or half and fp32 both): KN101 would report it were it half."""
    if not ctx.module.kernels or not _exponentials(ctx) or half_loads(ctx) is not None:
        return None
    known = {(f.line, f.col) for f in check(ctx, "")}
    unsure = [f for f in check(ctx, "?") if (f.line, f.col) not in known]
    if not unsure:
        return None
    return (f"{ctx.path}: AU015 KN101 cannot tell the dtype loaded for the exponential at line {unsure[0].line}"
            f"{f' (and {len(unsure) - 1} more)' if len(unsure) > 1 else ''}: no spec found, and the file declares "
            "no dtype or both half and wide ones; pass --spec")
