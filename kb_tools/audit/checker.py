"""The audit of one wrapper: a walk over its statements (and the same-file helpers it calls)
that tracks two things along every path.

* Which names hold tensors (``kinds``): joined over branches, narrowed by ``isinstance`` and
  ``is None`` checks, unpacked element by element from a helper's returned tuple. Only a
  tensor is flagged, so ``x.shape[0]`` is metadata while ``x[0]`` slices a tensor.
* How many kernel launches each path has made (0, 1, or 2 for "two or more"): a second
  launch on one path, a launch in a loop and a path that returns normally without a
  launch are reported (``launches``). Paths that raise are validation and end there.

The walk reports nothing itself: each host operation it meets goes to the rule modules of
``kb_tools.audit.rules``, which decide whether and under which code it is reported.

Findings in a helper sit at the helper's own lines.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

from kb_tools.audit import classes, tables as tb
from kb_tools.audit.buffers import same_buffer
from kb_tools.audit.evidence import element_evidence, positional, tensor_evidence, torch_name
from kb_tools.audit.findings import RawFinding, method_pos
from kb_tools.audit.host_ops import HostOperations
from kb_tools.audit.kind_flow import KindFlow, declared_kind, injected_allocators
from kb_tools.audit.kinds import (
    K,
    O,
    P,
    S,
    T,
    U,
    flat,
    is_python,
    is_tensor,
    join,
    merge_envs,
)
from kb_tools.audit.launches import BLAMED_ZERO, LaunchCounting
from kb_tools.audit.module import FUNCTION_DEFS, launch_target
from kb_tools.audit.names import bind_import, qualname, record_import
from kb_tools.syntax import child_nodes, walk_nodes
from kb_tools.audit.rules import (
    wb102_host_layout_change as wb102,
    wb103_host_reshape_or_slice as wb103,
    wb104_host_allocation as wb104,
    wb106_host_data_read as wb106,
    wb107_host_tensor_arithmetic as wb107,
    wb109_launch_count as wb109,
    wb112_host_bit_reinterpretation as wb112,
    wb113_host_torch_call as wb113,
)

SIMPLE_STATEMENTS = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Assert, ast.Pass,
                     ast.Delete, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Break, ast.Continue)
MAX_HELPER_DEPTH = 8
# Helpers walked per wrapper: a wrapper calls a few; a file built to make the walk
# exponential (each helper calling the next many times) stops here, in bounded time.
MAX_HELPER_WALKS = 2000


@dataclass
class Frame:
    """One function being walked: the wrapper (depth 0) or a helper it calls."""
    fn: ast.AST
    name: str
    launches: bool  # does this function launch on some path (directly or via helpers)?
    evidence: set[str]
    kernel_names: set[str]
    known: set[str]  # the names a call launches through: the module's launchers and these kernels
    called_at: tuple[int, int] | None = None  # the call site in the calling frame
    returns: list = field(default_factory=list)
    return_counts: frozenset = frozenset()
    path: str | None = None  # the audited file it sits in when not the wrapper's own
    kind: str = "helper"  # or "decorator": how a finding in it names it
    imports: dict = field(default_factory=dict)  # name -> (level, module, attribute) of an import in its body
    empties: dict = field(default_factory=dict)  # name -> where it was bound to torch.empty(...), in this function
    flows: dict = field(default_factory=dict)  # name -> the names its value was made from
    returned: set = field(default_factory=set)  # names its returns are made from
    torch_objects: set = field(default_factory=set)  # names bound by `with torch....(...) as name` (a profiler, ...)
    local_defs: dict = field(default_factory=dict)  # name -> a function defined in its body (a closure)
    elements: set = field(default_factory=set)  # names whose elements it uses as tensors (a list of tensors)
    instances: dict = field(default_factory=dict)  # name -> (module or None, class) of ``name = Cls(...)``
    torch_aliases: set = field(default_factory=set)  # names it binds to a torch attribute (``aten = torch.ops.aten``)


_READERS: dict[type, object] = {}  # expression class -> WrapperAudit's e_<Class> method, or None


class WrapperAudit(KindFlow, LaunchCounting, HostOperations):
    """Walks one wrapper and the helpers it calls; collects findings and launch counts."""

    def __init__(self, module, wrapper: ast.FunctionDef | ast.AsyncFunctionDef, tree=None, parsed=None,
                 launches: bool = False):
        """``launches``: the wrapper launches through something its file alone does not show
        (``reach``), so a path of it without a launch is reported as for one that launches itself."""
        self.module = module
        self.tree, self.parsed = tree, parsed  # the audited tree and the wrapper's module in it (None: one file)
        self.home = parsed.path if parsed is not None else None
        self.opaque: set[str] = set()  # modules outside the tree whose functions the wrapper calls
        self.starred: set[tuple[str | None, int]] = set()  # (file or None: this one, line) of a star import a call may bind from
        self.unfollowed: set[tuple[str | None, int, str, str]] = set()  # (file or None, line, callee, why) of a call not walked
        self.wrapper = wrapper.name
        self.aliases = dict(module.aliases)
        self.findings: list[RawFinding] = []
        self.launch_sites: set[tuple[int, int]] = set()
        self.loop_depth = 0
        self.nested = 0  # inside a nested def or lambda: launches there are not this call's
        self.pair_contiguous = False
        self.frames: list[Frame] = []
        self.frame: Frame | None = None  # the top of ``frames``, kept beside it (read at every node)
        self.helper_walks = 0
        self.kernels_seen: dict[str, tuple[int, int]] = {}  # each kernel launched, in launch order
        self.counts = frozenset({0})
        self.env = self.enter(wrapper, None)
        self.frame.launches = self.frame.launches or launches
        for dec in wrapper.decorator_list:
            self.torch_decorator(dec)
            self.decorator(dec)
        self.block(wrapper.body)
        frame = self.frame
        self.end_counts = frame.return_counts | self.counts
        self.returns = frame.returns + ([P] if self.counts else [])
        if frame.launches and 0 in self.counts:  # findings here are the wrapper's own
            self.emit((wrapper.lineno, wrapper.col_offset), *wb109.end_without_launch(wrapper.name))
        self.scratch(frame)
        self.pop()

    def scratch(self, frame: Frame) -> None:
        """A torch.empty the function (the wrapper, or a helper it runs) never hands back: a
        scratch buffer, not a declared output. Called while ``frame`` is the top one."""
        for name, pos in ((n, p) for n, places in frame.empties.items() for p in places):
            if name not in outputs(frame):
                name = name.split("@")[0]  # a buffer retired from its name (``retire``) by its name
                self.emit(pos, *wb104.scratch(name, frame.fn.name))

    def enter(self, fn, given: dict | None, called_at=None) -> dict:
        launchers = self.module.launchers
        kernels = self.module.local_kernels(fn)
        known = launchers | kernels
        evidence = self.module.evidence.get(id(fn))
        if evidence is None:
            evidence = self.module.evidence[id(fn)] = tensor_evidence(fn, self.module.index, known, self.aliases)
        elements = self.module.elements.get(id(fn))
        if elements is None:
            elements = self.module.elements[id(fn)] = element_evidence(fn, self.module.index)
        frame = Frame(fn, fn.name, self.module.launches(fn), evidence, kernels, known, called_at, elements=elements)
        self.frames.append(frame)
        self.frame = frame
        # `alloc=torch.empty`: a call of the parameter is that allocation, unless the caller passed another
        self.aliases.update({p: q for p, q in injected_allocators(fn, self.aliases).items() if p not in (given or {})})
        return self.param_kinds(fn, given or {}, frame.evidence)

    def pop(self) -> Frame:
        """The walk of the top frame's function ends: the one below it is walked again."""
        frame = self.frames.pop()
        self.frame = self.frames[-1] if self.frames else None
        return frame

    # -- statements ---------------------------------------------------------------------

    def block(self, stmts) -> None:
        for stmt in stmts:
            if not self.counts:  # every path has raised or returned: what follows runs on none
                return
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
            self.note_instances(s)
            self.note_torch_alias(s)
            if not self.nested:
                self.track_outputs(s)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                kind = self.expr(s.value)
                declared = declared_kind("", s.annotation, None)
                self.bind(s.target, declared if declared != U else kind)
        elif isinstance(s, ast.AugAssign):
            kinds = (self.expr(s.target), self.expr(s.value))
            if any(is_tensor(k) for k in kinds):
                self.emit((s.lineno, s.col_offset), *wb107.operator(type(s.op).__name__, in_place=True))
        elif isinstance(s, ast.Expr):
            self.expr(s.value)
            value = s.value
            if not self.nested and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and isinstance(value.func.value, ast.Name):  # outs.append(y): outs is made from y too
                self.frame.flows.setdefault(value.func.value.id, set()).update(
                    n.id for a in (*value.args, *(k.value for k in value.keywords)) for n in walk_nodes(a)
                    if isinstance(n, ast.Name))
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
                self.device_guard(item)
                kind = self.expr(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, U if kind == P else kind)
                    if isinstance(item.optional_vars, ast.Name) and isinstance(item.context_expr, ast.Call) \
                            and not is_tensor(kind) and torch_name(qualname(item.context_expr.func, self.aliases)):
                        self.frame.torch_objects.add(item.optional_vars.id)  # its methods are torch calls
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
            record_import(s, self.frame.imports)  # `from pkg import ops as o` in a body: o.f() is followed too
        elif isinstance(s, FUNCTION_DEFS):
            if s.name not in self.frame.kernel_names:  # a local kernel's body is device code
                self.frame.local_defs[s.name] = s
                self.nested_body(lambda: self.block(s.body))
                self.handed_on_scratch(s)
        elif isinstance(s, ast.Delete):
            for target in s.targets:
                self.expr(target)
        elif isinstance(s, ast.Match):
            self.expr(s.subject)
            runs = [self.narrowed({}, c.body) if c.guard is None else self.guarded(c) for c in s.cases]
            self.branches(*runs, lambda: None)

    def handed_on_scratch(self, fn) -> None:
        """A function the walked one defines and never calls by name (``alloc_fn`` handed to
        ``triton.set_allocator``, which the launch calls for its workspace) returns nothing to the
        wrapper's caller: each torch.empty in it is a scratch buffer."""
        if self.nested or any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == fn.name
                              for n in self.module.index.walk(self.frame.fn)):
            return
        for node in self.module.index.walk(fn):
            if isinstance(node, ast.Call) and torch_name(qualname(node.func, self.aliases)) == "empty":
                pos = method_pos(node.func) if isinstance(node.func, ast.Attribute) else (node.lineno, node.col_offset)
                self.emit(pos, *wb104.handed_on(fn.name))

    def track_outputs(self, s: ast.Assign) -> None:
        """Which names of the function walked hold a ``torch.empty`` and which hand on a buffer's
        data (``out = y``, ``y.view(...)``, ``y if c else z``: ``buffers.same_buffer``), so that
        a buffer it never returns can be told from an output."""
        used = same_buffer(s.value)
        value = s.value
        frame = self.frame
        for target in s.targets:
            for name in (n.id for n in walk_nodes(target) if isinstance(n, ast.Name)):
                if name in frame.empties and name not in used and name in same_buffer(value, made_from=True):
                    self.retire(name, s.lineno)  # `out = out.sum()`: the buffer is no longer what `out` holds
                frame.flows.setdefault(name, set()).update(used)
                if isinstance(target, ast.Name) and isinstance(value, ast.Call) \
                        and torch_name(qualname(value.func, self.aliases)) == "empty":
                    func = value.func
                    pos = method_pos(func) if isinstance(func, ast.Attribute) else (value.lineno, value.col_offset)
                    if pos not in (places := frame.empties.setdefault(name, [])):
                        places.append(pos)

    def retire(self, name: str, line: int) -> None:
        """``name`` is rebound to a new tensor made from the buffer it held (``out = out.sum()``):
        the buffer stays reachable only through the names bound from it before. Read the same
        on every path (an approximation: a reduction on one branch only retires it for all)."""
        frame = self.frame
        old = f"{name}@{line}"
        frame.empties[old] = frame.empties.pop(name)
        for sources in frame.flows.values():
            if name in sources:
                sources.add(old)
        frame.flows[old] = frame.flows.pop(name, set())

    def guarded(self, case):
        def run():
            self.test(case.guard)
            self.block(case.body)
        return run

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
        # A launch in the loop is reported already; its paths are not also "no launch".
        self.counts = body_counts if launched else counts0 | body_counts
        self.block(s.orelse)

    def try_(self, s) -> None:
        """A handler starts from the counts before the statement that raised: a launch that
        raises (``try: k[grid](...) except OutOfResources: k[grid](... smaller block)``) made no
        launch, so the retry is the first. A compound statement may raise after a launch inside
        it, so the counts after it count too; the ``else`` block's exceptions are not caught."""
        env0, counts0 = self.env, self.counts
        self.env = dict(env0)
        raised = counts0
        for stmt in s.body:
            if not self.counts:
                break
            raised |= self.counts
            self.stmt(stmt)
            if not isinstance(stmt, SIMPLE_STATEMENTS):
                raised |= self.counts
        self.block(s.orelse)
        after_body = (self.env, self.counts)
        ends = [after_body]
        for h in s.handlers:
            self.env, self.counts = dict(env0), raised
            if h.type is not None:
                self.expr(h.type)
            if h.name:
                self.env[h.name] = U
            self.block(h.body)
            ends.append((self.env, self.counts))
        self.join_ends(ends, env0)
        ended, self.counts = self.counts, self.counts or counts0  # a finally block runs on the raising paths too
        self.block(s.finalbody)
        self.counts = self.counts if ended else frozenset()

    def nested_body(self, run) -> None:
        saved = (self.env, self.counts, self.loop_depth)
        self.env = dict(self.env)
        self.nested += 1
        run()
        self.nested -= 1
        self.env, self.counts, self.loop_depth = saved

    # -- expressions --------------------------------------------------------------------

    def expr(self, e):
        try:
            method = _READERS[e.__class__]
        except KeyError:  # the first expression of its class: its reader, looked up by name once
            method = _READERS[e.__class__] = getattr(WrapperAudit, "e_" + e.__class__.__name__, None)
        if method is not None:
            return method(self, e)
        for child in child_nodes(e):
            if isinstance(child, ast.expr):
                self.expr(child)
        return U

    def e_Constant(self, e):
        return S if isinstance(e.value, (str, bytes)) else P

    def e_JoinedStr(self, e):
        for v in e.values:
            if isinstance(v, ast.FormattedValue) and is_tensor(self.expr(v.value)):
                self.emit((v.value.lineno, v.value.col_offset), *wb106.formatted())
        return S

    def e_Name(self, e):
        return self.env.get(e.id, K if e.id in self.module.launchers else U)

    def e_Attribute(self, e):
        if (name := torch_name(qualname(e, self.aliases))) is not None:
            if name.rsplit(".", 1)[-1] in tb.TORCH_OBJECT_ATTRS:
                return O  # torch.cuda.default_generators: generators, read with no call
            return P  # torch.float16, torch.Tensor, torch.contiguous_format: constants
        if e.attr in tb.TORCH_OBJECT_ATTRS and isinstance(e.value, ast.Name) and e.value.id not in self.env:
            return O  # a device module made at run time (FlagGems' torch_device_fn): the name is torch's alone
        base = flat(self.expr(e.value))
        if e.attr in tb.META_ATTRS:
            return P
        if base == T:
            found = wb102.attribute(e.attr) or wb103.attribute(e.attr)
            if found is None:
                return U
            self.emit(method_pos(e), *found)
            return T
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
            self.emit((e.lineno, e.col_offset), *wb103.subscript())
            return T
        if base == O:
            return O  # one of torch's generators: torch.cuda.default_generators[i]
        if base in (P, U) and isinstance(e.value, ast.Name) and e.value.id in self.frame.elements \
                and positional(e.slice):
            return T  # one element of a list of tensors (picking it is Python work)
        return P if base in (P, S) else U

    def e_BinOp(self, e):
        raw = (self.expr(e.left), self.expr(e.right))
        kinds = tuple(flat(k) for k in raw)
        if T not in kinds and elementwise_mask(e) and not any(k in (P, S) for k in kinds):
            kinds = (T, T)  # `(i >= 0) & (i < n)`: comparisons joined by `&` are masks, Python joins bools with `and`
        if T in kinds and isinstance(e.op, (ast.Add, ast.Mult)) and any(isinstance(k, tuple) for k in raw):
            return U  # joining or repeating a list or tuple of tensors (`[t] * pad`): no tensor arithmetic
        if T in kinds:
            # an operation spanning lines sits on its operator's line: the right operand's (`a\n - b`)
            pos = (e.lineno, e.col_offset) if e.left.end_lineno == e.right.lineno else (e.right.lineno, 0)
            self.emit(pos, *wb107.operator(type(e.op).__name__))
            return T
        return join(*kinds)

    def e_UnaryOp(self, e):
        if isinstance(e.op, ast.Not):
            self.test(e.operand)
            return P
        kind = flat(self.expr(e.operand))
        if kind == T:
            self.emit((e.lineno, e.col_offset), *wb107.operator(type(e.op).__name__))
        return kind

    def e_Compare(self, e):
        kinds = [flat(self.expr(x)) for x in (e.left, *e.comparators)]
        if all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops):
            return P
        if T in kinds:
            self.emit((e.lineno, e.col_offset), *wb107.comparison())
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

    def e_Call(self, e):
        func = e.func
        if self.is_launch(e):
            if isinstance(func, ast.Subscript):
                self.expr(func.slice)
            self.args(e)
            return self.launch(e)
        if (site := self.dispatched(e)) is not None:
            return self.call_table(e, site)
        q = qualname(func, self.aliases)
        if torch_name(q) is None:
            q = self.imported_torch(func) or q
        if torch_name(q) is not None:
            return self.torch_call(e, torch_name(q))
        if q in tb.BIT_REINTERPRETERS:
            if any(is_tensor(k) for k in self.args(e)):
                self.emit((e.lineno, e.col_offset), *wb112.reinterpret_call(q))
                return T
            return U
        if q is not None and q.split(".")[0] == "triton" and q.endswith(tb.TRITON_METADATA_CALLS):
            self.args(e)  # TensorDescriptor.from_tensor(t, block): t's pointer, shape and strides
            return U
        if q is not None and q.split(".")[0] in tb.PYTHON_VALUE_MODULES:
            if any(is_tensor(k) for k in self.args(e)):  # triton.cdiv(lens, b) of a tensor is tensor arithmetic
                self.emit((e.lineno, e.col_offset), *wb107.value_function(q))
                return T
            return P
        if isinstance(func, ast.Attribute) and (module := self.torch_member(func)) is not None:
            kinds = [flat(k) for k in self.args(e)]
            self.emit(method_pos(func), *wb113.module_call(ast.unparse(func), module))
            return T if T in kinds else U
        if (found := self.instance_call(func)) is not None:
            if isinstance(func, ast.Call):
                self.args(func)  # Layer(c)(x): the constructor's arguments
            return self.call_helper(e, found[1], found[0])
        if isinstance(func, (ast.Name, ast.Attribute)) and (found := self.defined(func)) is not None:
            return self.call_helper(e, found[1], found[0])
        if isinstance(func, ast.Name) and func.id in ("map", "list", "tuple") and func.id not in self.env \
                and e.args and not e.keywords and not any(isinstance(a, ast.Starred) for a in e.args):
            return self.sequence(func.id, e.args)
        if isinstance(func, ast.Name):
            kinds = [flat(k) for k in self.args(e)]
            if func.id in tb.DATA_BUILTINS and T in kinds:
                self.emit((e.lineno, e.col_offset), *wb106.builtin(func.id))
                return P
            return P if func.id in tb.PY_BUILTINS else U
        if isinstance(func, ast.Attribute):
            return self.method_call(e, func)
        self.expr(func)
        self.args(e)
        return U

    def sequence(self, name: str, args):
        """``list(...)``/``tuple(...)`` of a tuple of known kinds keeps them (no data is read);
        ``map(f, xs)`` over tensors yields tensors (``a, b = list(map(to_half, (x, y)))``)."""
        if name == "map" and len(args) >= 2:
            self.expr(args[0])
            kinds = [self.expr(a) for a in args[1:]]
            first = kinds[0]
            if isinstance(first, tuple):
                return tuple(T if is_tensor(k) else U for k in first)
            return U
        kind = self.expr(args[0]) if len(args) == 1 else U
        if isinstance(kind, tuple):
            return kind
        if is_tensor(kind):
            self.emit((args[0].lineno, args[0].col_offset), *wb106.builtin(name))
            return P
        return P if is_python(kind) else U

    def defined(self, func):
        """(the module that defines it or None for this one, the function) for a call of a
        function of this file or of another audited module; None for anything else."""
        if isinstance(func, ast.Name):
            if func.id in self.env:
                return None
            if func.id in self.module.helpers:
                return None, self.module.helpers[func.id]
            if (bound := self.frame.imports.get(func.id)) is not None:
                return self.imported_here(lambda: self.tree.resolve(self.parsed, func.id, bound=bound))
            return self.imported(func.id, lambda: self.tree.resolve(self.parsed, func.id))
        base = func.value
        if (found := self.class_method(base, func.attr)) is not None:
            return found
        if isinstance(base, ast.Name) and base.id not in self.env and (bound := self.frame.imports.get(base.id)):
            return self.imported_here(lambda: self.tree.attribute(self.parsed, base.id, func.attr, bound=bound))
        if isinstance(base, ast.Name) and base.id not in self.env and base.id in self.module.imports:
            return self.imported(base.id, lambda: self.tree.attribute(self.parsed, base.id, func.attr))
        return None

    def class_method(self, base, attr: str):
        """(module or None for this one, method) for ``Cls.attr(...)`` on a class of this file or
        of the tree (``Scale.apply`` runs ``forward``), ``Cls(...).attr(...)`` and ``v.attr(...)``
        where ``v = Cls(...)``, or ``cls.attr``/``self.attr`` inside a method of a class defining
        ``attr``; None for anything else."""
        fn = self.frame.fn
        if isinstance(base, ast.Call):  # Launcher(block).run(x)
            owner, cls = self.class_named(base.func) or (None, None)
            found = classes.method(cls, attr) if cls is not None else None
            return (owner, found) if found is not None else None
        if not isinstance(base, ast.Name):
            return None
        first = (fn.args.posonlyargs + fn.args.args)[:1]
        if first and first[0].arg == base.id and (cls := classes.class_of(self.module, fn)) is not None:
            found = classes.method(cls, attr)
            return (None, found) if found is not None else None
        if base.id in self.frame.instances:  # launcher = Launcher(block); launcher.run(x)
            owner, cls = self.frame.instances[base.id]
            found = classes.method(cls, attr)
            return (owner, found) if found is not None else None
        owner, cls = self.class_named(base) or (None, None)
        if cls is None:
            return None
        found = classes.entry_method(cls, attr, owner.info if owner is not None else self.module)
        return (owner, found) if found is not None else None

    def torch_member(self, func: ast.Attribute) -> str | None:
        """The torch module ``self.bn`` stands for inside a method of a class that bound it
        (``self.bn = nn.BatchNorm1d(c)``), else None."""
        fn = self.frame.fn
        first = (fn.args.posonlyargs + fn.args.args)[:1]
        if not (isinstance(func.value, ast.Name) and first and first[0].arg == func.value.id):
            return None
        cls = classes.class_of(self.module, fn)
        return classes.torch_members(cls, self.module.aliases).get(func.attr) if cls is not None else None

    def instance_call(self, func):
        """(module or None, method) that calling an instance runs (``classes.call_method``):
        ``Layer(c)(x)``, ``layer(x)`` after ``layer = Layer(c)``, ``self.norm(x)`` where a method
        of the class bound ``self.norm = RMSNorm(c)``; None for anything else."""
        if isinstance(func, ast.Call):
            hit = self.class_named(func.func)
        elif isinstance(func, ast.Name) and func.id in self.frame.instances:
            hit = self.frame.instances[func.id]
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            fn = self.frame.fn
            first = (fn.args.posonlyargs + fn.args.args)[:1]
            cls = classes.class_of(self.module, fn) if first and first[0].arg == func.value.id else None
            name = classes.built_members(cls).get(func.attr) if cls is not None else None
            hit = self.class_named(ast.Name(name)) if name is not None else None
        else:
            return None
        if hit is None:
            return None
        found = classes.call_method(hit[1], hit[0].info if hit[0] is not None else self.module)
        return (hit[0], found) if found is not None else None

    def class_named(self, func):
        """(module or None for this one, class) for a bare name bound to a class of this file
        or imported from the tree (and not rebound in the function); else None."""
        if not isinstance(func, ast.Name) or func.id in self.env:
            return None
        if (cls := classes.top_class(self.module, func.id)) is not None:
            return None, cls
        if self.tree is None or self.parsed is None:
            return None
        if func.id in self.frame.imports or func.id in self.module.imports:
            return classes.imported_class(self.tree, self.parsed, func.id, self.frame.imports.get(func.id))
        return None

    def note_torch_alias(self, s: ast.Assign) -> None:
        """``aten = torch.ops.aten`` (or ``relu = torch.relu``) in a body: a call through the name
        is torch's; rebinding the name to anything else ends that."""
        q = qualname(s.value, self.aliases) if isinstance(s.value, (ast.Name, ast.Attribute)) else None
        for target in s.targets:
            if not isinstance(target, ast.Name):
                continue
            if torch_name(q) is not None:
                self.aliases[target.id] = q
                self.frame.torch_aliases.add(target.id)
            elif target.id in self.frame.torch_aliases:
                self.frame.torch_aliases.discard(target.id)
                self.aliases.pop(target.id, None)

    def note_instances(self, s: ast.Assign) -> None:
        """``v = Cls(...)`` binds ``v`` to an instance of a class the walk can read; binding ``v``
        to anything else forgets it (read the same on every path)."""
        made = self.class_named(s.value.func) if isinstance(s.value, ast.Call) else None
        for target in s.targets:
            if isinstance(target, ast.Name):
                if made is not None:
                    self.frame.instances[target.id] = made
                else:
                    self.frame.instances.pop(target.id, None)

    def imported_torch(self, func) -> str | None:
        """The torch name a call's name stands for when another module of the tree binds it to
        a torch attribute (unsloth's ``torch_gpu_device = torch.cuda.device``), else None."""
        if self.tree is None or self.parsed is None or not isinstance(func, (ast.Name, ast.Attribute)):
            return None
        if isinstance(func, ast.Name):
            bound = self.frame.imports.get(func.id) or self.module.imports.get(func.id)
            entry = self.tree.resolve(self.parsed, func.id, bound=bound) if bound and func.id not in self.env else None
        else:
            base = func.value
            bound = isinstance(base, ast.Name) and base.id not in self.env \
                and (self.frame.imports.get(base.id) or self.module.imports.get(base.id))
            entry = self.tree.attribute(self.parsed, base.id, func.attr, bound=bound) if bound else None
        return entry[2] if entry is not None and entry[0] == "torch" else None

    def imported_here(self, resolve):
        """A function reached through an import made in the function's own body, or None."""
        if self.tree is None or self.parsed is None:
            return None
        entry = resolve()
        return (entry[1], entry[2]) if entry is not None and entry[0] == "function" else None

    def imported(self, local: str, resolve):
        bound = self.module.imports.get(local)
        if bound is None and self.module.star_imports and not hasattr(builtins, local):  # defined nowhere in sight
            self.starred.add((self.parsed.path if self.parsed is not None else None, self.module.star_imports[0]))
        if bound is None or self.tree is None or self.parsed is None:
            return None
        entry = resolve()
        if entry is not None and entry[0] == "function":
            return entry[1], entry[2]
        if entry is None and not bound[0] and bound[1] and bound[1].split(".")[0] not in tb.KNOWN_LIBRARIES:
            self.opaque.add(bound[1])
        return None

    def decorator(self, dec) -> None:
        """A decorator of the tree runs around every call of the wrapper: walk the function
        it wraps the call in (``def wrapper(*args, **kwargs)``) as host code of this wrapper."""
        target = dec.func if isinstance(dec, ast.Call) else dec
        if not isinstance(target, (ast.Name, ast.Attribute)) or (found := self.defined(target)) is None:
            return
        owner, found_factory = found
        for factory in self.definitions(found_factory, owner):
            inner = around_call(factory)
            if inner is None or self.on_stack(inner, owner) or len(self.frames) > MAX_HELPER_DEPTH:
                continue
            saved = (self.env, self.counts, self.loop_depth)
            self.walk(inner, {}, owner, (dec.lineno, dec.col_offset), name=target.id if isinstance(target, ast.Name)
                      else target.attr, kind="decorator")
            self.env, self.counts, self.loop_depth = saved

    def on_stack(self, fn, owner) -> Frame | None:
        """The frame walking ``fn`` already, if any. By file and position: a module reached
        through an import cycle may be a second parse of a file on the stack."""
        where = owner.path if owner is not None else (self.parsed.path if self.parsed is not None else None)
        return next((f for f in self.frames
                     if f.fn is fn or (f.fn.lineno, f.fn.name, f.path or self.home) == (fn.lineno, fn.name, where)), None)

    def call_helper(self, call, fn, owner=None):
        if (walking := self.on_stack(fn, owner)) is not None or len(self.frames) > MAX_HELPER_DEPTH \
                or self.helper_walks >= MAX_HELPER_WALKS:
            self.args(call)
            why = ("a call back into a function being walked" if walking is not None else
                   f"more than {MAX_HELPER_DEPTH} helpers deep" if len(self.frames) > MAX_HELPER_DEPTH else
                   f"over {MAX_HELPER_WALKS} helper walks")
            self.unfollowed.add((self.parsed.path if self.parsed is not None else None, call.lineno, fn.name, why))
            if walking is None:  # what the call would launch is not known: no path is told it launched nothing
                self.counts = frozenset(BLAMED_ZERO if c == 0 else c for c in self.counts)
            if walking is not None and walking.launches:  # a recursive call launches the kernel again
                self.relaunch(call)
            return U
        self.helper_walks += 1
        given = {}
        params = [p.arg for p in fn.args.posonlyargs + fn.args.args]
        if params and (params[0] in ("self", "cls") or bound_first(call, fn)):
            params = params[1:]
        for i, a in enumerate(call.args):
            kind = self.launching_callable(a, self.expr(a))
            if i < len(params) and not isinstance(a, ast.Starred):
                given[params[i]] = kind
        for kw in call.keywords:
            kind = self.launching_callable(kw.value, self.expr(kw.value))
            if kw.arg:
                given[kw.arg] = kind
        saved = (self.env, self.loop_depth)
        counts0, ends, counts = self.counts, [], []
        variants = self.definitions(fn, owner)
        self.helper_walks += len(variants) - 1
        for variant in variants:  # one of them runs, as one branch of an `if` would
            self.counts = counts0
            frame = self.walk(variant, given, owner, (call.lineno, call.col_offset))
            ends += frame.returns + ([P] if self.counts else [])
            counts.append(frame.return_counts | self.counts)
        self.counts = frozenset().union(*counts)
        self.env, self.loop_depth = saved
        return join(*ends) if ends else U

    def launching_callable(self, arg, kind):
        """The kind a helper's parameter takes from ``arg``: a kernel (``K``) when ``arg`` is a
        function that launches (a closure of this function, a helper of its file) or a lambda
        whose body launches, so that the helper calling it (``profiler_wrapper(fn)``:
        ``fn(*args)`` in a loop) launches there; else ``kind``."""
        if kind != U:
            return kind
        if isinstance(arg, ast.Lambda):
            launches = any(isinstance(n, ast.Call) and launch_target(n, self.frame.known) for n in walk_nodes(arg.body))
            return K if launches else kind
        if isinstance(arg, ast.Name) and arg.id not in self.env:
            fn = self.frame.local_defs.get(arg.id) or self.module.helpers.get(arg.id)
            return K if fn is not None and self.module.launches(fn) else kind
        return kind

    def definitions(self, fn, owner) -> tuple:
        """Every def a call of ``fn``'s name may run: ``fn`` alone, or its def on each branch of
        a module-level ``if`` (``ModuleInfo.variants``)."""
        info = owner.info if owner is not None else self.module
        variants = info.variants.get(fn.name, ())
        return variants if fn in variants else (fn,)

    def walk(self, fn, given: dict, owner, called_at, name: str | None = None, kind: str = "helper") -> Frame:
        """Walk ``fn`` as a frame above the current one; ``owner`` (a module of the tree) when
        it is defined in another file, whose names then resolve as that file's."""
        saved = (self.module, self.parsed, self.aliases)
        if owner is not None:
            self.module, self.parsed = owner.info, owner
        self.aliases = dict(self.module.aliases) if owner is not None else dict(saved[2])
        self.env = self.enter(fn, given, called_at=called_at)
        frame = self.frame
        frame.kind, frame.name = kind, name or frame.name
        if self.parsed is not None and self.parsed.path != self.home:
            frame.path = self.parsed.path
        self.block(fn.body)
        self.scratch(frame)
        self.pop()
        self.module, self.parsed, self.aliases = saved
        return frame


