"""The nodes of one module and of each of its functions, each walked once: the rules that
read a whole module or a whole function ask here instead of walking it again.

The lists are in ``ast.walk`` order (breadth first), so a rule that keeps the last of
several matches sees them in the order it always did. Nothing is walked until something
asks, so a file no rule reads costs nothing here. (Splitting the module's one walk into
per-function lists costs more than walking a function asked for on its own.)
"""

from __future__ import annotations

import ast

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)
_AST = ast.AST


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``, in the same order."""
    out = []
    for name in node._fields:
        value = getattr(node, name, None)
        if isinstance(value, _AST):
            out.append(value)
        elif value.__class__ is list:
            out.extend([v for v in value if isinstance(v, _AST)])
    return out


def walk_nodes(root: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(root))``, in the same order, without its three generators per node."""
    out = [root]
    append, extend = out.append, out.extend
    for node in out:  # the list grows as it is read: a queue
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, _AST):
                append(value)
            elif value.__class__ is list:
                extend([v for v in value if isinstance(v, _AST)])
    return out


class NodeIndex:
    """The nodes of one module (``nodes``) and of each function in it (``walk``)."""

    def __init__(self, tree: ast.AST):
        self.tree = tree
        self._nodes: list[ast.AST] | None = None
        self._within: dict[int, list[ast.AST]] = {}  # id(function) -> its nodes, the function first

    @property
    def nodes(self) -> list[ast.AST]:
        """Every node of the module, in ``ast.walk`` order (read, never change it)."""
        if self._nodes is None:
            self._nodes = walk_nodes(self.tree)
        return self._nodes

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """``list(ast.walk(node))``: a function's is kept, any other node's walked afresh."""
        got = self._within.get(id(node))
        if got is not None:
            return got
        got = walk_nodes(node)
        if isinstance(node, SCOPES):
            self._within[id(node)] = got
        return got
