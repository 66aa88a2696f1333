"""Import aliases: which local names stand for which dotted module paths.

``import torch as th``, ``from torch import zeros``, ``import torch.nn.functional as F`` and
``from pypto_pro import language as pl`` all bind a local name to a dotted path; the audit
resolves every call through this table so that an alias hides nothing (seed 003, "how it is
checked": the grep verifier it replaces missed ``import torch as th``).
"""

from __future__ import annotations

import ast


def bind_import(node: ast.Import | ast.ImportFrom, aliases: dict[str, str]) -> None:
    """Record the names one import statement binds (relative imports bind nothing known)."""
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                aliases[a.asname] = a.name
            else:  # ``import torch.nn.functional`` binds ``torch``
                root = a.name.split(".")[0]
                aliases[root] = root
    elif node.module and not node.level:
        for a in node.names:
            if a.name != "*":
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"


def record_import(node: ast.Import | ast.ImportFrom, imports: dict[str, tuple[int, str | None, str | None]]) -> bool:
    """Record what each local name one import binds stands for, relative imports included:
    ``(level, module, attribute)``, the attribute None for ``import a.b as m``. False for a
    star import, which binds names no one can list without importing the module."""
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.asname:
                imports[a.asname] = (0, a.name, None)
            else:
                imports[a.name.split(".")[0]] = (0, a.name.split(".")[0], None)
        return True
    star = False
    for a in node.names:
        if a.name == "*":
            star = True
        else:
            imports[a.asname or a.name] = (node.level, node.module, a.name)
    return not star


_NAME, _ATTRIBUTE = ast.Name, ast.Attribute


def dotted(expr: ast.AST) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None for anything that is not a plain name chain. (Asked
    of every call and attribute the audit reads: a bare name and a call's result are answered
    first.)"""
    cls = expr.__class__
    if cls is _NAME:
        return [expr.id]
    if cls is not _ATTRIBUTE and not isinstance(expr, (_NAME, _ATTRIBUTE)):
        return None
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return parts[::-1]


def qualname(expr: ast.AST, aliases: dict[str, str]) -> str | None:
    """The fully qualified dotted name ``expr`` refers to through an import, or None."""
    parts = dotted(expr)
    if not parts or parts[0] not in aliases:
        return None
    return ".".join([aliases[parts[0]], *parts[1:]])
