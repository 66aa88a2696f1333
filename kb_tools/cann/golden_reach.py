"""What TTK actually runs of a golden.py: its entries, their case mode, and the live code they reach.

TTK calls a TestSpec class's ``golden`` and ``third_party`` (named in ``__spec__``) and a legacy
``__golden__`` function only for a key no TestSpec class registers (hicann/ops-test-kit
``ttk/test_spec/loader.py``). A case is three-party when some criterion is ``cross_check``
(seed 000 §2), and then Promote hands the golden float32/float64 tensors, so a branch taken
only for float16/bfloat16 tensors is dead there and its casts are not findings. A two-party
golden is handed tensors in the dtypes the OpDef registers, so there a branch that needs a dtype
no tensor registers is dead too; a parameter named as an OpDef input carries that input's dtypes.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator

from kb_tools.cann.golden_casts import LOW, WIDTH, float_dtype
from kb_tools.syntax import child_nodes, walk_nodes

PROMOTED = frozenset({"float32", "float64"})


@dataclass(frozen=True)
class Context:
    """How the golden is called: promoted (three-party), whether inputs are numpy arrays, and in
    a two-party case the dtypes the OpDef lets it be handed (read only when a test needs them)."""

    promoted: bool
    numpy_inputs: bool
    # two-party: reads (the floats the OpDef registers or None, {input name: its dtypes}) on demand
    handed: Callable[[], tuple[frozenset[str] | None, dict[str, frozenset[str]]]] | None = None
    func: ast.FunctionDef | None = None  # the function a test sits in

    def floats(self) -> frozenset[str] | None:
        """The floats any handed tensor can be (two-party), or None where that is not known."""
        return self.handed()[0] if self.handed and not self.promoted else None

    def input_dtypes(self, mod: "GoldenModule", name: str) -> frozenset[str] | None:
        """The dtypes parameter ``name`` carries: its OpDef input's, unless the function reassigns it."""
        if self.func is None or self.floats() is None or name in mod.stored(self.func):
            return None
        return self.handed()[1].get(name)


@dataclass
class Entry:
    """One function TTK calls: a spec's golden or third-party leg, or a legacy golden."""

    role: str  # "golden" or "third_party"
    key: str
    line: int
    mode: str  # "three_party", "two_party" or "unknown"
    criteria: dict[str, tuple[str, int]] = field(default_factory=dict)
    functions: list[ast.FunctionDef] = field(default_factory=list)
    framework: str = ""
    numpy_inputs: bool = True
    tolerance_line: int = 0


