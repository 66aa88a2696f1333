"""What one file defines: its import aliases, its kernels, its functions, which of them
launch a kernel (directly or through a helper of the same file), and so its wrappers.

A kernel is a function whose decorator resolves to a kernel framework's ``jit`` (classic
PyPTO ``pypto.frontend.jit``, PyPTO-Pro ``pl.jit(...)`` under any import spelling, Triton's
``jit`` under ``autotune``/``heuristics``); a launch is a call of a kernel or ``--launcher``
name, or any call of the form ``name[grid](...)``, whatever ``name`` is bound to, but for a
dispatch table of functions or a torch module container (``dispatch``). Kernel bodies are
device code and never audited as host code.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase, translate
from itertools import accumulate

from kb_tools.audit.dispatch import Tables
from kb_tools.audit.names import bind_import, dotted, qualname, record_import
from kb_tools.audit.node_index import NodeIndex
from kb_tools.audit.tables import DRIVER_NAMES, JIT_DECORATORS
from kb_tools.syntax import BLOCKS, child_nodes, child_statements, fields_of, walk_nodes

FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_DEF_TYPES = frozenset(FUNCTION_DEFS)
_CALL, _ASSIGN, _LAMBDA, _CLASS = ast.Call, ast.Assign, ast.Lambda, ast.ClassDef
DEFAULT_WRAPPER_GLOB = "*_wrapper"
is_wrapper_name = re.compile(translate(DEFAULT_WRAPPER_GLOB)).match  # fnmatchcase, compiled once


def jit_flavour(fn, aliases: dict[str, str]) -> str | None:
    """"pl" for a PyPTO(-Pro) ``language.jit`` kernel, "pypto" for classic PyPTO's
    ``frontend.jit``, "triton" for Triton's, else None. Unimported spellings (``pl.jit`` in a
    snippet under review) count too. Stacked decorators (autotune over jit) are all read."""
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        name = qualname(target, aliases) or ".".join(dotted(target) or [])
        flavour = JIT_DECORATORS.get(name)
        if flavour:
            return flavour
    return None


# torch.library.wrap_triton(kernel) (torch 2.6 on; capture_triton before) hands back the kernel, made
# traceable by torch.compile: ``wrap_triton(kernel)[grid](...)`` launches ``kernel``.
KERNEL_WRAPPERS = ("wrap_triton", "capture_triton")


def launch_target(call: ast.Call, launchers: set[str], tables: Tables | None = None, fn=None) -> str | None:
    """The kernel a call launches: ``anything[grid](...)`` (``wrap_triton(anything)[grid](...)``
    too), or a call of a launcher name. With the module's ``tables`` (``fn``: the function
    holding the call), a call through a dispatch table launches only as ``dispatch.Site`` says."""
    func = call.func
    if tables is not None and (site := tables.site(call, fn)) is not None:
        return site.launch(launchers)
    if not isinstance(func, ast.Subscript):
        value = None
    elif isinstance(func.value, ast.Call) and (dotted(func.value.func) or [""])[-1] in KERNEL_WRAPPERS \
            and len(func.value.args) == 1 and not func.value.keywords:
        value = func.value.args[0]
    else:
        value = func.value
    if isinstance(value, (ast.Name, ast.Attribute)):
        return ".".join(dotted(value) or ["<kernel>"])
    parts = dotted(func)
    if parts and len(parts) <= 2 and parts[-1] in launchers:  # kern(...), self.kern(...), mod.kern(...)
        return ".".join(parts)
    return None


@dataclass
class FunctionInfo:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    top: bool  # defined at module level (callable from another function by bare name)
    closure: bool = False  # defined inside another function
    conditional: bool = False  # a module-level def inside an ``if``/``try``/``with`` block
    direct_launch: bool = False
    calls: set[str] = field(default_factory=set)  # bare names of same-file functions it calls
    local_kernels: set[str] = field(default_factory=set)  # kernels defined or bound inside it
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict)  # a local name bound to one of several kernels

    @property
    def name(self) -> str:
        return self.node.name


def _as_list(value) -> list:
    """A field's nodes: a list as it is, one node as a list of it, nothing as none."""
    return value if value.__class__ is list else [] if value is None else [value]


