"""The audit of one wrapper: a walk over its statements with a light data-flow notion of
which names hold tensors and which hold Python values.

Kinds: ``T`` a tensor (wrapper parameters used as tensors, results of torch calls, tensor
methods and tensor subscripts), ``P`` a Python value (metadata reads, ``len()``, constants,
integer arithmetic on them), ``S`` a string, ``U`` unknown (never flagged on its own, so a
parameter of unknown type does not raise false alarms). ``x.shape[0]`` is therefore
metadata while ``x[0]`` is slicing a tensor, and ``if x.sum() > 0`` is a tensor in a
condition. Helpers of the same file that the wrapper calls are walked with the kinds of
their arguments; their findings sit at their own lines and name the wrapper.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kb_tools.audit import tables as tb
from kb_tools.audit.names import bind_import, dotted, qualname

T, P, S, U = "T", "P", "S", "U"


def join(*kinds: str) -> str:
    if T in kinds:
        return T
    return P if kinds and all(k in (P, S) for k in kinds) else U


@dataclass(frozen=True)
class RawFinding:
    line: int
    col: int  # 0-based UTF-8 byte offset, as ast gives it
    code: str
    message: str
    wrapper: str | None


@dataclass(frozen=True)
class Launch:
    line: int
    col: int
    kernel: str
    in_loop: bool
    helper: str | None


def _method_pos(func: ast.Attribute) -> tuple[int, int]:
    """Where ``.attr`` itself starts, so that a chain's findings point at each method."""
    return func.end_lineno, max(func.end_col_offset - len(func.attr), 0)