class GoldenModule:
    """A parsed golden.py: module constants, functions and classes by name."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.consts: dict[str, ast.AST] = {}
        self.funcs: dict[str, ast.FunctionDef] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self._returned: dict[int, set[str]] = {}
        self._stored: dict[int, frozenset[str]] = {}
        self._scopes: dict[int, dict[str, ast.AST]] = {}
        self.owner: dict[int, ast.ClassDef] = {}  # a method's class, by the method's id
        for node in tree.body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                self.consts[node.targets[0].id] = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value:
                self.consts[node.target.id] = node.value
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.funcs[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
                self._own(node)

    def _own(self, cls: ast.ClassDef) -> None:
        """Record the class of each method, and of the methods of classes nested in it (TTK
        specs often define their ``ThirdPartyImpl`` inside the spec class)."""
        for item in cls.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.owner[id(item)] = cls
            elif isinstance(item, ast.ClassDef):
                self._own(item)

    def scope(self, func: ast.FunctionDef) -> dict[str, ast.AST]:
        """Module constants, shadowed by the names ``func`` assigns exactly once
        (``cast_type = np.float32 if ... else np.float64``), computed once per function."""
        found = self._scopes.get(id(func))
        if found is None:
            counts: dict[str, list[ast.AST]] = {}
            for node in walk_nodes(func):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            counts.setdefault(target.id, []).append(node.value)
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.For, ast.With)):
                    for name in (n for n in walk_nodes(getattr(node, "target", node)) if isinstance(n, ast.Name)):
                        counts.setdefault(name.id, []).extend([None, None])
            args = {a.arg for a in walk_nodes(func.args) if isinstance(a, ast.arg)}
            local = {k: v[0] for k, v in counts.items() if len(v) == 1 and k not in args}
            found = self._scopes[id(func)] = {**{k: v for k, v in self.consts.items() if k not in counts and k not in args},
                                              **local}
        return found

    def stored(self, func: ast.FunctionDef) -> frozenset[str]:
        """Every name ``func`` assigns anywhere (tuple targets, loops, comprehensions included)."""
        names = self._stored.get(id(func))
        if names is None:
            names = self._stored[id(func)] = frozenset(
                n.id for n in walk_nodes(func) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        return names

    def returned(self, func: ast.FunctionDef) -> set[str]:
        """The names ``func`` returns, computed once per function."""
        names = self._returned.get(id(func))
        if names is None:
            names = self._returned[id(func)] = _returned_names(func)
        return names

    def callee(self, call: ast.Call, caller: ast.FunctionDef) -> ast.FunctionDef | None:
        """The module function or method a call runs: ``f(...)``, ``self.f(...)``/``cls.f(...)``
        in a method, ``Class.f(...)``."""
        func = call.func
        if isinstance(func, ast.Name):
            return self.funcs.get(func.id)
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        base = func.value.id
        cls = self.owner.get(id(caller)) if base in ("self", "cls") else self.classes.get(base)
        if cls is None:
            return None
        return next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == func.attr), None)

    def resolve(self, node: ast.AST | None, depth: int = 0) -> ast.AST | None:
        """Follow a module-level name to the value it was assigned."""
        while isinstance(node, ast.Name) and depth < 8 and node.id in self.consts:
            node, depth = self.consts[node.id], depth + 1
        return node


def _str_items(node: ast.AST | None) -> list[tuple[str, ast.AST, int]]:
    if not isinstance(node, ast.Dict):
        return []
    return [(k.value, v, k.lineno) for k, v in zip(node.keys, node.values)
            if isinstance(k, ast.Constant) and isinstance(k.value, str)]


def _criteria(mod: GoldenModule, node: ast.AST | None) -> tuple[str, dict[str, tuple[str, int]]]:
    """(mode, {dtype: (standard, line)}) of a tolerance declaration; TTK's default is two-party."""
    if node is None:
        return "two_party", {}
    table = mod.resolve(node)
    if not isinstance(table, ast.Dict):
        return "unknown", {}
    criteria = {}
    for dtype, value, line in _str_items(table):
        for name, standard, _ in _str_items(mod.resolve(value)):
            if name == "standard" and isinstance(standard, ast.Constant):
                criteria[dtype] = (str(standard.value), line)
    mode = "three_party" if any(s == "cross_check" for s, _ in criteria.values()) else "two_party"
    return mode, criteria


def _named(mod: GoldenModule, node: ast.AST) -> str:
    node = mod.resolve(node) if isinstance(node, ast.Name) and node.id in mod.consts else node
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return node.id if isinstance(node, ast.Name) else ""


def _callables(mod: GoldenModule, name: str, inside: ast.ClassDef | None = None) -> list[ast.FunctionDef]:
    """The functions a named golden or leg runs; a name is looked up first among the classes
    nested in ``inside`` (the spec class that names it), then in the module."""
    nested = {n.name: n for n in inside.body if isinstance(n, ast.ClassDef)} if inside is not None else {}
    if name in mod.funcs and name not in nested:
        return [mod.funcs[name]]
    cls = nested.get(name) or mod.classes.get(name)
    if cls is None:
        return []
    return [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name in ("__call__", "__init__", "forward")]