def _gathered(fn, aliases: dict[str, str], index: NodeIndex | None) -> tuple[list, set[str], list]:
    """(the calls ``fn`` makes itself, the kernels it defines, its assignments outside kernels
    it defines). A function with no def, lambda or class inside it is read off the index (the
    walk the audit of its body and the kernel rules share): all its body's calls are its own.
    What the caller makes of the three depends on none's order."""
    if index is not None:
        scopes = [n for cls in (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef) for n in index.of(cls, fn)]
        if scopes == [fn]:
            outside = {id(n) for name in fields_of(fn) if name != "body"  # decorators, arguments, returns
                       for part in _as_list(getattr(fn, name, None)) for n in walk_nodes(part)}
            calls = [c for c in index.of(_CALL, fn) if id(c) not in outside] if outside else list(index.of(_CALL, fn))
            return calls, set(), list(index.of(_ASSIGN, fn))
    calls, local, bound = [], set(), []
    own, nested = list(fn.body), []  # nodes whose calls are fn's own; nodes inside a nested scope
    while own:
        node = own.pop()
        cls = node.__class__
        if cls is _CALL:
            calls.append(node)
        elif cls is _ASSIGN:
            bound.append(node)
        elif cls in _DEF_TYPES:
            if jit_flavour(node, aliases):
                local.add(node.name)
            else:
                nested.extend(child_nodes(node))
            continue
        elif cls is _LAMBDA or cls is _CLASS:
            nested.extend(child_nodes(node))
            continue
        own.extend(child_nodes(node))
    while nested:
        node = nested.pop()
        cls = node.__class__
        if cls in _DEF_TYPES and jit_flavour(node, aliases):
            local.add(node.name)
            continue
        if cls is _ASSIGN:
            bound.append(node)
        nested.extend(child_nodes(node))
    return calls, local, bound


def _host_calls(fn, launchers: set[str], aliases: dict[str, str], index: NodeIndex | None = None,
                tables: Tables | None = None) -> tuple[bool, set[str], set[str], dict]:
    """(launches directly, bare names called, local kernels, the local names bound to one of
    several kernels) in one pass over ``fn``.

    Local kernels are ``@jit`` functions defined inside ``fn`` and names bound to a kernel
    (``kernel = a_kernel if fp32 else b_kernel``, or ``kernel = a_kernel`` and ``kernel = b_kernel`` on two
    branches: a choice among them). Calls inside lambdas and nested
    functions are not the function's own: ``do_bench(lambda: op(x))`` launches nothing."""
    calls, local, bound = _gathered(fn, aliases, index)
    known = launchers | local
    # a name launched as `name[grid](...)` is a kernel, and so is each plain name bound to it (imported kernels too)
    subscripted = {c.func.value.id for c in calls if isinstance(c.func, ast.Subscript) and isinstance(c.func.value, ast.Name)}
    picked: dict[str, set[str]] = {}  # a name bound to kernels, by one assignment or on several branches
    for node in bound:
        kernels = {n.id for n in walk_nodes(node.value) if isinstance(n, ast.Name) and n.id in known}
        if any(isinstance(t, ast.Name) and t.id in subscripted for t in node.targets):
            kernels |= set(_plain_names(node.value))
        if kernels:
            targets = [t.id for t in node.targets if isinstance(t, ast.Name)]
            local.update(targets)
            for t in targets:
                picked.setdefault(t, set()).update(kernels)
    choices = {t: tuple(sorted(kernels)) for t, kernels in picked.items() if len(kernels) > 1}
    known = launchers | local
    launches = any(launch_target(c, known, tables, fn) for c in calls)
    names = {c.func.id for c in calls if isinstance(c.func, ast.Name)}
    if tables is not None and tables.by_name:  # a call through a table calls each function it holds
        names |= {m for c in calls if (site := tables.site(c, fn)) is not None and not site.grid
                  for m in site.table.member_names()}
    return launches, names, local, choices


def _plain_names(value) -> list[str]:
    """The names a value picks among: itself, or each branch of a choice (``a if c else b``)."""
    if isinstance(value, ast.Name):
        return [value.id]
    if isinstance(value, ast.IfExp):
        return _plain_names(value.body) + _plain_names(value.orelse)
    return []


def _torch_module(value, aliases: dict[str, str]) -> str | None:
    """``torch.npu`` or ``getattr(torch, name)`` bound at module level: the torch module it names."""
    if isinstance(value, ast.Attribute):
        q = qualname(value, aliases) or ""
        return q if q.startswith(("torch.", "torch_npu.")) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr" and value.args:
        q = qualname(value.args[0], aliases) or ""
        return "torch.device_module" if q in ("torch", "torch_npu") else None
    return None


def _returns_kernel(fn, launchers: set[str], aliases: dict[str, str]) -> bool:
    """Does ``fn`` return a kernel: a known one, a ``@jit`` function it defines, or ``jit(...)``?
    Only its statements are read (returns and defs), never its expressions."""
    local, returned = set(), []
    todo = list(fn.body)
    while todo:
        node = todo.pop()
        cls = node.__class__
        if cls in _DEF_TYPES and jit_flavour(node, aliases):
            local.add(node.name)
        elif cls is ast.Return and node.value is not None:
            returned.append(node.value)
        todo.extend(child_statements(node, BLOCKS))
    return any(isinstance(v, ast.Name) and v.id in launchers | local
               or isinstance(v, ast.Call) and (qualname(v.func, aliases) or "").endswith(".jit") for v in returned)


