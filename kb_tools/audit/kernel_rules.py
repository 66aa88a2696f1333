"""The kernel family (KNxxx): device code read for three mistakes a wrapper audit cannot see.

* KN101 (accumulator-precision, platform-gated-conversion): an exponential (``vf.exp``,
  ``vf.exp_sub``, ``pl.exp``, ``tl.exp``) fed a bf16/fp16 value never widened to fp32. A
  value is narrow when cast to fp16/bf16, annotated so, or loaded while the spec declares a
  half dtype (with no spec, while the file itself declares only half floats: ``file_dtypes``;
  when it declares none, or half and wide ones, one note says the loads were not judged); a cast to fp32 (or
  arithmetic with a wide value) widens it. A same-file helper a kernel calls with a narrow
  argument is read with that argument's width.
* KN102 (exact-fast-paths): an output the wrapper allocates and passes to a same-file kernel
  that the kernel never stores to (every use is a load, a metadata read, or none). Any use
  the rule cannot read as read-only counts as a store, so it errs towards silence.
* KN103 (platform-gated-conversion): a call of a name ``kb/api_inventory.yaml`` lists as
  absent (``vf.cast``: only ``vf.astype`` exists).
"""

from __future__ import annotations

import ast
import itertools
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from kb_tools.audit.casts import cast_target, dtype_name
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.file_dtypes import declared_dtypes, literal_dtype
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.module import FUNCTION_DEFS, launch_target
from kb_tools.audit.names import dotted, qualname
from kb_tools.kb import vocabulary as V

NARROW, WIDE = "narrow", "wide"
EXP_NAMES = frozenset({"exp", "exp_sub", "exp2"})
KERNEL_MODULES = ("vf", "pl", "tl", "pypto", "pypto_pro", "triton", "libdevice", "math")
ALLOC_NAMES = frozenset({"empty", "empty_like", "empty_strided", "new_empty"})  # uninitialised: a store is due
META_ATTRS = frozenset({"shape", "dtype", "ndim", "stride", "strides", "size", "numel", "device", "element_ty",
                        "dtype_bytes", "itemsize"})
READ_ONLY_CALLS = frozenset({"program_id", "num_programs", "cdiv", "len", "range", "min", "max", "print", "static_print",
                             "device_print", "static_assert", "multiple_of", "max_contiguous", "isinstance"})
INVENTORY = "api_inventory.yaml"  # under kb/
WRAPPING = (ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Tuple, ast.List, ast.Starred, ast.keyword, ast.IfExp, ast.Slice)


def _is_load(call: ast.AST) -> bool:
    return isinstance(call, ast.Call) and "load" in ((dotted(call.func) or [""])[-1]).lower()


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
        if _is_load(expr):
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


def _statements_in_order(nodes: list[ast.AST]) -> list[ast.AST]:
    return sorted((n for n in nodes if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Call))),
                  key=lambda n: (n.lineno, n.col_offset, not isinstance(n, ast.Call)))


def _annotated_env(fn: ast.AST) -> dict[str, str]:
    return {arg.arg: NARROW for arg in fn.args.args + fn.args.kwonlyargs
            if arg.annotation is not None and any(literal_dtype(n) in V.HALF_DTYPES for n in ast.walk(arg.annotation))}


def _bound_arguments(call: ast.Call, fn: ast.AST) -> list[tuple[ast.arg, ast.AST]]:
    """(parameter, argument) pairs a call of ``fn`` binds: the positional arguments up to the
    first ``*x`` (what follows it sits at an unknown place), then the keywords by name."""
    params = fn.args.posonlyargs + fn.args.args
    positional = list(itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args))
    by_name = {p.arg: p for p in params + fn.args.kwonlyargs}
    return [*zip(params, positional), *((by_name[k.arg], k.value) for k in call.keywords if k.arg in by_name)]


def _bound_widths(call: ast.Call, helper: ast.AST, widths) -> dict[str, str]:
    """The helper's parameters bound to the widths of the arguments a call passes."""
    bound = {p.arg: widths(a) for p, a in _bound_arguments(call, helper)}
    return {name: w for name, w in bound.items() if w is not None}


