"""What the golden, test and kernel families read about one file: its tree, every import
alias (at any depth: goldens import torch inside the function), the functions by name, and
the operator's spec when one can be found.

The spec is the one given with ``--spec``, or ``ops/<op>.yaml`` in the file's folder or one
above it, ``<op>`` read off the file's name (``test_softmax.py``, ``softmax_golden.py``,
``softmax_wrapper.py``) or its folder's, else the one the other commands find in a folder
of any name (``kb_tools.contract.discovery``). A spec that does not load is no spec: the
rules that need one are skipped, and ``kbt lint`` reports the spec itself.
"""

from __future__ import annotations

import ast
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path

from kb_tools.audit.module import FUNCTION_DEFS, ModuleInfo
from kb_tools.audit.names import bind_import
from kb_tools.contract.discovery import holds_no_spec, op_candidates
from kb_tools.contract.specs import OpSpec, load_spec
from kb_tools.diagnostics import KbError, KbErrors
from kb_tools.files.text import is_dir, is_file

MAX_SPEC_LEVELS = 4  # folders searched upwards for ops/<op>.yaml


@dataclass
class FileContext:
    path: str
    tree: ast.Module
    module: ModuleInfo
    spec: OpSpec | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    memo: dict = field(default_factory=dict)  # what a rule computed once for this file, by (code, what)

    @classmethod
    def build(cls, path: str, tree: ast.Module, module: ModuleInfo, spec: OpSpec | None) -> "FileContext":
        """Every import binds, in walk order (a later one wins), read off the statements alone:
        the module's whole walk waits for a rule that needs it."""
        aliases = dict(module.aliases)
        for node in module.index.statements:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                bind_import(node, aliases)
        return cls(path, tree, module, spec, aliases)

    @property
    def nodes(self) -> list[ast.AST]:
        """Every node, in walk order, walked once (``module.index``; read, never change it)."""
        return self.module.index.nodes

    def may_name(self, words) -> bool:
        """Whether the file may name one of ``words`` (identifiers): False only when its text is
        known, ASCII (the parser normalises other identifiers) and holds none as a whole word,
        so that a rule looking for those names can skip the file's walk."""
        text = self.module.text
        if text is None or not text.isascii():
            return True
        return any(_names(text, word) for word in words)

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """``list(ast.walk(node))``, a function's walked once for all the rules."""
        return self.module.index.walk(node)

    @cached_property
    def functions(self) -> list[ast.FunctionDef]:
        return [n for n in self.nodes if isinstance(n, FUNCTION_DEFS)]

    @property
    def wrapper_stem(self) -> str | None:
        """The module name of the wrapper file the spec names (``ops/wrappers/softmax_wrapper.py``
        -> ``softmax_wrapper``), None without one."""
        return self.spec.wrapper.rsplit("/", 1)[-1].removesuffix(".py") if self.spec and self.spec.wrapper else None


_RUN_CACHES: list = []  # lru_cache'd readers of files (a spec, a local module), emptied as each run begins


def per_run(cached):
    """Register an ``lru_cache``'d reader of files: it answers from memory within a run only, so
    a long-lived process (the MCP server, a notebook) sees a file edited between two runs."""
    _RUN_CACHES.append(cached)
    return cached


@per_run
@lru_cache(maxsize=256)
def _load(path: Path) -> OpSpec | None:
    try:
        return load_spec(path)
    except (KbError, KbErrors):
        return None


_EMPTY: dict[str, bool] | None = None  # in one run: folder as given -> no file in it can have a spec
_CLEAR: set[str] = set()  # in one run: resolved folders holding no selection and no ops/*.yaml
_LISTED: dict[Path, frozenset[str]] = {}  # in one run: folder -> the names in it


@contextmanager
def one_run():
    """While a run audits many files, a folder found to hold no spec for any of them (nothing
    above it either: ``discovery.holds_no_spec``) is not searched again for each file, and the
    readers of files registered with ``per_run`` start empty. Inside a run, a nested one is the
    same run."""
    global _EMPTY
    if _EMPTY is not None:
        yield
        return
    _EMPTY = {}
    _CLEAR.clear()
    _LISTED.clear()
    for cached in _RUN_CACHES:
        cached.cache_clear()
    try:
        yield
    finally:
        _EMPTY = None
        _CLEAR.clear()
        _LISTED.clear()


def folder_names(folder: Path) -> frozenset[str]:
    """The names in ``folder`` (none when it cannot be listed), listed once per run: the files
    of a repository's goldens sit in few folders, and each import of each golden asks of them.
    Outside a run the folder is listed afresh each time."""
    names = _LISTED.get(folder) if _EMPTY is not None else None
    if names is None:
        try:
            names = frozenset(os.listdir(folder))
        except OSError:
            names = frozenset()
        if _EMPTY is not None:
            _LISTED[folder] = names
    return names


def _in_empty_folder(path: str) -> bool:
    if _EMPTY is None or os.path.islink(path):  # a linked file's spec is searched beside its target
        return False
    folder = os.path.dirname(path)
    if folder not in _EMPTY:
        try:
            _EMPTY[folder] = holds_no_spec(Path(folder or ".").resolve(), _CLEAR)
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
            _EMPTY[folder] = False
    return _EMPTY[folder]


def find_spec(path: str) -> OpSpec | None:
    """The spec found for ``path`` by name (see the module docstring), or None."""
    if _in_empty_folder(path):
        return None
    here = Path(path).resolve()
    names = op_candidates(here)
    folder = here.parent
    for _ in range(MAX_SPEC_LEVELS):
        ops = folder / "ops"
        for name in names if is_dir(ops) else ():  # one look for a folder without ops/, not one per name
            candidate = ops / f"{name}.yaml"
            if is_file(candidate):  # a stem too long for a file name has no spec
                return _load(candidate)
        if folder.parent == folder:
            break
        folder = folder.parent
    return _discovered(str(here))


@per_run
@lru_cache(maxsize=1024)
def _discovered(path: str) -> OpSpec | None:
    """Not found by name: the spec the other commands would find (a KB_SELECTION.json above,
    the one ops/*.yaml above that fits the file; kb_tools.contract.discovery), or None."""
    from kb_tools.contract.discovery import discover

    try:
        return discover(path).spec
    except KbError:
        return None


def _names(text: str, word: str) -> bool:
    """``word`` in ``text`` as a whole word. The pattern starts with the word itself, so the
    search skips ahead by it (a leading ``\\b`` made it try every position: 17 times slower)."""
    for found in re.finditer(re.escape(word) + r"(?!\w)", text):
        before = text[found.start() - 1] if found.start() else " "
        if not (before.isalnum() or before == "_"):
            return True
    return False
