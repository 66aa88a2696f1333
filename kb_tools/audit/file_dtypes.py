"""The dtypes a file declares for itself, read where no spec is found: the kernel rule on narrow
exponentials (which loads are half) and the test rule on exact comparisons (which comparisons
are of floats) use them in place of the spec's list.

Declared means written as an input's dtype, never as an accumulator's: a dtype listed in a
``pytest.mark.parametrize`` (directly or through a module-level list it names), a ``DT_BF16``
/ ``pl.BF16`` annotation of a parameter, and the ``dtype=`` of a tensor host code creates
(``torch.randn(..., dtype=torch.bfloat16)``) or a half cast of one (``x.half()``). Kernel
bodies are not read: the fp32 they name is the widening the rules look for. A draw without
``dtype=`` declares torch's default (``randn`` float32, ``randint`` int64).
"""

from __future__ import annotations

import ast
from kb_tools.audit.casts import cast_target, dtype_name
from kb_tools.audit.module import FUNCTION_DEFS
from kb_tools.audit.names import dotted, qualname
from kb_tools.kb import vocabulary as V
from kb_tools.syntax import walk_nodes

DEFAULT_DTYPES = {"randn": "float32", "rand": "float32", "normal": "float32", "randint": "int64", "randperm": "int64"}
HALF_CASTS = frozenset({"half", "bfloat16", "to", "astype", "type", "cast"})  # the calls that may cast to a half dtype


def literal_dtype(expr: ast.AST) -> str | None:
    """A dtype written literally, bare ``DT_BF16`` (``from pypto import *``) included."""
    if isinstance(expr, ast.Name) and expr.id.startswith("DT_"):
        return dtype_name(ast.Attribute(value=ast.Name(id="pypto", ctx=ast.Load()), attr=expr.id, ctx=ast.Load()))
    return dtype_name(expr)


def _listed(expr: ast.AST, values: dict[str, ast.AST]) -> set[str]:
    """The dtypes an expression lists, through module-level names it mentions (DTYPES)."""
    out = set()
    for n in ast.walk(expr):
        d = literal_dtype(n) if isinstance(n, (ast.Attribute, ast.Name, ast.Constant)) else None
        if d:
            out.add(d)
        elif isinstance(n, ast.Name) and n.id in values:
            out |= {literal_dtype(m) for m in ast.walk(values[n.id]) if literal_dtype(m)}
    return out


def parametrised(fn: ast.AST, values: dict[str, ast.AST]) -> dict[str, set[str]]:
    """Parameter name -> the dtypes a ``parametrize`` decorator gives it (a name holding
    ``dtype``, or any parameter whose values are dtypes)."""
    out: dict[str, set[str]] = {}
    for dec in getattr(fn, "decorator_list", ()):
        if not (isinstance(dec, ast.Call) and (dotted(dec.func) or [""])[-1] == "parametrize" and len(dec.args) >= 2):
            continue
        names, listed = dec.args[0], dec.args[1]
        if isinstance(names, ast.Constant) and isinstance(names.value, str):
            params = [p.strip() for p in names.value.split(",")]
            dtypes = _listed(listed, values)
            if dtypes:
                chosen = [p for p in params if "dtype" in p.lower()] or params[:1]
                for p in chosen:
                    out.setdefault(p, set()).update(dtypes)
    return out


def module_values(tree: ast.Module) -> dict[str, ast.AST]:
    return {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}


def declared_dtypes(tree: ast.Module, nodes: list[ast.AST], kernels, aliases: dict[str, str]) -> dict[str, int]:
    """What the file declares as its inputs' dtypes (see the module docstring): each dtype
    and the first line that declares it. ``nodes``: the tree's nodes in ``ast.walk`` order
    (the module's index holds them)."""
    kernel_ids = {id(n) for fn, _f in kernels.values() for stmt in fn.body for n in walk_nodes(stmt)}
    values = module_values(tree)
    found: dict[str, int] = {}

    def add(dtypes, line):
        for d in dtypes:
            found.setdefault(d, line)

    for node in nodes:
        if id(node) in kernel_ids:
            continue
        if isinstance(node, FUNCTION_DEFS):
            for dtypes in parametrised(node, values).values():
                add(sorted(dtypes), node.lineno)
            for arg in node.args.args + node.args.kwonlyargs:
                if arg.annotation is not None:
                    add(sorted(literal_dtype(n) for n in ast.walk(arg.annotation) if literal_dtype(n)), arg.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
            last = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            kw = next((k.value for k in node.keywords if k.arg == "dtype"), None)
            if (kw is not None or last in DEFAULT_DTYPES) and (qualname(node.func, aliases) or "").split(".")[0] in ("torch", "numpy"):
                d = literal_dtype(kw) if kw is not None else DEFAULT_DTYPES[last]
                if d:
                    add([d], node.lineno)
            if last in HALF_CASTS:
                cast = cast_target(node)
                if cast and cast[0] in V.HALF_DTYPES:
                    add([cast[0]], node.lineno)
    return found
