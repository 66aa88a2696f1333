"""What one file defines: its import aliases, its kernels, its functions, which of them
launch a kernel (directly or through a helper of the same file), and so its wrappers.

A kernel is a function whose decorator resolves to a kernel framework's ``jit`` (classic
PyPTO ``pypto.frontend.jit``, PyPTO-Pro ``pl.jit(...)`` under any import spelling, Triton's
``jit`` under ``autotune``/``heuristics``); a launch is a call of a kernel or ``--launcher``
name, or any call of the form ``name[grid](...)``, whatever ``name`` is bound to. Kernel
bodies are device code and never audited as host code.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from kb_tools.audit.names import bind_import, dotted, qualname
from kb_tools.audit.tables import DRIVER_NAMES, JIT_DECORATORS

FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
DEFAULT_WRAPPER_GLOB = "*_wrapper"


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


def launch_target(call: ast.Call, launchers: set[str]) -> str | None:
    """The kernel a call launches: ``anything[grid](...)``, or a call of a launcher name."""
    func = call.func
    if isinstance(func, ast.Subscript) and isinstance(func.value, (ast.Name, ast.Attribute)):
        return ".".join(dotted(func.value) or ["<kernel>"])
    parts = dotted(func)
    if parts and len(parts) <= 2 and parts[-1] in launchers:  # kern(...), self.kern(...), mod.kern(...)
        return ".".join(parts)
    return None


@dataclass
class FunctionInfo:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    top: bool  # defined at module level (callable from another function by bare name)
    direct_launch: bool = False
    calls: set[str] = field(default_factory=set)  # bare names of same-file functions it calls

    @property
    def name(self) -> str:
        return self.node.name


def kernel_aliases(fn, launchers: set[str], aliases: dict[str, str]) -> set[str]:
    """Local kernels: ``@jit`` functions defined inside ``fn``, and names bound to a kernel
    (``kernel = a_kernel if fp32 else b_kernel``)."""
    found = {n.name for n in ast.walk(fn) if n is not fn and isinstance(n, FUNCTION_DEFS) and jit_flavour(n, aliases)}
    launchers = launchers | found
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and any(isinstance(n, ast.Name) and n.id in launchers for n in ast.walk(node.value)):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return found


def _host_calls(fn, launchers: set[str], aliases: dict[str, str]) -> tuple[bool, set[str]]:
    """(launches directly, bare names called), outside lambdas and nested functions: a
    launch inside a callback (``do_bench(lambda: op(x))``) is not the function's own."""
    launches, names = False, set()
    launchers = launchers | kernel_aliases(fn, launchers, aliases)
    stack = list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Lambda, *FUNCTION_DEFS, ast.ClassDef)):
            continue
        if isinstance(node, ast.Call):
            if launch_target(node, launchers):
                launches = True
            elif isinstance(node.func, ast.Name):
                names.add(node.func.id)
        stack.extend(ast.iter_child_nodes(node))
    return launches, names


class ModuleInfo:
    def __init__(self, tree: ast.Module, wrapper_patterns=(), launchers=()):
        self.aliases: dict[str, str] = {}
        self.kernels: dict[str, tuple[ast.FunctionDef, str]] = {}
        self.functions: list[FunctionInfo] = []
        self._scan(tree.body, top=True)
        self.launchers = set(self.kernels) | set(launchers)
        self.helpers = {f.name: f.node for f in self.functions if f.top}
        for f in self.functions:
            f.direct_launch, f.calls = _host_calls(f.node, self.launchers, self.aliases)
        self.launching = self._launching()
        self.wrappers = self._wrappers(list(wrapper_patterns))

    @property
    def pl_kernels(self) -> list[ast.FunctionDef]:
        return [fn for fn, flavour in self.kernels.values() if flavour == "pl"]

    def _scan(self, body, top: bool) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                bind_import(node, self.aliases)
            elif isinstance(node, FUNCTION_DEFS):
                flavour = jit_flavour(node, self.aliases)
                if flavour:
                    self.kernels[node.name] = (node, flavour)
                else:
                    self.functions.append(FunctionInfo(node, top))
            elif isinstance(node, ast.ClassDef):
                self._scan(node.body, top=False)
            elif isinstance(node, (ast.If, ast.Try, ast.TryStar, ast.With)):
                for part in ("body", "orelse", "finalbody"):
                    self._scan(getattr(node, part, []), top)
                for handler in getattr(node, "handlers", []):
                    self._scan(handler.body, top)

    def _launching(self) -> set[str]:
        """Names of functions that launch directly or through same-file helpers (fixed point)."""
        by_name = {f.name: f for f in self.functions if f.top}
        launching = {id(f.node) for f in self.functions if f.direct_launch}
        changed = True
        while changed:
            changed = False
            for f in self.functions:
                if id(f.node) in launching:
                    continue
                if any(c in by_name and id(by_name[c].node) in launching for c in f.calls):
                    launching.add(id(f.node))
                    changed = True
        return launching

    def launches(self, fn) -> bool:
        return id(fn) in self.launching

    def _wrappers(self, patterns: list[str]) -> list[ast.FunctionDef]:
        """With patterns: the functions they name. Without: every function that launches
        (test drivers and ``main`` are harness, not delivery), plus every ``*_wrapper``."""
        chosen = []
        for f in self.functions:
            if patterns:
                if any(fnmatchcase(f.name, p) for p in patterns):
                    chosen.append(f.node)
            elif fnmatchcase(f.name, DEFAULT_WRAPPER_GLOB) or (
                    self.launches(f.node) and not any(fnmatchcase(f.name, d) for d in DRIVER_NAMES)):
                chosen.append(f.node)
        return chosen
