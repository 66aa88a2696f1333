"""The criteria a folder's ``tests/assets/golden.py`` declares and TTK reaches, read with ``ast``.

The golden is parsed, never imported. TTK's entries (``__spec__`` classes, convention-named
classes, legacy ``__golden__`` functions) come from ``golden_reach.entries``, which follows
hicann/ops-test-kit ``ttk/test_spec/loader.py``; a tolerance no reached class uses is no criterion.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

from kb_tools.cann.golden_reach import GoldenModule, entries
from kb_tools.syntax import walk_nodes

MAX_BYTES = 4 * 1024 * 1024
_FRAMEWORKS = {"torch": "torch", "numpy": "numpy", "tensorflow": "tf"}
# a name imported under one of these from another module is that framework re-exported
# (``from deepmd.tf.env import tf``): packages hand the framework on under its usual name
_REEXPORTED = {"torch": "torch", "numpy": "numpy", "np": "numpy", "tensorflow": "tf", "tf": "tf"}


@dataclass
class TestSpecFacts:
    """Reached criteria ({dtype: (standard, line)}), the golden's framework, and problems."""

    criteria: dict[str, tuple[str, int]] = field(default_factory=dict)
    framework: str = "unknown"
    framework_line: int = 0
    entries: int = 0
    legacy: int = 0
    problems: list[str] = field(default_factory=list)


def _decode(data: bytes) -> str:
    """UTF-8 (a BOM dropped), else GBK, else UTF-8 with replacement: real goldens carry all three."""
    for codec in ("utf-8-sig", "gbk"):
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", "replace")


def _root(node: ast.AST) -> str:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _framework(tree: ast.Module) -> tuple[str, int]:
    """torch, numpy, tf or mixed: the frameworks whose functions the golden calls (a module
    imported only for a dtype, ``tensorflow.bfloat16``, computes nothing); numpy beside one
    framework only moves data in and out. A framework is bound by importing it, or by importing
    a name spelled as a framework (``tf``, ``np``, ``torch``) from a module that re-exports it."""
    alias: dict[str, str] = {}
    imported: dict[str, int] = {}
    calls: list[ast.Call] = []
    for node in walk_nodes(tree):
        if isinstance(node, ast.Call):
            calls.append(node)
        elif isinstance(node, ast.Import):
            for a in node.names:
                fw = _FRAMEWORKS.get(a.name.split(".")[0])
                if fw:
                    alias[(a.asname or a.name).split(".")[0]] = fw
                    imported.setdefault(fw, node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            fw = _FRAMEWORKS.get(node.module.split(".")[0])
            bound = {a.asname or a.name: fw or _REEXPORTED.get(a.name) for a in node.names}
            for name, found in bound.items():
                if found:
                    alias[name] = found
                    imported.setdefault(found, node.lineno)
    called: dict[str, int] = {}
    for node in calls:
        if (fw := alias.get(_root(node.func))):
            called.setdefault(fw, imported[fw])
    if not called:  # it computes on what TTK hands it, numpy arrays, with operators and methods
        return "numpy", imported.get("numpy", 0)
    frameworks = set(called) - {"numpy"} or {"numpy"}
    if len(frameworks) == 1:
        fw = frameworks.pop()
        return fw, called[fw]
    return "mixed", min(called.values())


def _parse(path: Path, shown: str, problems: list[str]) -> ast.Module | None:
    """The golden's syntax tree, or None with one ``path:line`` line in ``problems``."""
    try:
        if path.stat().st_size > MAX_BYTES:
            problems.append(f"{shown}:1: golden larger than {MAX_BYTES} bytes, not read")
            return None
        return ast.parse(_decode(path.read_bytes()), filename=shown)
    except OSError as exc:
        problems.append(f"{shown}:1: cannot read the golden ({exc.strerror})")
    except SyntaxError as exc:
        problems.append(f"{shown}:{exc.lineno or 1}: syntax error in the golden: {exc.msg}")
    except (RecursionError, MemoryError, ValueError):
        problems.append(f"{shown}:1: golden too deeply nested to parse")
    return None


def read_testspec(path: Path, shown: str, op: str, tree: ast.Module | None = None) -> TestSpecFacts:
    """Read one golden.py; ``shown`` is how its path is printed, ``op`` the folder's name.
    ``tree``: the file's syntax tree when the caller parsed it already (the audit, in one run)."""
    facts = TestSpecFacts()
    if tree is None:
        tree = _parse(path, shown, facts.problems)
        if tree is None:
            return facts
    facts.framework, facts.framework_line = _framework(tree)
    try:
        found = entries(GoldenModule(tree), op)
    except RecursionError:
        facts.problems.append(f"{shown}:1: golden too deeply nested to read")
        return facts
    for entry in found:
        if entry.role != "golden":
            continue
        facts.entries += 1
        facts.legacy += not entry.criteria and entry.mode == "two_party"
        for dtype, (standard, line) in entry.criteria.items():
            facts.criteria.setdefault(dtype, (standard, line))
        if entry.mode == "unknown":
            facts.problems.append(f"{shown}:{entry.tolerance_line or entry.line}: tolerance of '{entry.key}' "
                                  "is not a literal dict (or a module constant holding one); criteria not read")
    return facts