def convention_class(key: str) -> str:
    """TTK's fallback class name for an operator key no ``__spec__`` names: ``softmax_v2`` ->
    ``SoftmaxV2TestSpec`` (hicann/ops-test-kit ``ttk/test_spec/loader.py``)."""
    return "".join(part.capitalize() for part in key.split("_")) + "TestSpec"


def entries(mod: GoldenModule, op: str = "") -> list[Entry]:
    """Every golden and third-party entry TTK would reach, in file order; ``op`` (the folder's
    name) and each legacy key also find a TestSpec class by TTK's naming convention."""
    found: list[Entry] = []
    spec_keys = set()
    registered = list(_str_items(mod.consts.get("__spec__")))
    legacy_keys = [k for _, table, _ in _str_items(mod.consts.get("__golden__")) for k, _, _ in _str_items(mod.resolve(table))]
    named = {k for k, _, _ in registered}
    for key in dict.fromkeys([op, *legacy_keys]):
        cls = mod.classes.get(convention_class(key)) if key and key not in named else None
        if cls is not None:
            registered.append((key, ast.Constant(cls.name), cls.lineno))
    for key, value, line in registered:
        spec_keys.add(key)
        cls = mod.classes.get(_named(mod, value))
        if cls is None:
            continue
        attrs = {n.targets[0].id: n.value for n in cls.body
                 if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)}
        mode, criteria = _criteria(mod, attrs.get("tolerance"))
        numpy_inputs = not key.lower().startswith("aclnn")
        golden = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "golden"]
        tolerance = attrs.get("tolerance")
        tol_line = tolerance.lineno if tolerance is not None else 0
        found.append(Entry("golden", key, line, mode, criteria, golden, numpy_inputs=numpy_inputs,
                           tolerance_line=tol_line))
        for framework, leg, leg_line in _str_items(mod.resolve(attrs.get("third_party"))):
            found.append(Entry("third_party", key, leg_line, mode, criteria,
                               _callables(mod, _named(mod, leg), cls), framework, numpy_inputs=False))
    for path_kind, table, _ in _str_items(mod.consts.get("__golden__")):
        for key, value, line in _str_items(mod.resolve(table)):
            if key in spec_keys:
                continue
            functions = _callables(mod, _named(mod, value))
            found.append(Entry("golden", key, line, "two_party", {}, functions,
                               numpy_inputs=path_kind == "kernel"))
    return found


def _three(values: list[bool | None], combine) -> bool | None:
    if any(v is None for v in values):
        known = [v for v in values if v is not None]
        if combine is any and any(known):
            return True
        if combine is all and known and not all(known):
            return False
        return None
    return combine(values)


def _dtype_set(mod: GoldenModule, node: ast.AST) -> set[str | None]:
    node = mod.resolve(node)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return {float_dtype(e, mod.consts) for e in node.elts}
    return {float_dtype(node, mod.consts)} if node is not None else {None}


def evaluate(mod: GoldenModule, test: ast.AST, ctx: Context, scope: dict[str, ast.AST] | None = None) -> bool | None:
    """True/False when the context decides ``test`` (Promote, numpy inputs, registered dtypes);
    None otherwise. ``scope`` is the enclosing function's (names followed to their values)."""
    if isinstance(test, ast.BoolOp):
        values = [evaluate(mod, v, ctx, scope) for v in test.values]
        return _three(values, any if isinstance(test.op, ast.Or) else all)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        value = evaluate(mod, test.operand, ctx, scope)
        return None if value is None else not value
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and ctx.numpy_inputs and len(test.args) == 2:
        kind = test.args[1]
        if test.func.id == "isinstance" and isinstance(kind, ast.Attribute) and kind.attr == "Tensor":
            return False
        if test.func.id == "hasattr" and isinstance(kind, ast.Constant) and kind.value == "astype":
            return True
        return None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    if not ctx.promoted:
        scope = scope or mod.consts
        # the OpDef is read only for a test that names a float dtype
        named = any(float_dtype(side, scope) or _dtype_set(mod, side) - {None} for side in (test.left, test.comparators[0]))
        return _registered(mod, test, ctx, scope) if named and ctx.floats() is not None else None
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(left, ast.Constant) and isinstance(left.value, str):
            names = {float_dtype(left, mod.consts)}
        else:
            names = _dtype_set(mod, right)
        if not isinstance(left, ast.Constant) and PROMOTED <= names:
            inside = True  # every dtype Promote can hand a float tensor is listed
        elif None not in names and names <= LOW:
            inside = False  # only dtypes Promote never hands
        else:
            return None
        return inside if isinstance(op, ast.In) else not inside
    if isinstance(op, (ast.Eq, ast.NotEq)):
        for side in (left, right):
            name = float_dtype(side, mod.consts)
            if name in LOW:
                return isinstance(op, ast.NotEq)
    return None


