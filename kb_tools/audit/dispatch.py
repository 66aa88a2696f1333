"""Dispatch tables: a dict, list or tuple literal of functions bound once at module or class
level (``fn = {"sdd": sdd_matmul, "dsd": dsd_matmul}``, ``KERNELS = {fp16: {1: k16}}``) and
called through a subscript (``_matmul.fn[mode](a, b)``, ``self.fn[mode](a)``,
``KERNELS[dtype][grid](x)``, ``impl = table[key]; impl(x)``).

Such a call runs one of the table's values. Subscripted once more than the table is deep, the
value is launched with a grid (a table of kernels). Subscripted exactly as deep, the value is
called: a launch when every value is a kernel, otherwise a call of each value, as one branch each.
Only literals are read (``T[k] = f`` at module level adds ``f``): a value that is not a name
(a lambda, a call) makes the table unknown, and the audit says so at the call instead of guessing.
A torch module container a method binds (``self.layers = nn.ModuleList(...)``) is such an unknown
table too: ``self.layers[i](x)`` runs a module, never a kernel launch.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from weakref import ref

from kb_tools.audit import classes
from kb_tools.audit.names import dotted

MAX_NESTING = 4  # a table of tables of ... deeper than this is unknown
CONTAINERS = ("ModuleList", "ModuleDict", "Sequential", "ParameterList", "ParameterDict")  # torch.nn's
UNKNOWN = "a dispatch table with values not followed"


@dataclass(frozen=True)
class Table:
    name: str  # as the module names it: ``KERNELS``, or ``_matmul.fn`` for a class attribute
    members: tuple  # the values, each a Name or Attribute node of the module, once per spelling
    depth: int  # subscripts from the table to a value
    unknown: bool  # a value the audit cannot follow (not a name, or at another depth)
    why: str = UNKNOWN  # what the audit says at a call it cannot follow to the end

    @property
    def cue(self) -> str:
        """What a function's text holds where it subscripts the table (``KERNELS[``, ``.fn[``)."""
        return ("." + self.name.rsplit(".", 1)[1] if "." in self.name else self.name) + "["

    def member_names(self) -> set[str]:
        return {m.id for m in self.members if isinstance(m, ast.Name)}


@dataclass(frozen=True)
class Site:
    table: Table
    grid: bool  # ``T[k][grid](...)``: the chosen value is launched

    def launch(self, launchers: set[str]) -> str | None:
        """The kernel name a launch through the site stands for, or None when the call runs
        the values as functions: a grid launches whatever is chosen; a plain call launches only
        when every value is a kernel."""
        table = self.table
        kernels = not table.unknown and all(isinstance(m, ast.Name) and m.id in launchers for m in table.members)
        return table.name if self.grid or kernels else None


def _leaves(value, depth: int, out: list, odd: list) -> None:
    """Each value of a (nested) literal, with its depth; what is not a name goes to ``odd``."""
    if isinstance(value, (ast.Dict, ast.List, ast.Tuple)):
        if depth >= MAX_NESTING:
            odd.append(value)
            return
        items = value.values if isinstance(value, ast.Dict) else value.elts
        if isinstance(value, ast.Dict) and None in value.keys or any(isinstance(v, ast.Starred) for v in items):
            odd.append(value)  # ``{**other}``, ``[*other]``: values from elsewhere
        for item in items:
            if not isinstance(item, ast.Starred):
                _leaves(item, depth + 1, out, odd)
    elif dotted(value) is not None:
        out.append((value, depth))
    elif not (isinstance(value, ast.Constant) and value.value is None):
        odd.append(value)


def _table(name: str, values: list) -> Table | None:
    """The table a literal (and the values registered into it later) makes, or None when no
    value is a name (a table of numbers or strings is no table of functions)."""
    leaves, odd = [], []
    for value, depth in values:
        _leaves(value, depth, leaves, odd)
    if not leaves:
        return None
    depth = leaves[0][1]
    seen, members = set(), []
    for leaf, _ in leaves:
        text = ".".join(dotted(leaf))
        if text not in seen:
            seen.add(text)
            members.append(leaf)
    return Table(name, tuple(members), depth, bool(odd) or any(d != depth for _, d in leaves))


def _bound(body, prefix: str) -> dict[str, Table]:
    """The tables bound in one body (a module's or a class's): names bound once, to a literal;
    ``T[key] = f`` later in the same body registers ``f``."""
    literal, registered, times = {}, {}, {}
    for node in body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    times[t.id] = times.get(t.id, 0) + 1
                    if isinstance(node.value, (ast.Dict, ast.List, ast.Tuple)):
                        literal[t.id] = node.value
                elif isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    registered.setdefault(t.value.id, []).append(node.value)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            times[node.name] = times.get(node.name, 0) + 1
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                local = a.asname or a.name.split(".")[0]
                times[local] = times.get(local, 0) + 1
    out = {}
    for name, value in literal.items():
        if times.get(name) == 1:
            table = _table(prefix + name, [(value, 0)] + [(v, 1) for v in registered.get(name, ())])
            if table is not None:
                out[prefix + name] = table
    return out


