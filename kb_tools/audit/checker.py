"""The audit of one wrapper: a walk over its statements (and the same-file helpers it calls)
that tracks two things along every path.

* Which names hold tensors (``kinds``): joined over branches, narrowed by ``isinstance`` and
  ``is None`` checks, unpacked element by element from a helper's returned tuple. Only a
  tensor is flagged, so ``x.shape[0]`` is metadata while ``x[0]`` slices a tensor.
* How many kernel launches each path has made (0, 1, or 2 for "two or more"): a second
  launch on one path is WB109, a launch in a loop WB110, a path that returns normally
  without a launch WB109. Paths that raise are validation and end there.

Findings in a helper sit at the helper's own lines.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from kb_tools.audit import tables as tb
from kb_tools.audit.evidence import tensor_evidence, torch_name
from kb_tools.audit.kinds import K, P, S, T, U, flat, is_python, is_tensor, join, merge_envs, metadata_name
from kb_tools.audit.module import FUNCTION_DEFS, launch_target
from kb_tools.audit.names import bind_import, dotted, qualname

MAX_HELPER_DEPTH = 8
# Helpers walked per wrapper: a wrapper calls a few; a file built to make the walk
# exponential (each helper calling the next many times) stops here, in bounded time.
MAX_HELPER_WALKS = 2000
BLAMED_ZERO = -1  # a path already reported as returning without a launch


@dataclass(frozen=True)
class RawFinding:
    line: int
    col: int  # 0-based UTF-8 byte offset, as ast gives it
    code: str
    message: str
    helper: str | None = None  # the helper it sits in, None when in the wrapper itself


def _method_pos(func: ast.Attribute) -> tuple[int, int]:
    """Where ``.attr`` itself starts, so that a chain's findings point at each method."""
    return func.end_lineno, max(func.end_col_offset - len(func.attr), 0)