def _values(mod: GoldenModule, node: ast.AST | None, ctx: Context, scope: dict[str, ast.AST],
            depth: int = 0) -> frozenset[str] | None:
    """The dtype names ``node`` can hold in a two-party case, or None when they are not known:
    a named float dtype, ``p.dtype`` (or ``str`` of it) of a parameter named as an OpDef input,
    and local names and conditionals built of those."""
    if node is None or depth > 8:
        return None
    if isinstance(node, ast.Name) and node.id in scope:
        return _values(mod, scope[node.id], ctx, scope, depth + 1)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str" and len(node.args) == 1:
        return _values(mod, node.args[0], ctx, scope, depth + 1)
    if isinstance(node, ast.Attribute) and node.attr == "dtype" and isinstance(node.value, ast.Name):
        return ctx.input_dtypes(mod, node.value.id)
    if isinstance(node, ast.IfExp):
        taken = evaluate(mod, node.test, ctx, scope)
        sides = [_narrowed(mod, node.test, side, holds, ctx, scope, depth) for side, holds, live in
                 ((node.body, True, taken is not False), (node.orelse, False, taken is not True)) if live]
        return None if None in sides else frozenset().union(*sides)
    name = float_dtype(node, scope)
    return frozenset({name}) if name else None


def _narrowed(mod: GoldenModule, test: ast.AST, side: ast.AST, holds: bool, ctx: Context, scope: dict[str, ast.AST],
              depth: int) -> frozenset[str] | None:
    """``side``'s dtypes where ``test`` is ``holds``: in ``f32 if d == f16 else d`` the ``d`` of the
    else branch is never float16 (the name tested against one dtype, then taken as it is)."""
    found = _values(mod, side, ctx, scope, depth + 1)
    if not (found and isinstance(side, ast.Name) and isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return found
    left, right = test.left, test.comparators[0]
    other = right if isinstance(left, ast.Name) and left.id == side.id else \
        left if isinstance(right, ast.Name) and right.id == side.id else None
    named = _values(mod, other, ctx, scope, depth + 1) if other is not None else None
    if named is None or len(named) != 1:
        return found
    equal = holds == isinstance(test.ops[0], ast.Eq)
    return found & named if equal else found - named


def _reads_dtype(node: ast.AST) -> bool:
    """Whether an expression reads a dtype (``x.dtype``, ``output_dtypes[0]``, ``dtype``): only
    such a value is one of the dtypes the golden is handed."""
    return any((isinstance(n, ast.Attribute) and n.attr == "dtype") or (isinstance(n, ast.Name) and "dtype" in n.id)
               for n in walk_nodes(node))


def _registered(mod: GoldenModule, test: ast.Compare, ctx: Context, scope: dict[str, ast.AST]) -> bool | None:
    """Decide ``==``/``!=``/``in`` on dtypes in a two-party case: two known sets decide it
    when they are equal singletons or disjoint, and a float dtype no tensor registers equals
    nothing the golden is handed (``"bfloat16" in str(x.dtype)`` tests a substring)."""
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(op, (ast.In, ast.NotIn)):
        if isinstance(left, ast.Constant) and isinstance(left.value, str):
            held = _values(mod, right, ctx, scope)
            pool = held if held is not None else ctx.floats()
            if held is None and not (float_dtype(left, scope) and _reads_dtype(right)):
                return None
            hits = {left.value in name for name in pool}
            if True in hits:  # only where the tested value's own dtypes are known can it be inside
                inside = True if held is not None and hits == {True} else None
            else:
                inside = False
        else:
            held, listed = _values(mod, left, ctx, scope), _dtype_set(mod, right)
            if None in listed:
                return None
            if held is not None and held <= listed:
                inside = True
            elif (held is not None or _reads_dtype(left)) and not (listed & (held if held is not None else ctx.floats())):
                inside = False
            else:
                return None
        return None if inside is None else inside == isinstance(op, ast.In)
    if not isinstance(op, (ast.Eq, ast.NotEq)):
        return None
    sides = [_values(mod, side, ctx, scope) for side in (left, right)]
    if None in sides:
        known = next((s for s in sides if s is not None and len(s) == 1), None)
        unknown = left if sides[0] is None else right
        if known is None or known & ctx.floats() or not known <= set(WIDTH) or not _reads_dtype(unknown):
            return None
        equal = False  # a float dtype no tensor registers
    elif len(sides[0]) == 1 and sides[0] == sides[1]:
        equal = True
    elif not sides[0] & sides[1]:
        equal = False
    else:
        return None
    return equal == isinstance(op, ast.Eq)


def _terminates(block: list[ast.stmt]) -> bool:
    return bool(block) and isinstance(block[-1], (ast.Return, ast.Raise))


class Reach:
    """Walk the live code of an entry's functions and the module functions they call."""

    def __init__(self, mod: GoldenModule, ctx: Context):
        self.mod, self.ctx = mod, ctx
        self.seen: set[tuple[int, bool]] = set()
        self._scope: dict[str, ast.AST] = mod.consts
        self._ctx = ctx
        self._local: dict[int, tuple[Context, dict[str, ast.AST]]] = {}

    def local(self, func: ast.FunctionDef) -> tuple[Context, dict[str, ast.AST]]:
        """The context inside ``func`` (a parameter it reassigns no longer carries its input's
        dtypes) and ``mod.scope(func)`` with each conditional value whose test that context
        decides replaced by the branch it takes (``calc = np.float32 if dtype == np.float16
        else dtype`` is ``dtype`` where no float16 is registered)."""
        found = self._local.get(id(func))
        if found is None:
            base = self.mod.scope(func)
            ctx, scope = self.ctx, base
            if ctx.handed is not None and not ctx.promoted:
                ctx, scope = replace(ctx, func=func), dict(base)
                for name, value in base.items():
                    while isinstance(value, ast.IfExp) and (taken := evaluate(self.mod, value.test, ctx, base)) is not None:
                        value = value.body if taken else value.orelse
                    scope[name] = value
            found = self._local[id(func)] = (ctx, scope)
        return found

    def calls(self, functions: list[ast.FunctionDef]) -> Iterator[tuple[ast.Call, ast.FunctionDef, bool]]:
        """(call, enclosing function, whether it is the entry's exit) for each live call.

        A call is at the exit when its value is what the entry returns: the returned
        expression (or an item of a returned list, or a link of its method chain), the value
        of a name that is returned, or the same inside a helper whose call is at the exit.
        """
        queue = [(f, True) for f in functions]
        while queue:
            func, at_exit = queue.pop(0)
            if (id(func), at_exit) in self.seen or (id(func), True) in self.seen:
                continue
            self.seen.add((id(func), at_exit))
            returned = self.mod.returned(func)
            self._ctx, self._scope = self.local(func)
            for call, in_return in self._block(func.body, returned, False):
                yield call, func, in_return and at_exit
                callee = self.mod.callee(call, func)
                if callee is not None:
                    queue.append((callee, in_return and at_exit))

    def _block(self, stmts, returned, in_return):
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            if isinstance(stmt, ast.If):
                value = evaluate(self.mod, stmt.test, self._ctx, self._scope)
                if value is None:
                    yield from self._expr(stmt.test, False)
                    yield from self._block(stmt.body, returned, in_return)
                    yield from self._block(stmt.orelse, returned, in_return)
                    continue
                branch = stmt.body if value else stmt.orelse
                yield from self._block(branch, returned, in_return)
                if _terminates(branch):
                    return
                continue
            exits = isinstance(stmt, ast.Return) or (
                isinstance(stmt, (ast.Assign, ast.AnnAssign))
                and any(isinstance(t, ast.Name) and t.id in returned for t in _targets(stmt)))
            for name, value in ast.iter_fields(stmt):
                if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                    yield from self._block(value, returned, in_return)
                elif isinstance(value, list):
                    for item in value:
                        if isinstance(item, ast.AST):
                            yield from self._expr(item, exits)
                elif isinstance(value, ast.AST):
                    yield from self._expr(value, exits)
            if isinstance(stmt, (ast.Return, ast.Raise)):
                return

    def _expr(self, node, exits):
        if isinstance(node, ast.IfExp):
            value = evaluate(self.mod, node.test, self._ctx, self._scope)
            if value is None:
                yield from self._expr(node.test, False)
            if value in (None, True):
                yield from self._expr(node.body, exits)
            if value in (None, False):
                yield from self._expr(node.orelse, exits)
            return
        if isinstance(node, (ast.Lambda, ast.FunctionDef)):
            return
        chain = ()
        if isinstance(node, ast.Call):
            yield node, exits
            if isinstance(node.func, ast.Attribute):
                chain = (node.func, node.func.value)
        elif isinstance(node, (ast.List, ast.Tuple, ast.Attribute, ast.Subscript)):
            chain = tuple(node.elts) if isinstance(node, (ast.List, ast.Tuple)) else (node.value,)
        for child in child_nodes(node):
            if isinstance(child, ast.stmt):
                continue
            yield from self._expr(child, exits and any(child is c for c in chain))


def _targets(stmt) -> list[ast.AST]:
    if isinstance(stmt, ast.Assign):
        return [n for t in stmt.targets for n in walk_nodes(t)]
    return list(walk_nodes(stmt.target))


def _returned_names(func: ast.FunctionDef) -> set[str]:
    """Names whose value ``func`` returns: the returned name, an item of a returned list or
    tuple, the receiver of a returned method chain (``out.numpy()``). A name handed as an
    argument to a computation (``torch.cumsum(t)``) is an input of the result, not the result,
    so a cast that made it is no cast at exit."""
    names: set[str] = set()
    for node in walk_nodes(func):
        if isinstance(node, ast.Return) and node.value is not None:
            todo = [node.value]
            while todo:
                value = todo.pop()
                if isinstance(value, ast.Name):
                    names.add(value.id)
                elif isinstance(value, (ast.List, ast.Tuple)):
                    todo += value.elts
                elif isinstance(value, ast.Starred):
                    todo.append(value.value)
                elif isinstance(value, ast.IfExp):
                    todo += [value.body, value.orelse]
                elif isinstance(value, (ast.Subscript, ast.Attribute)):
                    todo.append(value.value)
                elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
                    todo.append(value.func.value)
                    if value.func.attr in _WRAPS and value.args:
                        todo.append(value.args[0])
                elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _WRAPS and value.args:
                    todo.append(value.args[0])
    return names


# calls that hand back their first argument's values in another container
_WRAPS = frozenset({"from_numpy", "as_tensor", "tensor", "array", "asarray", "ascontiguousarray", "list", "tuple"})