def _scan(fn: ast.AST, nodes: list[ast.AST], env: dict[str, str], halves: str, aliases: dict[str, str],
          helpers: dict[str, ast.AST], via: str) -> tuple[list[RawFinding], list[tuple[ast.AST, dict[str, str], str]]]:
    """KN101 findings in one function body (``nodes``, its walk) read with ``env``, and the
    same-file helpers it calls with a narrow argument (to be read in turn with those widths)."""
    found, calls = [], []
    for node in _statements_in_order(nodes):
        if isinstance(node, ast.Call):
            parts = dotted(node.func) or []
            if parts and parts[-1] in EXP_NAMES and len(parts) >= 2 and _framework_call(node, aliases):
                if _join([_width(a, env, halves, aliases) for a in node.args[:2]]) == NARROW:
                    why = f"{halves} and the loaded value is never cast to fp32" if halves else "it is a bf16/fp16 value"
                    found.append(RawFinding(node.lineno, node.col_offset, "KN101",
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
    """Whether the file calls an exponential at all (else no load's width matters)."""
    return any(isinstance(n, ast.Attribute) and n.attr in EXP_NAMES for n in ctx.nodes)


_declared_memo: dict = {}  # the last file's declared dtypes: KN101 and its note read them once


def half_loads(ctx: FileContext) -> str | None:
    """Why loads are read as half ("the spec declares a half dtype", "no spec; the file
    declares only bfloat16 (line 12)"), "" when they are not, None when nothing says (no
    spec, and the file declares no dtype, or half and wide floats both)."""
    if ctx.spec is not None:
        return "the spec declares a half dtype" if any(d in V.HALF_DTYPES for d in ctx.spec.dtypes) else ""
    key = (ctx.path, id(ctx.tree))
    if key not in _declared_memo:
        _declared_memo.clear()
        _declared_memo[key] = declared_dtypes(ctx.tree, ctx.module.kernels, ctx.aliases)
    declared = _declared_memo[key]
    floats = [d for d in declared if d in V.FLOAT_DTYPES]
    halves = [d for d in V.HALF_DTYPES if d in declared]
    if not declared or (halves and len(halves) < len(floats)):
        return None  # nothing declared, or half and wide floats both: which one a load reads is not told
    return f"no spec; the file declares only {' and '.join(f'{d} (line {declared[d]})' for d in halves)}" if halves else ""


def narrow_exponentials(ctx: FileContext, halves: str | None = None) -> list[RawFinding]:
    """Each kernel read from its annotations; each same-file helper it calls with a narrow
    argument read again with those widths (a work list; each helper once per set of widths).
    ``halves``: why loads are half ("" when not; None: ask ``half_loads``)."""
    if not _exponentials(ctx):
        return []
    if halves is None:
        halves = half_loads(ctx) or ""
    helpers = {n.name: n for n in ctx.tree.body if isinstance(n, FUNCTION_DEFS)}
    work = [(fn, _annotated_env(fn), "") for fn, _flavour in ctx.module.kernels.values()]
    seen, out = set(), {}
    while work:
        fn, env, via = work.pop()
        key = (id(fn), frozenset(env.items()))
        if key in seen:
            continue
        seen.add(key)
        found, calls = _scan(fn, ctx.walk(fn), {**_annotated_env(fn), **env}, halves, ctx.aliases, helpers, via)
        for f in found:
            out.setdefault((f.line, f.col), f)
        work.extend(calls)
    return [out[k] for k in sorted(out)]


def undecided_loads(ctx: FileContext) -> str | None:
    """One note when an exponential is fed a loaded value whose width nothing tells (no spec;
    the file declares no dtype, or half and fp32 both): KN101 would report it were it half."""
    if not ctx.module.kernels or not _exponentials(ctx) or half_loads(ctx) is not None:
        return None
    known = {(f.line, f.col) for f in narrow_exponentials(ctx, "")}
    unsure = [f for f in narrow_exponentials(ctx, "?") if (f.line, f.col) not in known]
    if not unsure:
        return None
    return (f"{ctx.path}: AU015 KN101 cannot tell the dtype loaded for the exponential at line {unsure[0].line}"
            f"{f' (and {len(unsure) - 1} more)' if len(unsure) > 1 else ''}: no spec found, and the file declares "
            "no dtype or both half and wide ones; pass --spec")


def _parents(nodes: list[ast.AST]) -> dict[int, ast.AST]:
    return {id(child): node for node in nodes for child in ast.iter_child_nodes(node)}


def _derived(nodes: list[ast.AST], param: str) -> set[str]:
    """The parameter and every name assigned from an expression that mentions it (in the
    function whose walk is ``nodes``), except a load (a loaded value is data, not the
    output) or a metadata read."""
    names = {param}
    assigns = [n for n in nodes if isinstance(n, ast.Assign)]
    changed = True
    while changed:
        changed = False
        for a in assigns:
            if _is_load(a.value) or (isinstance(a.value, ast.Attribute) and a.value.attr in META_ATTRS):
                continue
            if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(a.value)):
                for t in a.targets:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name) and n.id not in names:
                            names.add(n.id)
                            changed = True
    return names