def call_pos(call: ast.Call) -> tuple[int, int]:
    """Where a finding on a call sits: at the method's name when ``x.to`` fits on one line,
    else at the call itself."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.end_lineno == func.lineno:
        return _method_pos(func)
    return call.lineno, call.col_offset


def _launch(counts: frozenset) -> frozenset:
    return frozenset(min(max(c, 0) + 1, 2) for c in counts)


def _declared_kind(name: str, annotation, default) -> str:
    if annotation is not None:
        parts = dotted(annotation.value if isinstance(annotation, ast.Subscript) else annotation) or []
        if parts and parts[-1] == "Tensor":
            return T
        if parts and parts[-1] in ("int", "float", "bool", "tuple", "list", "Sequence", "dtype", "device", "Size"):
            return P
        if parts == ["str"]:
            return S
    if metadata_name(name):
        return P
    if isinstance(default, ast.Constant) and default.value is not None:
        return S if isinstance(default.value, str) else P
    if isinstance(default, (ast.UnaryOp, ast.Tuple, ast.List)):
        return P
    return U


@dataclass
class Frame:
    """One function being walked: the wrapper (depth 0) or a helper it calls."""
    fn: ast.AST
    name: str
    launches: bool  # does this function launch on some path (directly or via helpers)?
    evidence: set[str]
    kernel_names: set[str]
    entry_loop: int = 0
    entry_counts: frozenset = frozenset({0})
    called_at: tuple[int, int] | None = None  # the call site in the calling frame
    returns: list = field(default_factory=list)
    return_counts: frozenset = frozenset()


class WrapperAudit:
    """Walks one wrapper and the helpers it calls; collects findings and launch counts."""

    def __init__(self, module, wrapper: ast.FunctionDef | ast.AsyncFunctionDef):
        self.module = module
        self.wrapper = wrapper.name
        self.aliases = dict(module.aliases)
        self.findings: list[RawFinding] = []
        self.launch_sites: set[tuple[int, int]] = set()
        self.loop_depth = 0
        self.nested = 0  # inside a nested def or lambda: launches there are not this call's
        self.pair_contiguous = False
        self.frames: list[Frame] = []
        self.helper_walks = 0
        self.counts = frozenset({0})
        self.env = self.enter(wrapper, None)
        self.block(wrapper.body)
        frame = self.frames.pop()
        self.end_counts = frame.return_counts | self.counts
        self.returns = frame.returns + ([P] if self.counts else [])
        if frame.launches and 0 in self.counts:
            self.emit((wrapper.lineno, wrapper.col_offset), "WB109",
                      f"a path through `{wrapper.name}` reaches its end without launching the kernel")

    @property
    def most_launches(self) -> int:
        return max((max(c, 0) for c in self.end_counts), default=0)

    # -- frames and reporting -----------------------------------------------------------

    def enter(self, fn, given: dict | None, called_at=None) -> dict:
        launchers = self.module.launchers
        kernels = self.module.local_kernels(fn)
        evidence = self.module.evidence.get(id(fn))
        if evidence is None:
            evidence = self.module.evidence[id(fn)] = tensor_evidence(fn, launchers | kernels, self.aliases)
        frame = Frame(fn, fn.name, self.module.launches(fn), evidence, kernels, self.loop_depth, self.counts, called_at)
        self.frames.append(frame)
        return self.param_kinds(fn, given or {}, frame.evidence)

    @staticmethod
    def param_kinds(fn, given: dict, evidence: set[str]) -> dict:
        a = fn.args
        positional = a.posonlyargs + a.args
        defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults):]], a.defaults))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
        env = {}
        for p in positional + a.kwonlyargs:
            kind = _declared_kind(p.arg, p.annotation, defaults.get(p.arg))
            env[p.arg] = T if kind == U and p.arg in evidence else kind
        for p in (a.vararg, a.kwarg):
            if p is not None:
                env[p.arg] = U
        for name, kind in given.items():
            if name in env and kind != U and not metadata_name(name):
                env[name] = kind
        return env

    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def emit(self, pos: tuple[int, int], code: str, message: str) -> None:
        helper = self.frame.name if len(self.frames) > 1 else None
        if helper:
            message += f" (in helper `{helper}`)"
        self.findings.append(RawFinding(pos[0], pos[1], code, message, helper))

    # -- statements ---------------------------------------------------------------------

    def block(self, stmts) -> None:
        for stmt in stmts:
            self.stmt(stmt)

    def branches(self, *runs) -> None:
        """Run each branch from the same state; join the states of those that go on."""
        env0, counts0 = self.env, self.counts
        ends = []
        for run in runs:
            self.env, self.counts = dict(env0), counts0
            run()
            ends.append((self.env, self.counts))
        self.join_ends(ends, env0)

    def join_ends(self, ends: list[tuple[dict, frozenset]], env0: dict) -> None:
        """Where branches meet: the names' kinds joined over the branches that go on (those
        that all raised or returned leave ``env0``), the launch counts of every branch."""
        live = [e for e, c in ends if c]
        self.env = merge_envs(live) if live else env0
        self.counts = frozenset().union(*(c for _, c in ends))

    def narrowed(self, updates: dict, body):
        def run():
            self.env.update(updates)
            self.block(body)
        return run

    def stmt(self, s) -> None:
        if isinstance(s, ast.Assign):
            kind = self.expr(s.value)
            for target in s.targets:
                self.bind(target, kind)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                kind = self.expr(s.value)
                declared = _declared_kind("", s.annotation, None)
                self.bind(s.target, declared if declared != U else kind)
        elif isinstance(s, ast.AugAssign):
            kinds = (self.expr(s.target), self.expr(s.value))
            if any(is_tensor(k) for k in kinds):
                self.emit((s.lineno, s.col_offset), "WB107", f"tensor arithmetic on the host ({type(s.op).__name__} in place)")
        elif isinstance(s, ast.Expr):
            self.expr(s.value)
        elif isinstance(s, ast.Return):
            kind = self.expr(s.value) if s.value is not None else P
            self.ret(s, kind)
        elif isinstance(s, ast.If):
            self.test(s.test)
            yes, no = self.narrowing(s.test)
            self.branches(self.narrowed(yes, s.body), self.narrowed(no, s.orelse))
        elif isinstance(s, (ast.While, ast.For, ast.AsyncFor)):
            self.loop(s)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                kind = self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, U if kind == P else kind)
            self.block(s.body)
        elif isinstance(s, (ast.Try, ast.TryStar)):
            self.try_(s)
        elif isinstance(s, ast.Raise):
            for part in (s.exc, s.cause):
                if part is not None:
                    self.expr(part)
            self.counts = frozenset()
        elif isinstance(s, ast.Assert):
            self.test(s.test)
            if s.msg is not None:
                self.expr(s.msg)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            bind_import(s, self.aliases)
        elif isinstance(s, FUNCTION_DEFS):
            if s.name not in self.frame.kernel_names:  # a local kernel's body is device code
                self.nested_body(lambda: self.block(s.body))
        elif isinstance(s, ast.Delete):
            for target in s.targets:
                self.expr(target)
        elif isinstance(s, ast.Match):
            self.expr(s.subject)
            runs = [self.narrowed({}, c.body) if c.guard is None else self.guarded(c) for c in s.cases]
            self.branches(*runs, lambda: None)

    def guarded(self, case):
        def run():
            self.test(case.guard)
            self.block(case.body)
        return run

    def ret(self, s, kind) -> None:
        frame = self.frame
        counts = self.counts
        if frame.launches and 0 in counts and self.nested == 0:
            self.emit((s.lineno, s.col_offset), "WB109",
                      "returns without launching the kernel (a delivered wrapper launches once, even for an empty input)")
            counts = frozenset(BLAMED_ZERO if c == 0 else c for c in counts)
        frame.returns.append(kind)
        frame.return_counts |= counts
        self.counts = frozenset()

    def loop(self, s) -> None:
        if isinstance(s, ast.While):
            self.test(s.test)
        else:
            self.bind(s.target, self.iterate(s.iter))
        env0, counts0 = self.env, self.counts
        self.env = dict(env0)
        self.loop_depth += 1
        self.block(s.body)
        self.loop_depth -= 1
        launched = self.counts != counts0 and any(c > 0 for c in self.counts)
        body_env, body_counts = self.env, self.counts
        live = [env0] + ([body_env] if body_counts else [])
        self.env = merge_envs(live)
        # A launch in the loop is WB110 already; its paths are not also "no launch".
        self.counts = body_counts if launched else counts0 | body_counts
        self.block(s.orelse)

    def try_(self, s) -> None:
        env0, counts0 = self.env, self.counts
        self.env = dict(env0)
        self.block(s.body)
        self.block(s.orelse)
        after_body = (self.env, self.counts)
        ends = [after_body]
        for h in s.handlers:
            self.env, self.counts = dict(env0), counts0 | after_body[1]
            if h.type is not None:
                self.expr(h.type)
            if h.name:
                self.env[h.name] = U
            self.block(h.body)
            ends.append((self.env, self.counts))
        self.join_ends(ends, env0)
        self.block(s.finalbody)

    def nested_body(self, run) -> None:
        saved = (self.env, self.counts, self.loop_depth)
        self.env = dict(self.env)
        self.nested += 1
        run()
        self.nested -= 1
        self.env, self.counts, self.loop_depth = saved

    def narrowing(self, test) -> tuple[dict, dict]:
        """(kinds on the true branch, kinds on the false branch) a condition establishes."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            yes, no = self.narrowing(test.operand)
            return no, yes
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            yes = {}
            for v in test.values:
                yes.update(self.narrowing(v)[0])
            return yes, {}
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
                and len(test.args) == 2 and isinstance(test.args[0], ast.Name):
            name, types = test.args[0].id, test.args[1]
            elts = types.elts if isinstance(types, ast.Tuple) else [types]
            parts = [(dotted(t) or [""])[-1] for t in elts]
            if "Tensor" in parts:
                return {name: T}, ({name: P} if len(parts) == 1 else {})
            if all(p in ("int", "float", "bool", "str", "complex", "list", "tuple", "Number", "Integral") for p in parts):
                return {name: P}, {}
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
            if isinstance(test.ops[0], ast.Is):
                return {test.left.id: P}, {}
            if isinstance(test.ops[0], ast.IsNot):
                return {}, {test.left.id: P}
        return {}, {}

    def bind(self, target, kind) -> None:
        if isinstance(target, ast.Name):
            name = target.id
            if metadata_name(name) and kind != K:
                kind = P
            elif kind == U and name in self.frame.evidence:
                kind = T
            self.env[name] = kind
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            if isinstance(kind, tuple) and len(kind) == len(elts) and not any(isinstance(e, ast.Starred) for e in elts):
                for elt, k in zip(elts, kind):
                    self.bind(elt, k)
            else:
                whole = flat(kind)
                for elt in elts:
                    self.bind(elt, whole)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, flat(kind))
        elif isinstance(target, ast.Subscript):
            if is_tensor(self.expr(target.value)):
                self.emit((target.lineno, target.col_offset), "WB103", "writes into a slice of a tensor on the host")
            self.expr(target.slice)
        elif isinstance(target, ast.Attribute):
            self.expr(target.value)

    def iterate(self, it):
        """The kind of one element of ``it``: any of a tuple's elements, joined position by
        position when they are rows of equal length (``for t, dtype, name in ((a, torch.int32, "a"), ...)``)."""
        kind = self.expr(it)
        if isinstance(kind, tuple):
            return join(*kind)
        if is_tensor(kind):
            self.emit((it.lineno, it.col_offset), "WB103", "iterates over a tensor on the host (slices it row by row)")
        return P if is_python(kind) else (T if kind == T else U)

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
            kinds = [flat(self.expr(x)) for x in (node.left, *node.comparators)]
            identity = all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops)
            if T in kinds and not identity:
                self.emit((node.lineno, node.col_offset), "WB106", "uses a tensor in a condition (reads its data on the host)")
            return
        kind = self.expr(node)
        if kind == T:
            self.emit((node.lineno, node.col_offset), "WB106", "uses a tensor in a condition (reads its data on the host)")

    # -- expressions --------------------------------------------------------------------

    def expr(self, e):
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
            if isinstance(v, ast.FormattedValue) and is_tensor(self.expr(v.value)):
                self.emit((v.value.lineno, v.value.col_offset), "WB106", "formats a tensor's data into a string on the host")
        return S

    def e_Name(self, e):
        return self.env.get(e.id, K if e.id in self.module.launchers else U)

    def e_Attribute(self, e):
        if torch_name(qualname(e, self.aliases)) is not None:
            return P  # torch.float16, torch.Tensor, torch.contiguous_format: constants
        base = flat(self.expr(e.value))
        if e.attr in tb.META_ATTRS:
            return P
        if base == T:
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
        if isinstance(base, tuple):
            index = e.slice
            if isinstance(index, ast.Constant) and isinstance(index.value, int) and -len(base) <= index.value < len(base):
                return base[index.value]
            return flat(base)
        if base == T:
            self.emit((e.lineno, e.col_offset), "WB103", "slices a tensor on the host (subscript)")
            return T
        return P if base in (P, S) else U

    def e_BinOp(self, e):
        kinds = (flat(self.expr(e.left)), flat(self.expr(e.right)))
        if T in kinds:
            self.emit((e.lineno, e.col_offset), "WB107", f"tensor arithmetic on the host ({type(e.op).__name__})")
            return T
        return join(*kinds)

    def e_UnaryOp(self, e):
        if isinstance(e.op, ast.Not):
            self.test(e.operand)
            return P
        kind = flat(self.expr(e.operand))
        if kind == T:
            self.emit((e.lineno, e.col_offset), "WB107", f"tensor arithmetic on the host ({type(e.op).__name__})")
        return kind

    def e_Compare(self, e):
        kinds = [flat(self.expr(x)) for x in (e.left, *e.comparators)]
        if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops):
            return P
        if T in kinds:
            self.emit((e.lineno, e.col_offset), "WB107", "elementwise tensor comparison on the host")
            return T
        return P if all(k in (P, S) for k in kinds) else U

    def e_BoolOp(self, e):
        for v in e.values:
            self.test(v)
        return P

    def e_IfExp(self, e):
        self.test(e.test)
        yes, no = self.narrowing(e.test)
        saved = self.env
        self.env = {**saved, **yes}
        a = self.expr(e.body)
        self.env = {**saved, **no}
        b = self.expr(e.orelse)
        self.env = saved
        return join(a, b)

    def e_NamedExpr(self, e):
        kind = self.expr(e.value)
        self.bind(e.target, kind)
        return kind

    def e_Tuple(self, e):
        if any(isinstance(x, ast.Starred) for x in e.elts):
            return join(*[self.expr(x) for x in e.elts])
        return tuple(self.expr(x) for x in e.elts)

    def e_List(self, e):
        """A list display's elements are known one by one, as a tuple's are."""
        return self.e_Tuple(e) if e.elts else P

    e_Set = e_List

    def e_Starred(self, e):
        return flat(self.expr(e.value))

    def e_Dict(self, e):
        for part in (*e.keys, *e.values):
            if part is not None:
                self.expr(part)
        return U

    def e_Lambda(self, e):
        self.nested_body(lambda: self.expr(e.body))
        return U

    def _comprehension(self, e, *parts):
        saved = dict(self.env)
        for gen in e.generators:
            self.bind(gen.target, self.iterate(gen.iter))
            for cond in gen.ifs:
                self.test(cond)
        self.loop_depth += 1
        kinds = [flat(self.expr(p)) for p in parts]
        self.loop_depth -= 1
        self.env = saved
        return P if all(k in (P, S) for k in kinds) else U

    def e_ListComp(self, e):
        return self._comprehension(e, e.elt)

    e_SetComp = e_GeneratorExp = e_ListComp

    def e_DictComp(self, e):
        return self._comprehension(e, e.key, e.value)

    # -- calls --------------------------------------------------------------------------

    def args(self, call) -> list:
        kinds = [self.expr(a) for a in call.args]
        for kw in call.keywords:
            self.expr(kw.value)
        return kinds

    def is_launch(self, call) -> bool:
        names = self.module.launchers | self.frame.kernel_names
        if launch_target(call, names):
            return True
        return isinstance(call.func, ast.Name) and self.env.get(call.func.id) == K

    def e_Call(self, e):
        func = e.func
        if self.is_launch(e):
            if isinstance(func, ast.Subscript):
                self.expr(func.slice)
            self.args(e)
            return self.launch(e)
        q = qualname(func, self.aliases)
        if torch_name(q) is not None:
            return self.torch_call(e, torch_name(q))
        if q is not None and q.split(".")[0] in tb.PYTHON_VALUE_MODULES:
            self.args(e)
            return P
        if isinstance(func, ast.Name):
            if func.id in self.module.helpers and func.id not in self.env:
                return self.call_helper(e, self.module.helpers[func.id])
            kinds = [flat(k) for k in self.args(e)]
            if func.id in tb.DATA_BUILTINS and T in kinds:
                self.emit((e.lineno, e.col_offset), "WB106", f"{func.id}() of a tensor reads its data on the host")
                return P
            return P if func.id in tb.PY_BUILTINS else U
        if isinstance(func, ast.Attribute):
            return self.method_call(e, func)
        self.expr(func)
        self.args(e)
        return U

    def launch(self, call) -> str:
        if self.nested:
            return U
        pos = (call.lineno, call.col_offset)
        before = self.counts
        if self.loop_depth > 0:
            self.emit(self.report_site(pos, lambda f: self.loop_depth > f.entry_loop),
                      "WB110", "launches the kernel inside a loop or comprehension")
        elif any(c >= 1 for c in before):
            self.emit(self.report_site(pos, lambda f: not any(c >= 1 for c in f.entry_counts)),
                      "WB109", "a second kernel launch on this path; a wrapper launches exactly one kernel once")
        self.launch_sites.add(pos)
        self.counts = _launch(before)
        return U

    def report_site(self, pos, belongs_here) -> tuple[int, int]:
        """Where a launch problem is reported: in the innermost frame that holds its cause
        (the loop, or the earlier launch), at the call leading into the next frame."""
        for frame in reversed(self.frames):
            if belongs_here(frame) or frame.called_at is None:
                return pos
            pos = frame.called_at
        return pos

    def call_helper(self, call, fn):
        if any(f.fn is fn for f in self.frames) or len(self.frames) > MAX_HELPER_DEPTH \
                or self.helper_walks >= MAX_HELPER_WALKS:
            self.args(call)
            return U
        self.helper_walks += 1
        given = {}
        params = [p.arg for p in fn.args.posonlyargs + fn.args.args]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        for i, a in enumerate(call.args):
            kind = self.expr(a)
            if i < len(params) and not isinstance(a, ast.Starred):
                given[params[i]] = kind
        for kw in call.keywords:
            kind = self.expr(kw.value)
            if kw.arg:
                given[kw.arg] = kind
        saved = (self.env, self.aliases, self.loop_depth)
        self.env = self.enter(fn, given, called_at=(call.lineno, call.col_offset))
        self.aliases = dict(saved[1])
        self.block(fn.body)
        frame = self.frames.pop()
        ends = frame.returns + ([P] if self.counts else [])
        self.counts = frame.return_counts | self.counts
        self.env, self.aliases, self.loop_depth = saved
        return join(*ends) if ends else U

    def torch_call(self, e, name: str):
        pos = _method_pos(e.func) if isinstance(e.func, ast.Attribute) else (e.lineno, e.col_offset)
        if name.startswith("Tensor."):  # torch.Tensor.to(x, ...) is x.to(...)
            kinds = self.args(e)
            return self.classify_method(e, name.split(".", 1)[1], flat(kinds[0]) if kinds else T, pos, e.args[1:])
        kinds = [flat(k) for k in self.args(e)]
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
        if short in tb.TORCH_METADATA_FUNCS:
            return P
        return T if T in kinds or name in tb.TORCH_ALLOC else U

    def method_call(self, e, func: ast.Attribute):
        attr = func.attr
        if attr in tb.SYNC_METHODS:
            receiver = func.value
            if isinstance(receiver, ast.Call) and torch_name(qualname(receiver.func, self.aliases)):
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
        receiver = flat(self.expr(func.value))
        self.pair_contiguous = False
        if pairing and len(self.findings) > before and self.findings[-1].code == "WB102":
            self.args(e)  # x.movedim(...).contiguous() is one transpose-and-copy, reported once
            return T
        if receiver in (P, S, K):
            self.args(e)
            return P if receiver != K else U
        if receiver == U and attr in tb.AMBIGUOUS_METHODS:
            self.args(e)
            if attr == "view" and self.is_dtype_view(e, e.args):  # a dtype argument settles it
                self.emit(_method_pos(func), "WB112", ".view(dtype) reinterprets bits on the host")
                return T
            return U
        return self.classify_method(e, attr, receiver, _method_pos(func), e.args, evaluate=True, paired=paired)

    def classify_method(self, e, attr: str, receiver: str, pos, args, evaluate: bool = False, paired: bool = False):
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
