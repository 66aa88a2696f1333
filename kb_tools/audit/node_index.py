"""The nodes of one module and of each of its functions, each walked once: the rules that
read a whole module or a whole function ask here instead of walking it again.

The lists are ``kb_tools.syntax.walk_nodes``'s (``ast.walk`` order, less expression
contexts). Nothing is walked until something asks, so a file no rule reads costs nothing
here. (Splitting the module's one walk into per-function lists costs more than walking a
function asked for on its own.)
"""

from __future__ import annotations

import ast

from kb_tools.syntax import statement_nodes, walk_nodes

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef)


class NodeIndex:
    """The nodes of one module (``nodes``) and of each function in it (``walk``)."""

    def __init__(self, tree: ast.AST):
        self.tree = tree
        self._nodes: list[ast.AST] | None = None
        self._statements: list[ast.AST] | None = None
        self._within: dict[int, list[ast.AST]] = {}  # id(function) -> its nodes, the function first
        self._groups: dict[int, dict[type, list[ast.AST]]] = {}  # id(function) or 0 (the module) -> nodes by class
        self.tables = None  # the module's dispatch tables (``dispatch.Tables.of``), when first asked

    @property
    def nodes(self) -> list[ast.AST]:
        """Every node of the module but contexts, in ``ast.walk`` order (read, never change it)."""
        if self._nodes is None:
            self._nodes = walk_nodes(self.tree)
        return self._nodes

    @property
    def statements(self) -> list[ast.AST]:
        """The module's statements, in ``ast.walk`` order (``statement_nodes``), kept."""
        if self._statements is None:
            self._statements = statement_nodes(self.tree)
        return self._statements

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """``walk_nodes(node)``: a function's is kept, any other node's walked afresh."""
        got = self._within.get(id(node))
        if got is not None:
            return got
        got = walk_nodes(node)
        if isinstance(node, SCOPES):
            self._within[id(node)] = got
        return got

    def of(self, cls: type, within: ast.AST | None = None) -> list[ast.AST]:
        """The nodes of class ``cls`` (exactly: the parser makes no subclass of a node class) in
        the module, or in the function ``within``, in walk order: a rule that looks for one kind
        of node reads it here instead of testing every node. Grouped once per module or function."""
        key = 0 if within is None else id(within)
        groups = self._groups.get(key)
        if groups is None:
            groups = {}
            for node in (self.nodes if within is None else self.walk(within)):
                try:
                    groups[node.__class__].append(node)
                except KeyError:
                    groups[node.__class__] = [node]
            if within is None or isinstance(within, SCOPES):
                self._groups[key] = groups
        return groups.get(cls, _NONE)


_NONE: list = []  # what ``of`` hands back for a class absent (read, never change it)