def _use_is_store(name: ast.Name, parents: dict[int, ast.AST]) -> bool:
    """Whether one use of an output's name may write it (conservatively: unless read-only)."""
    node = name
    while True:
        parent = parents.get(id(node))
        if parent is None:
            return True
        if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Store):
            return True
        if isinstance(parent, ast.Attribute):  # y.shape reads; y.copy_(...), y.store(...) may write
            return parent.attr not in META_ATTRS
        if isinstance(parent, ast.Call):
            if node is parent.func:
                return True
            last = (dotted(parent.func) or [""])[-1]
            return not (_is_load(parent) or last in READ_ONLY_CALLS)
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            return False  # an alias or a read: its own uses decide
        if isinstance(parent, ast.AugAssign):
            return True
        if isinstance(parent, (ast.Compare, ast.If, ast.While, ast.Assert, ast.BoolOp, ast.Return, ast.Expr)):
            return isinstance(parent, ast.Expr)
        if not isinstance(parent, WRAPPING):
            return True
        node = parent


def _stored(nodes: list[ast.AST], param: str) -> bool:
    """Whether the kernel whose walk is ``nodes`` may write ``param`` or a name made from it."""
    names = _derived(nodes, param)
    parents = _parents(nodes)
    return any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) and _use_is_store(n, parents)
               for n in nodes)


def _allocations(nodes: list[ast.AST], aliases: dict[str, str]) -> dict[str, int]:
    found = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            parts = dotted(node.value.func) or []
            q = qualname(node.value.func, aliases) or ""
            if parts and parts[-1] in ALLOC_NAMES and (q.startswith("torch.") or parts[-1] == "new_empty"):
                found[node.targets[0].id] = node.lineno
    return found


def _stub(fn: ast.AST) -> bool:
    """A kernel with no body (pass, ..., a docstring) declares, it does not implement."""
    return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) for s in fn.body)


