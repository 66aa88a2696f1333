"""The audited files as one tree of modules: which dotted name each file answers to, and what a
name a module imports from another audited module stands for (a function, a module).

A file's dotted name comes from its package chain (the folders above it that hold an
``__init__.py``) and from its path under each folder given on the command line, so that
``from pkg.utils import guard`` and ``from ..utils import guard`` find ``pkg/utils.py``.
Modules are parsed on first use and kept in a bounded cache; a module that cannot be read
or parsed resolves nothing. Chains of re-exports are followed a few steps, and a cycle
between modules ends the chain (``MAX_REEXPORTS``): bounded time whatever the imports do.
"""

from __future__ import annotations

import ast
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from kb_tools.audit.module import ModuleInfo
from kb_tools.audit.roles import _stem
from kb_tools.diagnostics import KbError

MAX_REEXPORTS = 4  # ``from .a import f`` in a package's __init__, re-exported again, ...
MAX_CACHED = 64  # parsed import targets kept at once (each holds its tree)


@dataclass
class Parsed:
    """One audited module, parsed: its path, name, text, tree and index."""
    path: str
    name: str
    text: str
    tree: ast.Module
    info: ModuleInfo


def torch_alias(info: ModuleInfo, name: str) -> str | None:
    """The torch attribute ``name`` stands for in that module (``from torch import zeros``, or
    ``device = torch.cuda.device`` at module level, also on one branch of an ``if``), else None.
    It wins over a def of the name on another branch: on some machine the call is torch's."""
    target = info.aliases.get(name) or ""
    return target if target.startswith(("torch.", "torch_npu.")) else None


def module_names(path: Path, roots: list[Path], is_package) -> list[str]:
    """The dotted names ``path`` answers to: its package chain's, and its path under each root."""
    parts = [] if path.stem == "__init__" else [path.stem]
    folder = path.parent
    while folder.name and is_package(folder):
        parts.insert(0, folder.name)
        folder = folder.parent
    names = [".".join(parts)] if parts else []
    for root in roots:
        try:
            rel = path.relative_to(root).with_suffix("").parts
        except ValueError:
            continue
        rel = rel[:-1] if rel and rel[-1] == "__init__" else rel
        if rel and ".".join(rel) not in names:
            names.append(".".join(rel))
    return names


class Tree:
    """The audited files by dotted name, parsed on demand (``load`` reads and parses)."""

    def __init__(self, files: list[Path], roots: list[Path], load):
        self.by_name: dict[str, Path] = {}
        self.name_of: dict[Path, str] = {}
        present = {p.parent for p in files if p.name == "__init__.py"}  # packages among the audited files
        for path in files:
            for i, name in enumerate(module_names(path, roots, present.__contains__)):
                self.by_name.setdefault(name, path)
                if i == 0:
                    self.name_of[path] = name
        self._load = load
        self._cache: OrderedDict[Path, Parsed | None] = OrderedDict()

    def module(self, path: Path, strict: bool = False) -> Parsed | None:
        """The parsed module at ``path``. ``strict`` (a file being audited): parsed afresh
        unless an import already holds it, never kept, and a file that cannot be used raises
        its one-line KbError. Otherwise (an import target) kept in the bounded cache, and an
        unusable file resolves nothing. Few trees stay alive: Python's collector walks every
        live object, so holding thousands of syntax trees would slow the whole run."""
        path = path if isinstance(path, Path) else Path(path)
        if path in self._cache:
            self._cache.move_to_end(path)
            return self._cache[path] if self._cache[path] is not None or not strict else self._load(path, self._name(path))
        if strict:
            return self._load(path, self._name(path))
        try:
            parsed = self._load(path, self._name(path))
        except KbError:
            parsed = None
        self._cache[path] = parsed
        if len(self._cache) > MAX_CACHED:
            self._cache.popitem(last=False)
        return parsed

    def release(self) -> None:
        """Let go of the parsed modules kept (the run is over; a later ``module`` parses again)."""
        self._cache.clear()

    def _name(self, path: Path) -> str:
        return self.name_of.get(path, path.stem)

    def absolute(self, importer: Parsed, level: int, module: str | None) -> str | None:
        """``from ..x import y`` inside ``importer``: the dotted name of ``..x``."""
        if not level:
            return module
        base = importer.name.split(".")
        if _stem(importer.path) != "__init__":
            base = base[:-1]
        if level - 1 > len(base):
            return None
        base = base[: len(base) - (level - 1)]
        return ".".join(base + ([module] if module else [])) or None

    def resolve(self, importer: Parsed, local: str, hops: int = 0, bound=None):
        """What ``local`` (a name ``importer`` imports) is in the tree: ("function", Parsed,
        node), ("module", Parsed, None), ("torch", Parsed, the torch name a module-level alias
        there binds), or None when it comes from outside the tree.
        ``bound``: the import's (level, module, attribute) when a function body made it."""
        bound = bound or importer.info.imports.get(local)
        if bound is None or hops > MAX_REEXPORTS:
            return None
        level, module, attr = bound
        target = self.absolute(importer, level, module)
        if target is None:
            return None
        if attr is None:  # import pkg.mod as m
            return self._module_entry(target)
        path = self.by_name.get(target)
        if path is not None:
            owner = self.module(path)
            if owner is None:
                return None
            if (torch_target := torch_alias(owner.info, attr)) is not None:  # `x = torch.cuda.device`, on some branch
                return ("torch", owner, torch_target)
            fn = owner.info.helpers.get(attr)
            if fn is not None:
                return ("function", owner, fn)
            if attr in owner.info.imports and owner is not importer:
                return self.resolve(owner, attr, hops + 1)
        return self._module_entry(f"{target}.{attr}")

    def _module_entry(self, dotted_name: str):
        path = self.by_name.get(dotted_name)
        owner = self.module(path) if path is not None else None
        return ("module", owner, None) if owner is not None else None

    def attribute(self, importer: Parsed, base: str, attr: str, bound=None):
        """``mod.f`` where ``mod`` is an audited module ``importer`` imports: f's node, also
        when ``mod`` (a package's ``__init__``) only re-exports it."""
        entry = self.resolve(importer, base, bound=bound)
        if entry is None or entry[0] != "module":
            return None
        owner = entry[1]
        if (torch_target := torch_alias(owner.info, attr)) is not None:
            return ("torch", owner, torch_target)
        fn = owner.info.helpers.get(attr)
        if fn is None and attr in owner.info.imports:
            found = self.resolve(owner, attr, 1)
            return found if found is not None and found[0] in ("function", "torch") else None
        return ("function", owner, fn) if fn is not None else None
