"""Walking a Python syntax tree fast, in ``ast.walk``'s order: what every static reader of
Python here (the audit, the CANN golden reader) walks with.

The lists leave out expression contexts (``Load``, ``Store``, ``Del``: a third of a module's
nodes, read through ``node.ctx`` and never looked for in a walk), and each node class's
fields that hold names, strings or numbers are never looked at: which fields may hold nodes
is read once per class off its ASDL signature (the class's docstring).
"""

from __future__ import annotations

import ast
import re

_AST = ast.AST
_LEAF_NAME = ast.Name  # its fields hold an identifier and a context: nothing walked into
_LEAF_TYPES = frozenset({"identifier", "string", "constant", "int", "expr_context"})
_SIGNATURE = re.compile(r"\w+\((.*)\)$", re.S)
_FIELDS: dict[type, tuple[str, ...]] = {}  # node class -> the fields that may hold nodes


def _signature(cls: type) -> dict[str, str] | None:
    """field -> its ASDL type (``expr*``, ``identifier``), read off the class's docstring
    (``ast.Name``'s is ``Name(identifier id, expr_context ctx)``); None where it has none."""
    found = _SIGNATURE.match((cls.__doc__ or "").strip())
    if not found:
        return None
    kinds = {}
    for part in filter(None, (p.strip() for p in found.group(1).split(","))):
        kind, _, name = part.rpartition(" ")
        kinds[name] = kind
    return kinds


def _node_fields(cls: type) -> tuple[str, ...]:
    """The fields of ``cls`` that may hold nodes; all its fields where it has no signature."""
    kinds = _signature(cls)
    if kinds is None:
        return tuple(cls._fields)
    return tuple(f for f in cls._fields if kinds.get(f, "").rstrip("?*") not in _LEAF_TYPES)


# How a field holds nodes: one node or None (``expr?``), a list of nodes (``expr*``), a list that
# may hold None too (the key of a dict display's ``**`` entry, a keyword-only parameter without a
# default), or not known (a class without a signature: each value is looked at).
_ONE, _LIST, _LIST_WITH_NONE, _ANY = range(4)
_HOLES = frozenset({(ast.Dict, "keys"), (ast.arguments, "kw_defaults")})
_PLANS: dict[type, tuple[tuple[str, int], ...]] = {}  # node class -> (field, how it holds nodes) per node field


def _plan(cls: type) -> tuple[tuple[str, int], ...]:
    """(field, how it holds nodes) for each field of ``cls`` that may hold nodes, in field order."""
    kinds, fields = _signature(cls), _node_fields(cls)
    if kinds is None:
        plan = tuple((f, _ANY) for f in fields)
    else:
        plan = tuple((f, (_LIST_WITH_NONE if (cls, f) in _HOLES else _LIST) if kinds.get(f, "").endswith("*") else _ONE)
                     for f in fields)
    _PLANS[cls] = plan
    return plan


def fields_of(node: ast.AST) -> tuple[str, ...]:
    try:
        return _FIELDS[node.__class__]
    except KeyError:
        fields = _FIELDS[node.__class__] = _node_fields(node.__class__)
        return fields


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """``list(ast.iter_child_nodes(node))``, in the same order, less expression contexts (read
    as ``walk_nodes`` reads each node)."""
    out = []
    try:
        plan = _PLANS[node.__class__]
    except KeyError:
        plan = _plan(node.__class__)
    for name, how in plan:
        value = getattr(node, name, None)
        if value is None:
            continue
        if how == _LIST:
            out.extend(value)
        elif how == _ONE:
            out.append(value)
        elif how == _LIST_WITH_NONE:
            out.extend([v for v in value if v is not None])
        elif value.__class__ is list:
            out.extend([v for v in value if isinstance(v, _AST)])
        elif isinstance(value, _AST):
            out.append(value)
    return out


def parents_of(nodes: list[ast.AST]) -> dict[int, ast.AST]:
    """``{id(child): node for node in nodes for child in child_nodes(node)}``, without a list
    built per node: each node's parent, for a rule that reads a use from its name upwards."""
    out, known = {}, _FIELDS
    for node in nodes:
        try:
            fields = known[node.__class__]
        except KeyError:
            fields = fields_of(node)
        for name in fields:
            value = getattr(node, name, None)
            if value.__class__ is list:
                for v in value:
                    if isinstance(v, _AST):
                        out[id(v)] = node
            elif isinstance(value, _AST):
                out[id(value)] = node
    return out


def walk_nodes(root: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(root))``, in the same order, less expression contexts, without its three
    generators per node."""
    if root.__class__ is _LEAF_NAME:  # a bare name (an assignment's target, most often): itself alone
        return [root]
    out = [root]
    append, extend, plans = out.append, out.extend, _PLANS
    for node in out:  # the list grows as it is read: a queue
        try:
            plan = plans[node.__class__]
        except KeyError:
            plan = _plan(node.__class__)
        for name, how in plan:  # a list of nodes is taken whole: no test of each item (a quarter of the walk)
            value = getattr(node, name, None)
            if value is None:
                continue
            if how == _LIST:
                extend(value)
            elif how == _ONE:
                append(value)
            elif how == _LIST_WITH_NONE:
                extend([v for v in value if v is not None])
            elif value.__class__ is list:
                extend([v for v in value if isinstance(v, _AST)])
            elif isinstance(value, _AST):
                append(value)
    return out


BLOCKS = (ast.stmt, ast.excepthandler, ast.match_case)  # what holds statements: no expression does


def statement_nodes(root: ast.AST) -> list[ast.AST]:
    """The statements under ``root`` (and the handlers and match cases holding some), in
    ``ast.walk`` order: every ancestor of a statement is one of them, so the walk restricted to
    them keeps its order. A statement sits only in a list field, and a list holds one kind."""
    out = [root]
    for node in out:  # a queue, as in walk_nodes
        out.extend(child_statements(node, BLOCKS))
    return out


def child_statements(node: ast.AST, kinds=ast.stmt) -> list[ast.AST]:
    """The children of ``node`` that are ``kinds`` (statements; or handlers and match cases
    too), in field order: those of ``child_nodes``, read off its list fields alone (those its
    signature types ``stmt*``, or ``excepthandler*`` and ``match_case*`` too)."""
    try:
        lists = _STATEMENT_LISTS[node.__class__]
    except KeyError:
        lists = _statement_lists(node.__class__)
    if lists is None or (kinds is not ast.stmt and kinds is not BLOCKS):  # no signature, or another kind asked
        out = []
        for name in fields_of(node):
            value = getattr(node, name, None)
            if value.__class__ is list and value and isinstance(value[0], kinds):
                out.extend(value)
        return out
    out = []
    for name, statements in lists:
        if statements or kinds is BLOCKS:
            value = getattr(node, name, None)
            if value:
                out.extend(value)
    return out


_STATEMENT_LISTS: dict[type, tuple[tuple[str, bool], ...] | None] = {}  # class -> (field, holds statements) per block list


def _statement_lists(cls: type) -> tuple[tuple[str, bool], ...] | None:
    """(field, whether it holds statements rather than handlers or match cases) for each field
    of ``cls`` typed a list of them; None where the class has no signature."""
    kinds = _signature(cls)
    lists = None if kinds is None else tuple((f, kinds[f] == "stmt*") for f in cls._fields
                                             if kinds.get(f) in ("stmt*", "excepthandler*", "match_case*"))
    _STATEMENT_LISTS[cls] = lists
    return lists