class Tables:
    """The dispatch tables of one module, and the call sites that go through them."""

    def __init__(self, index, aliases: dict[str, str] | None = None):
        self._index = ref(index)  # not the index itself, which keeps these tables (no cycle to collect)
        self._aliases = aliases if aliases is not None else {}  # the module's, filled as it is read
        tree = index.tree
        self._classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
        self.by_name: dict[str, Table] = _bound(tree.body, "")
        self.owner: dict[int, str] = {}  # id(method) -> the name of its (top-level) class
        self.functions: dict[str, ast.AST] = {}  # top-level defs by name (the last one)
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                self.by_name.update(_bound(node.body, node.name + "."))
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.owner[id(item)] = node.name
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
        self.cues = tuple(sorted({t.cue for t in self.by_name.values()}))
        self._locals: dict[int, tuple[set, dict]] = {}  # id(function) -> (its local names, its picks)
        self.evidence: dict[int, set] = {}  # id(function) -> its tensor evidence, for the sites calling it

    @staticmethod
    def of(index, aliases: dict[str, str] | None = None) -> Tables:
        """The tables of the module ``index`` holds (``aliases``: its imports, given by the first caller)."""
        got = index.tables
        if got is None:
            got = index.tables = Tables(index, aliases)
        return got

    def _scope(self, fn) -> tuple[set, dict]:
        """(the names ``fn`` binds itself, those it binds only to a subscript of a table:
        ``impl = table[key]`` -> (table, subscripts))."""
        got = self._locals.get(id(fn))
        if got is not None:
            return got
        a = fn.args
        names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}
        picks, other = {}, set()
        for node in self._index().of(ast.Assign, fn):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names.add(t.id)
                    hit = self._subscripts(node.value, fn, set()) if isinstance(node.value, ast.Subscript) else None
                    if hit is None:
                        other.add(t.id)
                    else:
                        picks[t.id] = hit
        got = self._locals[id(fn)] = (names, {k: v for k, v in picks.items() if k not in other})
        return got

    def _subscripts(self, expr, fn, names: set | None):
        """(table, how many subscripts) for ``T[a][b]``-like ``expr`` rooted in a table, else None."""
        n = 0
        while isinstance(expr, ast.Subscript):
            expr, n = expr.value, n + 1
        if n == 0:
            return None
        if isinstance(expr, ast.Name):
            if not self.by_name:  # no table bound to a name: nothing a name can pick from
                return None
            if names is None and fn is not None:
                names, picks = self._scope(fn)
                if expr.id in picks:  # impl = table[key]; impl[grid](...)
                    table, before = picks[expr.id]
                    return table, before + n
            table = self.by_name.get(expr.id) if expr.id not in (names or ()) else None
        elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            base = expr.value.id
            first = (fn.args.posonlyargs + fn.args.args)[:1] if fn is not None and id(fn) in self.owner \
                and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list) else []
            mine = bool(first) and first[0].arg == base  # self.fn[...], cls.fn[...]; not a static method's ctx
            if mine:
                base = self.owner[id(fn)]
            table = self.by_name.get(f"{base}.{expr.attr}")
            if table is None and mine and n == 1:
                table = self._container(base, expr.attr)
        else:
            table = None
        return (table, n) if table is not None else None

    def _container(self, owner: str, attr: str) -> Table | None:
        """``self.attr`` bound to a torch module container in a method of ``owner``: a table whose
        values (modules) the audit does not follow."""
        built = classes.torch_members(self._classes[owner], self._aliases).get(attr, "")
        if built.rsplit(".", 1)[-1] not in CONTAINERS:
            return None
        return Table(f"{owner}.{attr}", (), 1, True, f"an element of a {built}, a module, not followed")

    def site(self, call: ast.Call, fn=None) -> Site | None:
        """The table a call goes through (``fn``: the function holding the call), or None."""
        if not self.by_name and not self._classes:
            return None
        func = call.func
        if isinstance(func, ast.Subscript):
            hit = self._subscripts(func, fn, None)
        elif isinstance(func, ast.Name) and fn is not None and self.by_name:
            hit = self._scope(fn)[1].get(func.id)  # impl = table[key]; impl(x)
        else:
            hit = None
        if hit is None or hit[1] < hit[0].depth or hit[1] > hit[0].depth + 1:
            return None
        return Site(hit[0], grid=hit[1] == hit[0].depth + 1)