def _uses(nodes: list[ast.AST], name: str) -> list[int]:
    return [n.lineno for n in nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


def unstored_outputs(ctx: FileContext) -> list[RawFinding]:
    """An allocation is an output when the host reads it only after the launches that take it
    (returned or compared); one filled or read before them is an input or a workspace."""
    kernels = {name: fn for name, (fn, _f) in ctx.module.kernels.items() if not _stub(fn)}
    if not kernels:
        return []
    out = []
    for info in ctx.module.functions:
        nodes = ctx.walk(info.node)
        allocated = _allocations(nodes, ctx.aliases)
        if not allocated:
            continue
        passed: dict[str, list[tuple[ast.FunctionDef, ast.arg, int]]] = {}
        for call in (n for n in nodes if isinstance(n, ast.Call)):
            target = launch_target(call, set(kernels))
            kernel = kernels.get((target or "").split(".")[-1])
            if kernel is None:
                continue
            for param, arg in _bound_arguments(call, kernel):  # *x.stride(): what follows is unknown
                if isinstance(arg, ast.Name) and arg.id in allocated:
                    passed.setdefault(arg.id, []).append((kernel, param, call.lineno, call.end_lineno or call.lineno))
        for name, launches in passed.items():
            first, last = min(l for *_, l, _e in launches), max(e for *_, e in launches)  # the launch's own arguments are not after it
            uses = _uses(nodes, name)
            if any(allocated[name] < u < first for u in uses) or not any(u > last for u in uses):
                continue  # filled or read before the launch, or never consumed after it
            if any(_stored(ctx.walk(kernel), param.arg) for kernel, param, *_ in launches):
                continue
            kernel, param, *_ = launches[0]
            out.append(RawFinding(param.lineno, param.col_offset, "KN102",
                                  f"kernel `{kernel.name}` never stores to `{param.arg}`, the output `{name}` that "
                                  f"`{info.name}` allocates at line {allocated[name]} and reads after the launch"))
    return out


# The KB whose inventory KN103 reads when a command was told one (--kb-root); else the one
# found from here (kb_tools.kb.root).
_inventory_root: list = [None]


@contextmanager
def inventory_of(root):
    """Within the block KN103 reads ``root``'s kb/api_inventory.yaml."""
    before, _inventory_root[0] = _inventory_root[0], root
    try:
        yield
    finally:
        _inventory_root[0] = before


def absent_api() -> dict[str, str]:
    """name -> the name to use instead, from the KB's kb/api_inventory.yaml (``inventory_of``)."""
    from kb_tools.diagnostics import KbError
    from kb_tools.kb.root import find_root

    root = _inventory_root[0]
    if root is None:
        try:
            root = find_root()
        except KbError:  # no KB here: nothing to check kernel names against
            return {}
    return read_inventory(Path(root) / "kb" / INVENTORY)


@lru_cache(maxsize=4)
def read_inventory(path: Path) -> dict[str, str]:
    """An inventory's table; empty where the KB has none. One that is there but broken (not
    YAML, not a mapping of names under ``absent:``) is one line (AU030, exit 2): it would
    otherwise switch KN103 off without a word. kbt lint reads it the same way."""
    from kb_tools.diagnostics import EXIT_USAGE, KbError, KbErrors, fail
    from kb_tools.files.text import is_file, read_text
    from kb_tools.files.yamlio import load_yaml

    if not is_file(path):
        return {}
    try:
        data = load_yaml(read_text(path, code_prefix="AU"), path, code="AU030")
    except KbErrors as exc:
        raise KbError(exc.diagnostics[0], EXIT_USAGE) from None
    except KbError as exc:
        raise KbError(exc.diagnostic, EXIT_USAGE) from None
    entries = data.get("absent") if isinstance(data, dict) else None
    if not isinstance(entries, dict) or not entries:
        fail(path, getattr(data, "line", None), "AU030", "needs `absent:`, a mapping of kernel API names to "
             "{use: <the name that exists>, ...}; KN103 checks kernel API names against it", EXIT_USAGE)
    for name, entry in entries.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("use"), str):
            fail(path, entries.line_of(name), "AU030", f"absent.{name} needs `use:`, the name that exists instead", EXIT_USAGE)
    return {name: entry["use"] for name, entry in entries.items()}


def absent_apis(ctx: FileContext) -> list[RawFinding]:
    table = absent_api()
    if not table:
        return []
    out = []
    for node in ctx.nodes:
        if isinstance(node, ast.Call):
            parts = dotted(node.func)
            if not parts or len(parts) < 2:
                continue
            written = ".".join(parts)
            q = qualname(node.func, ctx.aliases) or written
            hit = next((k for k in table if written == k or q.endswith("." + k)), None)
            if hit:
                out.append(RawFinding(node.lineno, node.col_offset, "KN103",
                                      f"{hit} does not exist (kb/api_inventory.yaml); use {table[hit]}"))
    return out


def check_kernel(ctx: FileContext) -> list[RawFinding]:
    return [*narrow_exponentials(ctx), *unstored_outputs(ctx), *absent_apis(ctx)]
