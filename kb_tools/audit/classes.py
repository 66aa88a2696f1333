"""Classes as the audit follows them: a method reached through its class (``Config.get_best(x)``,
``cls.get_config(x)``, ``self.prepare(x)``) and an ``autograd.Function``'s ``forward`` reached
through ``SomeFunction.apply(...)``, which is how torch runs it. Read from the module's own
top-level classes, or from a class another audited module defines (``package.Tree``).
"""

from __future__ import annotations

import ast

from kb_tools.audit.names import dotted, qualname
from kb_tools.syntax import walk_nodes

FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
MAX_BASES = 16  # classes of one module looked at for an autograd.Function base (a cycle of bases ends)
MAX_CLASS_HOPS = 4  # re-exports followed to find an imported class (package __init__ files)

def _tables(info) -> tuple[dict[str, ast.ClassDef], dict[int, ast.ClassDef]]:
    """(top-level classes by name, the class of each method) of one module, read once and kept
    on its ``ModuleInfo`` (asked at most calls the walk meets: a weak table's lookup cost more)."""
    got = info.class_tables
    if got is not None:
        return got
    by_name, owner = {}, {}
    for node in info.index.tree.body:
        if isinstance(node, ast.ClassDef):
            by_name[node.name] = node
            for item in node.body:
                if isinstance(item, FUNCTION_DEFS):
                    owner[id(item)] = node
    info.class_tables = (by_name, owner)
    return by_name, owner


def top_class(info, name: str) -> ast.ClassDef | None:
    return _tables(info)[0].get(name)


def class_of(info, fn) -> ast.ClassDef | None:
    """The class ``fn`` is a method of (a top-level class of the module), else None."""
    return _tables(info)[1].get(id(fn))


def method(cls: ast.ClassDef, name: str):
    """The last def of ``name`` in the class body (a later def replaces an earlier one)."""
    found = None
    for item in cls.body:
        if isinstance(item, FUNCTION_DEFS) and item.name == name:
            found = item
    return found


_torch_members: dict[int, tuple[ast.ClassDef, dict[str, str]]] = {}  # id(class) -> (it, its torch members)
_members: dict[int, tuple[ast.ClassDef, dict[str, str]]] = {}  # id(class) -> (it, its members built from a class)


def _self_bindings(cls: ast.ClassDef):
    """(attribute, value) for each ``<first parameter>.attr = value`` in a method of ``cls``, in order."""
    for item in cls.body:
        if not isinstance(item, FUNCTION_DEFS) or not (item.args.posonlyargs + item.args.args):
            continue
        me = (item.args.posonlyargs + item.args.args)[0].arg
        for node in walk_nodes(item):
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == me:
                        yield t.attr, node.value


def _per_class(table: dict, cls: ast.ClassDef, build) -> dict[str, str]:
    """``build(cls)``, once per class object: classes come and go with their modules, so the
    table is kept small."""
    got = table.get(id(cls))
    if got is not None and got[0] is cls:
        return got[1]
    found = build(cls)
    if len(table) > 1024:
        table.clear()
    table[id(cls)] = (cls, found)
    return found


def torch_members(cls: ast.ClassDef, aliases: dict[str, str]) -> dict[str, str]:
    """The attributes a method of ``cls`` binds to a torch object it builds (``self.bn =
    nn.BatchNorm1d(c)`` in ``__init__``) or to a torch function (``self.act = F.gelu``), with the
    torch name: calling one (``self.bn(x)``) runs that torch code on the host."""
    def build(cls):
        found = {}
        for attr, value in _self_bindings(cls):
            if isinstance(value, (ast.Call, ast.Attribute, ast.Name)):
                q = qualname(value.func if isinstance(value, ast.Call) else value, aliases) or ""  # nn.GELU() or F.gelu
                if q.startswith(("torch.", "torch_npu.")):
                    found[attr] = q
        return found
    return _per_class(_torch_members, cls, build)


def built_members(cls: ast.ClassDef) -> dict[str, str]:
    """The attributes a method of ``cls`` binds to an object built by calling a bare name
    (``self.norm = RMSNorm(c)``), with that name: calling ``self.norm(x)`` runs its class's
    ``__call__`` or ``forward`` when the name is a class the audit can read."""
    return _per_class(_members, cls, lambda cls: {
        attr: value.func.id for attr, value in _self_bindings(cls)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name)})


def call_method(cls: ast.ClassDef, info):
    """What calling an instance of ``cls`` runs: its ``__call__``, or ``forward`` for a
    ``torch.nn.Module`` (through classes of the same module too); None otherwise."""
    if (found := method(cls, "__call__")) is not None:
        return found
    todo, seen, classes = [cls], set(), _tables(info)[0]
    while todo and len(seen) < MAX_BASES:
        here = todo.pop()
        seen.add(id(here))
        for base in here.bases:
            q = qualname(base, info.aliases) or ".".join(dotted(base) or [])
            if q in ("torch.nn.Module", "nn.Module"):
                return method(cls, "forward")
            parent = classes.get(q)
            if parent is not None and id(parent) not in seen:
                todo.append(parent)
    return None


def is_autograd_function(cls: ast.ClassDef, aliases: dict[str, str], classes=None) -> bool:
    """A class deriving from torch's ``autograd.Function`` (``torch.autograd.Function``,
    ``from torch.autograd import Function``, or an unimported ``autograd.Function``), directly or
    through classes of the same module (``classes``: its top-level classes by name)."""
    todo, seen = [cls], set()
    while todo and len(seen) < MAX_BASES:
        here = todo.pop()
        seen.add(id(here))
        for base in here.bases:
            q = qualname(base, aliases) or ".".join(dotted(base) or [])
            if q in ("torch.autograd.Function", "torch.autograd.function.Function", "autograd.Function") \
                    or (q == "Function" and "Function" not in aliases and "Function" not in (classes or {})):
                return True
            parent = (classes or {}).get(q)
            if parent is not None and id(parent) not in seen:
                todo.append(parent)
    return False


def entry_method(cls: ast.ClassDef, attr: str, info):
    """What ``Cls.attr(...)`` runs (``info``: the module defining ``cls``): ``forward`` for
    ``apply`` on an autograd.Function, else the method of that name; None when the class
    defines none."""
    if attr == "apply" and is_autograd_function(cls, info.aliases, _tables(info)[0]):
        return method(cls, "forward")
    return method(cls, attr)


def imported_class(tree, importer, name: str, bound=None, hops: int = 0):
    """(the module of the tree that defines it, the class) for a class ``importer`` imports by
    ``name`` (``from pkg.ops import Scale``), following re-exports a few steps; else None."""
    bound = bound or importer.info.imports.get(name)
    if tree is None or bound is None or hops > MAX_CLASS_HOPS:
        return None
    level, module, attr = bound
    if attr is None:
        return None
    target = tree.absolute(importer, level, module)
    path = tree.by_name.get(target) if target else None
    owner = tree.module(path) if path is not None else None
    if owner is None:
        return None
    cls = top_class(owner.info, attr)
    if cls is not None:
        return owner, cls
    if attr in owner.info.imports and owner is not importer:
        return imported_class(tree, owner, attr, hops=hops + 1)
    return None
