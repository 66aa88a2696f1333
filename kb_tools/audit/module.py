"""What one file defines: its import aliases, its kernels, its helpers and its wrappers.

Only the module body (and class bodies, and ``if``/``try`` blocks at module level) is
scanned, so a large file with no wrapper costs little beyond ``ast.parse``.
"""

from __future__ import annotations

import ast
from fnmatch import fnmatchcase

from kb_tools.audit.names import bind_import, dotted, qualname
from kb_tools.audit.tables import JIT_DECORATORS

FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def jit_flavour(fn, aliases: dict[str, str]) -> str | None:
    """"pl" for @pl.jit / @pl.jit(auto_mutex=True), "triton" for @triton.jit, else None.
    ``pl.jit`` counts even when the file never imports ``pl`` (a snippet under review)."""
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        q = qualname(target, aliases)
        if q in JIT_DECORATORS:
            return "pl" if q.startswith("pypto_pro") else "triton"
        if q is None and dotted(target) in (["pl", "jit"], ["triton", "jit"]):
            return dotted(target)[0]
    return None


class ModuleInfo:
    def __init__(self, tree: ast.Module, wrapper_pattern: str = "*_wrapper", launchers=()):
        self.aliases: dict[str, str] = {}
        self.helpers: dict[str, ast.FunctionDef] = {}
        self.kernels: dict[str, tuple[ast.FunctionDef, str]] = {}
        self.wrappers: list[ast.FunctionDef] = []
        self._scan(tree.body, wrapper_pattern, top=True)
        self.launchers = set(self.kernels) | set(launchers)
        for name in self.launchers:
            self.helpers.pop(name, None)

    @property
    def pl_kernels(self) -> list[ast.FunctionDef]:
        return [fn for fn, flavour in self.kernels.values() if flavour == "pl"]

    def _scan(self, body, pattern: str, top: bool) -> None:
        for node in body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                bind_import(node, self.aliases)
            elif isinstance(node, FUNCTION_DEFS):
                flavour = jit_flavour(node, self.aliases)
                if flavour:
                    self.kernels[node.name] = (node, flavour)
                    continue
                if fnmatchcase(node.name, pattern):
                    self.wrappers.append(node)
                elif top:
                    self.helpers[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self._scan(node.body, pattern, top=False)
            elif isinstance(node, (ast.If, ast.Try, ast.TryStar, ast.With)):
                for part in ("body", "orelse", "finalbody"):
                    self._scan(getattr(node, part, []), pattern, top)
                for handler in getattr(node, "handlers", []):
                    self._scan(handler.body, pattern, top)
