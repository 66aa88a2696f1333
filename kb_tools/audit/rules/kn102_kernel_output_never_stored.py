"""KN102 (exact-fast-paths): an output the wrapper allocates and passes to a same-file kernel
that the kernel never stores to (every use is a load, a metadata read, or none). Any use the
rule cannot read as read-only counts as a store, so it errs towards silence.
"""

from __future__ import annotations

import ast

from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.kernel_rules import bound_arguments, is_load
from kb_tools.audit.module import launch_target
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.node_index import NodeIndex
from kb_tools.audit.roles import IMPL
from kb_tools.syntax import parents_of, walk_nodes

CODE = "KN102"
ROLES = (IMPL,)  # the file roles (kb_tools/audit/roles.py) the rule reads
ALLOC_NAMES = frozenset({"empty", "empty_like", "empty_strided", "new_empty"})  # uninitialised: a store is due


META_ATTRS = frozenset({"shape", "dtype", "ndim", "stride", "strides", "size", "numel", "device", "element_ty",
                        "dtype_bytes", "itemsize"})
READ_ONLY_CALLS = frozenset({"program_id", "num_programs", "cdiv", "len", "range", "min", "max", "print", "static_print",
                             "device_print", "static_assert", "multiple_of", "max_contiguous", "isinstance"})


WRAPPING = (ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Tuple, ast.List, ast.Starred, ast.keyword, ast.IfExp, ast.Slice)


class _Kernel:
    """What every parameter's question reads of one kernel, read once: its nodes, each node's
    parent, and the names each assignment reads and binds (loads and metadata reads left out:
    a loaded value is data, not the output)."""

    def __init__(self, index: NodeIndex, fn: ast.AST):
        self.names = index.of(ast.Name, fn)
        self.parents = parents_of(index.walk(fn))  # expression contexts left out: a use is read from its name up
        self.flows = [({n.id for n in walk_nodes(a.value) if n.__class__ is ast.Name},
                       [n.id for t in a.targets for n in walk_nodes(t) if n.__class__ is ast.Name])
                      for a in index.of(ast.Assign, fn)
                      if not (is_load(a.value) or (isinstance(a.value, ast.Attribute) and a.value.attr in META_ATTRS))]


def _derived(kernel: _Kernel, param: str) -> set[str]:
    """The parameter and every name assigned from an expression that mentions it."""
    names = {param}
    changed = True
    while changed:
        changed = False
        for reads, binds in kernel.flows:
            if not reads.isdisjoint(names):
                for name in binds:
                    if name not in names:
                        names.add(name)
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
            return not (is_load(parent) or last in READ_ONLY_CALLS)
        if isinstance(parent, (ast.Assign, ast.AnnAssign)):
            return False  # an alias or a read: its own uses decide
        if isinstance(parent, ast.AugAssign):
            return True
        if isinstance(parent, (ast.Compare, ast.If, ast.While, ast.Assert, ast.BoolOp, ast.Return, ast.Expr)):
            return isinstance(parent, ast.Expr)
        if not isinstance(parent, WRAPPING):
            return True
        node = parent


def _stored(kernel: _Kernel, param: str) -> bool:
    """Whether the kernel may write ``param`` or a name made from it."""
    names = _derived(kernel, param)
    return any(n.id in names and isinstance(n.ctx, ast.Load)
               and _use_is_store(n, kernel.parents) for n in kernel.names)


def _allocations(assigns: list[ast.Assign], aliases: dict[str, str]) -> dict[str, int]:
    found = {}
    for node in assigns:
        if isinstance(node.value, ast.Call) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            parts = dotted(node.value.func) or []
            q = qualname(node.value.func, aliases) or ""
            if parts and parts[-1] in ALLOC_NAMES and (q.startswith("torch.") or parts[-1] == "new_empty"):
                found[node.targets[0].id] = node.lineno
    return found


def _stub(fn: ast.AST) -> bool:
    """A kernel with no body (pass, ..., a docstring) declares, it does not implement."""
    return all(isinstance(s, ast.Pass) or (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)) for s in fn.body)


def _uses(names: list[ast.Name], name: str) -> list[int]:
    return [n.lineno for n in names if n.id == name and isinstance(n.ctx, ast.Load)]


def check(ctx: FileContext) -> list[RawFinding]:
    """An allocation is an output when the host reads it only after the launches that take it
    (returned or compared); one filled or read before them is an input or a workspace."""
    kernels = {name: fn for name, (fn, _f) in ctx.module.kernels.items() if not _stub(fn)}
    if not kernels or not ctx.may_name(ALLOC_NAMES):  # nothing allocated: no function need be walked
        return []
    out = []
    read: dict[int, _Kernel] = {}  # id(kernel) -> its reading, shared by every launch and parameter
    index = ctx.module.index
    for info in ctx.module.functions:
        allocated = _allocations(index.of(ast.Assign, info.node), ctx.aliases)
        if not allocated:
            continue
        passed: dict[str, list[tuple[ast.FunctionDef, ast.arg, int]]] = {}
        for call in index.of(ast.Call, info.node):
            target = launch_target(call, set(kernels))
            kernel = kernels.get((target or "").split(".")[-1])
            if kernel is None:
                continue
            for param, arg in bound_arguments(call, kernel):  # *x.stride(): what follows is unknown
                if isinstance(arg, ast.Name) and arg.id in allocated:
                    passed.setdefault(arg.id, []).append((kernel, param, call.lineno, call.end_lineno or call.lineno))
        for name, launches in passed.items():
            first, last = min(l for *_, l, _e in launches), max(e for *_, e in launches)  # the launch's own arguments are not after it
            uses = _uses(index.of(ast.Name, info.node), name)
            if any(allocated[name] < u < first for u in uses) or not any(u > last for u in uses):
                continue  # filled or read before the launch, or never consumed after it
            if any(_stored(read.get(id(kernel)) or read.setdefault(id(kernel), _Kernel(index, kernel)), param.arg)
                   for kernel, param, *_ in launches):
                continue
            kernel, param, *_ = launches[0]
            out.append(RawFinding(param.lineno, param.col_offset, CODE,
                                  f"kernel `{kernel.name}` never stores to `{param.arg}`, the output `{name}` that "
                                  f"`{info.name}` allocates at line {allocated[name]} and reads after the launch"))
    return out