def _variants(top: list[FunctionInfo]) -> dict[str, tuple]:
    """The module-level definitions of each name that a call of it may run, where there is more
    than one: a def on each branch of a module-level ``if`` (``if new_torch: def ctx(): ...
    else: def ctx(): ...``). A def that a later unconditional def of the name replaces is not one."""
    by_name: dict[str, list[FunctionInfo]] = {}
    for f in top:
        if not f.conditional:
            by_name[f.name] = []  # replaces every earlier binding of the name
        by_name.setdefault(f.name, []).append(f)
    return {name: tuple(f.node for f in defs) for name, defs in by_name.items() if len(defs) > 1}


class Segments:
    """The source text of a function, sliced by its line range, for cheap substring tests."""

    def __init__(self, text: str):
        self.text = text
        self.starts = [0, *accumulate(map(len, text.splitlines(keepends=True)))]

    def of(self, fn) -> str:
        last = min(fn.end_lineno or fn.lineno, len(self.starts) - 1)
        return self.text[self.starts[fn.lineno - 1]:self.starts[last]]


class ModuleInfo:
    """Given the source ``text``, a function whose text names no kernel, launcher, ``jit``
    or ``](`` (nor a launching function of the file) is not walked: it cannot launch, and a
    large file with no wrapper costs little beyond ``ast.parse``."""

    def __init__(self, tree: ast.Module, wrapper_patterns=(), launchers=(), text: str | None = None):
        self.aliases: dict[str, str] = {}
        self.imports: dict[str, tuple[int, str | None, str | None]] = {}  # local name -> (level, module, attr)
        self.star_imports: list[int] = []  # lines of ``from m import *``: names that cannot be followed
        self.kernels: dict[str, tuple[ast.FunctionDef, str]] = {}
        self.functions: list[FunctionInfo] = []
        self.index = NodeIndex(tree)  # the module's and its functions' nodes, walked once, when first asked
        self.class_tables = None  # its top-level classes and their methods (``classes``), when first asked
        self.text = text  # the source, when given: a rule may look for a name in it before walking
        self.tables = Tables.of(self.index, self.aliases)  # dispatch tables: calls through them call their values
        self._scan(tree.body, top=True)
        self.launchers = set(self.kernels) | set(launchers)
        # ``factory(n)(...)``: a function that returns a kernel; calling it is where the launch is read.
        # Only a file that defines or names a kernel can hold one (a cheap test on its text first).
        if self.launchers or text is None or "jit" in text:
            self.launchers |= {f.name for f in self.functions
                               if f.top and _returns_kernel(f.node, self.launchers, self.aliases)}
        self.helpers = {f.name: f.node for f in self.functions if f.top}
        self.variants = _variants([f for f in self.functions if f.top])
        self.info = {id(f.node): f for f in self.functions}
        self.evidence: dict[int, set[str]] = {}  # per function: names it uses as tensors (a cache)
        self.elements: dict[int, set[str]] = {}  # per function: names whose elements it uses as tensors (a cache)
        self._walk_launchers(text)
        self.patterns = tuple(wrapper_patterns)  # wrappers chosen by name: none is added by what it reaches
        self.wrappers = self._wrappers(list(wrapper_patterns))

    def _walk_launchers(self, text: str | None) -> None:
        """Walk the functions that may launch, then those that may call one that does. Each
        round looks only for the names found launching in the round before (a function that
        mentioned an older one was walked then), and what launches grows from what the round
        walked: a chain of n helpers costs work in proportion to n, not n squared or cubed.
        A text that holds none of the first round's cues launches nothing: no function of it
        is sliced or walked."""
        self.launching: set[int] = set()  # nothing walked yet: nothing launches
        cues = ("](", "jit", *self.launchers, *self.tables.cues)
        if text is not None and not any(w in text for w in cues):
            return
        segments = Segments(text) if text is not None else None
        texts: dict[int, str] = {}

        def text_of(f) -> str:
            if id(f) not in texts:
                texts[id(f)] = segments.of(f.node)
            return texts[id(f)]

        pending = {id(f): f for f in self.functions}  # unwalked, in order; a round removes only what it walked
        by_name = {f.name: f for f in self.functions if f.top}
        # what a call of a top-level name may run: its last def, or its def on each branch of an `if`
        runs = {name: self.variants.get(name, (f.node,)) for name, f in by_name.items()}
        named = {id(node) for nodes in runs.values() for node in nodes}
        callers: dict[str, list] = {}
        by_word: dict[str, list] | None = None  # after the first round: the words of each unwalked function
        while True:
            if segments is None:
                walk = list(pending.values())
            elif by_word is None:
                walk = [f for f in pending.values() if any(w in text_of(f) for w in cues)]
            else:  # later cues are function names: looked up, not searched for in every text
                walk = list({id(f): f for c in cues for f in by_word.get(c, ()) if id(f) in pending}.values())
            if not walk:
                break
            for f in walk:
                f.direct_launch, f.calls, f.local_kernels, f.choices = _host_calls(f.node, self.launchers, self.aliases,
                                                                                   self.index, self.tables)
                for called in f.calls:
                    callers.setdefault(called, []).append(f)
            for f in walk:
                del pending[id(f)]
            new = self._spread([f for f in walk if f.direct_launch or any(
                id(node) in self.launching for c in f.calls for node in runs.get(c, ()))], named, callers)
            cues = tuple(f.name for f in new if id(f.node) in named)
            if not cues:  # nothing new to look for: no further function can launch
                break
            if by_word is None and segments is not None:
                by_word = {}
                for f in pending.values():
                    for word in set(re.findall(r"\w+", text_of(f))):
                        by_word.setdefault(word, []).append(f)

    def _spread(self, seeds: list, named: set[int], callers: dict) -> list:
        """Mark ``seeds`` launching, then every function that calls a launching top-level
        function by name (same-file helpers; ``named``: the ids of the defs a call by name may
        run), each once; returns those newly marked."""
        new = []
        reached = [f for f in seeds if id(f.node) not in self.launching]
        self.launching.update(id(f.node) for f in reached)
        while reached:
            f = reached.pop()
            new.append(f)
            if id(f.node) not in named:  # only a top-level function is called by its name
                continue
            for caller in callers.get(f.name, ()):
                if id(caller.node) not in self.launching:
                    self.launching.add(id(caller.node))
                    reached.append(caller)
        return new

    @property
    def pl_kernels(self) -> list[ast.FunctionDef]:
        return [fn for fn, flavour in self.kernels.values() if flavour == "pl"]

    def _scan(self, body, top: bool, conditional: bool = False) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                bind_import(node, self.aliases)
                if top and not record_import(node, self.imports):
                    self.star_imports.append(node.lineno)
            elif isinstance(node, FUNCTION_DEFS):
                flavour = jit_flavour(node, self.aliases)
                if flavour:
                    self.kernels[node.name] = (node, flavour)
                else:
                    self.functions.append(FunctionInfo(node, top, conditional=conditional))
                    self._scan_nested(node)
            elif isinstance(node, ast.ClassDef):
                self._scan(node.body, top=False)
            elif top and isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                module = _torch_module(node.value, self.aliases)
                if module:  # device_lib = getattr(torch, device); npu = torch.npu: a torch module by another name
                    self.aliases[node.targets[0].id] = module
            elif isinstance(node, (ast.If, ast.Try, ast.TryStar, ast.With)):
                branch = conditional or not isinstance(node, ast.With)  # a with block's body always runs
                for part in ("body", "orelse", "finalbody"):
                    self._scan(getattr(node, part, []), top, branch)
                for handler in getattr(node, "handlers", []):
                    self._scan(handler.body, top, branch)

    def _scan_nested(self, fn) -> None:
        """Host functions defined inside ``fn`` (a closure that launches is a wrapper too);
        never a helper by name, and a nested ``@jit`` kernel stays ``fn``'s local kernel."""
        todo = list(fn.body)
        while todo:
            node = todo.pop()
            if isinstance(node, FUNCTION_DEFS):
                if not jit_flavour(node, self.aliases):
                    self.functions.append(FunctionInfo(node, False, closure=True))
                    todo.extend(node.body)
            elif isinstance(node, ast.stmt) and not isinstance(node, ast.ClassDef):
                todo.extend(child_statements(node))

    def launches(self, fn) -> bool:
        return id(fn) in self.launching

    def local_kernels(self, fn) -> set[str]:
        info = self.info.get(id(fn))
        return info.local_kernels if info else set()

    def choices(self, fn) -> dict[str, tuple[str, ...]]:
        info = self.info.get(id(fn))
        return info.choices if info else {}

    def _wrappers(self, patterns: list[str]) -> list[ast.FunctionDef]:
        """With patterns: the functions they name. Without: every function that launches
        (test drivers and ``main`` are harness, not delivery), plus every ``*_wrapper``."""
        chosen = []
        for f in self.functions:
            if patterns:
                if any(fnmatchcase(f.name, p) for p in patterns):
                    chosen.append(f.node)
            elif f.closure and not self.launchers:
                continue  # a closure is a wrapper only where a kernel is defined or named: m[i](x) of a ModuleList is not
            elif is_wrapper_name(f.name) or (
                    self.launches(f.node) and not any(fnmatchcase(f.name, d) for d in DRIVER_NAMES)):
                chosen.append(f.node)
        return chosen