def param_kinds(fn: ast.FunctionDef | ast.AsyncFunctionDef, given: dict[str, str] | None = None) -> dict[str, str]:
    """Kinds of a function's parameters: from the call's arguments when given, else from
    annotations and defaults; a parameter the body reads metadata from is a tensor."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults):]], a.defaults))
    defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    env = {}
    for p in positional + a.kwonlyargs:
        env[p.arg] = _declared_kind(p.annotation, defaults.get(p.arg))
    for p in (a.vararg, a.kwarg):
        if p is not None:
            env[p.arg] = U
    used_as_tensor = _names_used_as_tensors(fn)
    for name, kind in env.items():
        if kind == U and name in used_as_tensor:
            env[name] = T
    if given:
        env.update({k: v for k, v in given.items() if k in env and v != U})
    return env


def _declared_kind(annotation, default) -> str:
    if annotation is not None:
        parts = dotted(annotation) or []
        if parts and parts[-1] == "Tensor":
            return T
        if parts and parts[-1] in ("int", "float", "bool", "tuple", "list", "Sequence", "dtype", "device"):
            return P
        if parts == ["str"]:
            return S
    if isinstance(default, ast.Constant) and default.value is not None:
        return S if isinstance(default.value, str) else P
    if isinstance(default, (ast.UnaryOp, ast.Tuple, ast.List)):
        return P
    return U


def _names_used_as_tensors(fn) -> set[str]:
    names = set()
    for node in ast.walk(fn):
        target = None
        if isinstance(node, ast.Attribute) and node.attr in tb.META_ATTRS:
            target = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in tb.META_METHODS:
            target = node.func.value
        if isinstance(target, ast.Name):
            names.add(target.id)
    return names


class WrapperAudit:
    """Walks one wrapper (and the helpers it calls) and collects findings and launches."""

    def __init__(self, module, wrapper: ast.FunctionDef | ast.AsyncFunctionDef):
        self.module = module
        self.wrapper = wrapper.name
        self.aliases = dict(module.aliases)
        self.findings: list[RawFinding] = []
        self.launches: list[Launch] = []
        self.helper: str | None = None
        self.helper_stack: list[str] = []
        self.loop_depth = 0
        self.pair_contiguous = False
        self.env = param_kinds(wrapper)
        self.returns: list[str] = []
        self.block(wrapper.body)

    # -- reporting ----------------------------------------------------------------------

    def emit(self, pos: tuple[int, int], code: str, message: str) -> None:
        if self.helper:
            message += f" (in helper `{self.helper}`, called by wrapper `{self.wrapper}`)"
        self.findings.append(RawFinding(pos[0], pos[1], code, message, self.wrapper))

    # -- statements ---------------------------------------------------------------------

    def block(self, stmts) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def stmt(self, s) -> None:
        if isinstance(s, ast.Assign):
            kind = self.expr(s.value)
            for target in s.targets:
                self.bind(target, kind, s.value)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.bind(s.target, self.expr(s.value), s.value)
        elif isinstance(s, ast.AugAssign):
            kinds = (self.expr(s.target), self.expr(s.value))
            if T in kinds:
                self.emit((s.lineno, s.col_offset), "WB107", f"tensor arithmetic on the host ({type(s.op).__name__} in place)")
        elif isinstance(s, (ast.Expr, ast.Return)):
            if s.value is not None:
                kind = self.expr(s.value)
                if isinstance(s, ast.Return):
                    self.returns.append(kind)
        elif isinstance(s, (ast.If, ast.While)):
            self.test(s.test)
            self.loop_depth += isinstance(s, ast.While)
            self.block(s.body)
            self.loop_depth -= isinstance(s, ast.While)
            self.block(s.orelse)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            it = self.iterate(s.iter)
            self.bind(s.target, it, None)
            self.loop_depth += 1
            self.block(s.body)
            self.loop_depth -= 1
            self.block(s.orelse)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                kind = self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, kind, None)
            self.block(s.body)
        elif isinstance(s, (ast.Try, ast.TryStar)):
            self.block(s.body)
            for h in s.handlers:
                if h.name:
                    self.env[h.name] = U
                self.block(h.body)
            self.block(s.orelse)
            self.block(s.finalbody)
        elif isinstance(s, ast.Raise):
            for part in (s.exc, s.cause):
                if part is not None:
                    self.expr(part)
        elif isinstance(s, ast.Assert):
            self.test(s.test)
            if s.msg is not None:
                self.expr(s.msg)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            bind_import(s, self.aliases)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.block(s.body)  # a nested function is still the wrapper's code
        elif isinstance(s, ast.Delete):
            for target in s.targets:
                self.expr(target)
        elif isinstance(s, ast.Match):
            self.expr(s.subject)
            for case in s.cases:
                if case.guard is not None:
                    self.test(case.guard)
                self.block(case.body)

    def bind(self, target, kind: str, value) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = kind
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
            for i, elt in enumerate(target.elts):
                self.bind(elt, self.env_kind(values[i]) if values else kind, None)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, kind, None)
        elif isinstance(target, ast.Subscript):
            if self.expr(target.value) == T:
                self.emit((target.lineno, target.col_offset), "WB103", "writes into a slice of a tensor on the host")
            self.expr(target.slice)
        elif isinstance(target, ast.Attribute):
            self.expr(target.value)

    def env_kind(self, node) -> str:
        """The kind of an already-evaluated simple element (for ``a, b = x, y``)."""
        if isinstance(node, ast.Name):
            return self.env.get(node.id, U)
        if isinstance(node, ast.Constant):
            return S if isinstance(node.value, str) else P
        return U

    def iterate(self, it) -> str:
        kind = self.expr(it)
        if kind == T:
            self.emit((it.lineno, it.col_offset), "WB103", "iterates over a tensor on the host (slices it row by row)")
        return kind

    def test(self, node) -> None:
        """A condition: a tensor here reads its data on the host."""
        if isinstance(node, ast.BoolOp):
            for v in node.values:
                self.test(v)
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.test(node.operand)
            return
        if isinstance(node, ast.Compare):
            kinds = [self.expr(x) for x in (node.left, *node.comparators)]
            identity = all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)
            if T in kinds and not identity:
                self.emit((node.lineno, node.col_offset), "WB106", "uses a tensor in a condition (reads its data on the host)")
            return
        if self.expr(node) == T:
            self.emit((node.lineno, node.col_offset), "WB106", "uses a tensor in a condition (reads its data on the host)")

    # -- expressions --------------------------------------------------------------------

    def expr(self, e) -> str:
        method = getattr(self, "e_" + type(e).__name__, None)
        if method is not None:
            return method(e)
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                self.expr(child)
        return U

    def e_Constant(self, e):
        return S if isinstance(e.value, (str, bytes)) else P

    def e_JoinedStr(self, e):
        for v in e.values:
            if isinstance(v, ast.FormattedValue) and self.expr(v.value) == T:
                self.emit((v.value.lineno, v.value.col_offset), "WB106", "formats a tensor's data into a string on the host")
        return S

    def e_Name(self, e):
        if e.id in self.env:
            return self.env[e.id]
        return U

    def e_Attribute(self, e):
        q = qualname(e, self.aliases)
        if q is not None and q.startswith("torch."):
            return P  # torch.float16, torch.Tensor, torch.contiguous_format: constants
        base = self.expr(e.value)
        if base == T:
            if e.attr in tb.META_ATTRS:
                return P
            if e.attr in tb.LAYOUT_ATTRS:
                self.emit(_method_pos(e), "WB102", f"layout change .{e.attr} on the host")
                return T
            if e.attr in tb.VIEW_ATTRS:
                self.emit(_method_pos(e), "WB103", f"view .{e.attr} of a tensor on the host")
                return T
            return U
        return P if base in (P, S) else U

    def e_Subscript(self, e):
        base = self.expr(e.value)
        self.expr(e.slice)
        if base == T:
            self.emit((e.lineno, e.col_offset), "WB103", "slices a tensor on the host (subscript)")
            return T
        return P if base in (P, S) else U

    def e_BinOp(self, e):
        kinds = (self.expr(e.left), self.expr(e.right))
        if T in kinds:
            self.emit((e.lineno, e.col_offset), "WB107", f"tensor arithmetic on the host ({type(e.op).__name__})")
            return T
        return join(*kinds)

    def e_UnaryOp(self, e):
        if isinstance(e.op, ast.Not):
            self.test(e.operand)
            return P
        kind = self.expr(e.operand)
        if kind == T:
            self.emit((e.lineno, e.col_offset), "WB107", f"tensor arithmetic on the host ({type(e.op).__name__})")
        return kind

    def e_Compare(self, e):
        kinds = [self.expr(x) for x in (e.left, *e.comparators)]
        if T in kinds and not all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops):
            self.emit((e.lineno, e.col_offset), "WB107", "elementwise tensor comparison on the host")
            return T
        return P

    def e_BoolOp(self, e):
        for v in e.values:
            self.test(v)
        return P

    def e_IfExp(self, e):
        self.test(e.test)
        return join(self.expr(e.body), self.expr(e.orelse))

    def e_NamedExpr(self, e):
        kind = self.expr(e.value)
        self.bind(e.target, kind, e.value)
        return kind

    def e_Tuple(self, e):
        return join(*[self.expr(x) for x in e.elts]) if e.elts else P

    e_List = e_Set = e_Tuple

    def e_Starred(self, e):
        return self.expr(e.value)

    def e_Dict(self, e):
        for part in (*e.keys, *e.values):
            if part is not None:
                self.expr(part)
        return U

    def e_Lambda(self, e):
        self.expr(e.body)
        return U

    def _comprehension(self, e, *parts):
        saved = dict(self.env)
        for gen in e.generators:
            self.bind(gen.target, self.iterate(gen.iter), None)
            for cond in gen.ifs:
                self.test(cond)
        self.loop_depth += 1
        kinds = [self.expr(p) for p in parts]
        self.loop_depth -= 1
        self.env = saved
        return P if all(k in (P, S) for k in kinds) else U

    def e_ListComp(self, e):
        return self._comprehension(e, e.elt)

    e_SetComp = e_GeneratorExp = e_ListComp

    def e_DictComp(self, e):
        return self._comprehension(e, e.key, e.value)

    # -- calls --------------------------------------------------------------------------

    def args(self, call) -> list[str]:
        kinds = [self.expr(a) for a in call.args]
        for kw in call.keywords:
            self.expr(kw.value)
        return kinds

    def e_Call(self, e):
        func = e.func
        if isinstance(func, ast.Subscript):  # kernel[grid](...) / kernel[None, block_dim](...)
            name = self.launcher_name(func.value)
            if name:
                self.expr(func.slice)
                self.args(e)
                return self.launch(e, name)
        name = self.launcher_name(func)
        if name:
            self.args(e)
            return self.launch(e, name)
        q = qualname(func, self.aliases)
        if q is not None and q.startswith("torch."):
            return self.torch_call(e, q)
        if isinstance(func, ast.Name):
            if func.id in self.module.helpers and func.id not in self.env:
                return self.call_helper(e, self.module.helpers[func.id])
            kinds = self.args(e)
            if func.id in tb.DATA_BUILTINS and T in kinds:
                self.emit((e.lineno, e.col_offset), "WB106", f"{func.id}() of a tensor reads its data on the host")
                return P
            return P if func.id in tb.PY_BUILTINS else U
        if isinstance(func, ast.Attribute):
            return self.method_call(e, func)
        self.expr(func)
        self.args(e)
        return U

    def launcher_name(self, func) -> str | None:
        if isinstance(func, ast.Name) and func.id in self.module.launchers and func.id not in self.env:
            return func.id
        return None

    def launch(self, call, name: str) -> str:
        self.launches.append(Launch(call.lineno, call.col_offset, name, self.loop_depth > 0, self.helper))
        return U

    def call_helper(self, call, fn) -> str:
        if fn.name in self.helper_stack:  # recursion: walked once is enough
            self.args(call)
            return U
        given = {}
        params = [p.arg for p in fn.args.posonlyargs + fn.args.args]
        for i, a in enumerate(call.args):
            kind = self.expr(a)
            if i < len(params) and not isinstance(a, ast.Starred):
                given[params[i]] = kind
        for kw in call.keywords:
            kind = self.expr(kw.value)
            if kw.arg:
                given[kw.arg] = kind
        saved = (self.env, self.helper, self.returns, self.aliases)
        self.env, self.helper, self.returns = param_kinds(fn, given), fn.name, []
        self.aliases = dict(saved[3])
        self.helper_stack.append(fn.name)
        self.block(fn.body)
        self.helper_stack.pop()
        result = join(*self.returns) if self.returns else P
        self.env, self.helper, self.returns, self.aliases = saved
        return result

    def torch_call(self, e, q: str) -> str:
        name = q[len("torch."):]
        pos = _method_pos(e.func) if isinstance(e.func, ast.Attribute) else (e.lineno, e.col_offset)
        if name.startswith("Tensor."):  # torch.Tensor.to(x, ...) is x.to(...)
            kinds = self.args(e)
            return self.classify_method(e, name.split(".", 1)[1], kinds[0] if kinds else T, pos, e.args[1:])
        kinds = self.args(e)
        short = name.rsplit(".", 1)[-1]
        if name == "empty":
            return T
        if name.endswith("synchronize"):
            self.emit(pos, "WB108", f"torch.{name}() in the wrapper: synchronisation belongs to the caller")
            return P
        if name in tb.TORCH_ALLOC:
            self.emit(pos, "WB104", f"allocation torch.{name}(); only torch.empty for the declared outputs is allowed")
        elif name in tb.TORCH_CONCAT_PAD or short == "pad":
            self.emit(pos, "WB105", f"torch.{name}() concatenates or pads on the host")
        elif name in tb.TORCH_LAYOUT:
            self.emit(pos, "WB102", f"layout change torch.{name}() on the host")
        elif name in tb.TORCH_RESHAPE:
            self.emit(pos, "WB103", f"reshape or slice torch.{name}() on the host")
        else:
            self.emit(pos, "WB113", f"calls torch.{name}(); torch.empty is the only torch call a wrapper may make")
        return T if T in kinds or name in tb.TORCH_ALLOC else U

    def method_call(self, e, func: ast.Attribute) -> str:
        attr = func.attr
        if attr in tb.SYNC_METHODS:
            receiver = func.value
            if isinstance(receiver, ast.Call) and (qualname(receiver.func, self.aliases) or "").startswith("torch."):
                self.args(receiver)  # torch.cuda.current_stream().synchronize(): one finding
            else:
                self.expr(receiver)
            self.args(e)
            self.emit(_method_pos(func), "WB108", f".{attr}() in the wrapper: synchronisation belongs to the caller")
            return P
        paired, self.pair_contiguous = self.pair_contiguous, False
        pairing = attr == "contiguous" and isinstance(func.value, ast.Call) and isinstance(func.value.func, ast.Attribute) \
            and func.value.func.attr in tb.LAYOUT_METHODS - {"contiguous"}
        before = len(self.findings)
        self.pair_contiguous = pairing
        receiver = self.expr(func.value)
        self.pair_contiguous = False
        if pairing and len(self.findings) > before and self.findings[-1].code == "WB102":
            self.args(e)  # x.movedim(...).contiguous() is one transpose-and-copy, reported once
            return T
        if receiver in (P, S):
            self.args(e)
            return P
        if receiver == U and attr in tb.AMBIGUOUS_METHODS:
            self.args(e)
            if attr == "view" and self.is_dtype_view(e, e.args):  # a dtype argument settles it
                self.emit(_method_pos(func), "WB112", ".view(dtype) reinterprets bits on the host")
                return T
            return U
        return self.classify_method(e, attr, receiver, _method_pos(func), e.args, evaluate=True, paired=paired)

    def classify_method(self, e, attr: str, receiver: str, pos, args, evaluate: bool = False, paired: bool = False) -> str:
        if evaluate:
            self.args(e)
        if attr in tb.META_METHODS or (attr == "type" and not e.args and not e.keywords):
            return P if receiver in (T, U) else U
        if attr == "view" and self.is_dtype_view(e, args):
            self.emit(pos, "WB112", ".view(dtype) reinterprets bits on the host")
            return T
        if attr in tb.CAST_METHODS:
            self.emit(pos, "WB101", f"host cast .{attr}()")
            return T
        if attr in tb.LAYOUT_METHODS:
            tail = " + .contiguous() (transpose and copy)" if paired and attr != "contiguous" else ""
            self.emit(pos, "WB102", f"layout change .{attr}(){tail} on the host")
            return T
        if attr in tb.RESHAPE_METHODS:
            self.emit(pos, "WB103", f"reshape or view .{attr}() on the host")
            return T
        if attr in tb.ALLOC_METHODS:
            self.emit(pos, "WB104", f"allocation .{attr}() on the host; only torch.empty for the declared outputs is allowed")
            return T
        if attr in tb.DATA_METHODS:
            self.emit(pos, "WB106", f".{attr}() reads tensor data on the host")
            return T if attr == "cpu" else P
        if receiver == T:
            self.emit(pos, "WB107", f"tensor operation .{attr}() on the host")
            return T
        return U

    def is_dtype_view(self, e, args) -> bool:
        candidates = list(args) + [kw.value for kw in e.keywords if kw.arg == "dtype"]
        if len(candidates) != 1:
            return False
        a = candidates[0]
        q = qualname(a, self.aliases) or ""
        if q.startswith("torch.") and q[len("torch."):] in tb.TORCH_DTYPES:
            return True
        return isinstance(a, ast.Attribute) and a.attr == "dtype"