def elementwise_mask(e: ast.BinOp) -> bool:
    """Both operands comparisons (or such masks) joined by ``&``, ``|`` or ``^``."""
    def mask(side):
        return isinstance(side, ast.Compare) and not all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn))
                                                          for op in side.ops) \
            or isinstance(side, ast.BinOp) and elementwise_mask(side)
    return isinstance(e.op, (ast.BitAnd, ast.BitOr, ast.BitXor)) and mask(e.left) and mask(e.right)


def bound_first(call, fn) -> bool:
    """Whether the call fills ``fn``'s first parameter itself: torch's ``ctx`` when
    ``Cls.apply(...)`` runs ``forward``, the class of a ``@classmethod`` whatever its name."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "apply" and fn.name == "forward":
        return True
    return any(isinstance(d, ast.Name) and d.id == "classmethod" for d in fn.decorator_list)


def outputs(frame: Frame) -> set[str]:
    """The names a function's returns are made from, directly or through assignments."""
    seen, todo = set(), list(frame.returned)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(frame.flows.get(name, ()))
    return seen


def around_call(factory) -> ast.FunctionDef | None:
    """The function a decorator runs in place of the one it decorates: the first function
    taking ``*args`` or ``**kwargs`` in the decorator (itself, or nested up to three deep,
    as in a decorator factory)."""
    level = [factory]
    for _ in range(4):
        for fn in level:
            if fn.args.vararg is not None or fn.args.kwarg is not None:
                return fn
        level = [n for fn in level for n in fn.body if isinstance(n, FUNCTION_DEFS)]
    return None
