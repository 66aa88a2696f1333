"""A file's role in an operator's delivery, told from what it holds: the delivered
implementation (a kernel and its wrapper), the golden, the test. Each rule family runs on
its role; the wrapper family runs on every file, as it always has.

A file may hold several roles (a sample with its kernel, wrapper and test in one file). A
golden is told by its name (``*_golden.py``, ``golden*.py``) or, in a file that is neither
a test nor an implementation and imports no kernel framework, by a top-level ``golden*`` /
``*_golden`` function; a test by
its name (``test_*.py``, ``*_test.py``) or by a top-level ``test_*``/``*_test`` function
(not a kernel, not a ``golden*`` one) or ``Test*`` class; a third-party leg by ``third_party`` in its name or a public function's; an
implementation by a kernel or a launch. ``--role`` overrides all of it.
"""

from __future__ import annotations

import ast
from pathlib import Path

from kb_tools.audit.module import FUNCTION_DEFS, ModuleInfo, jit_flavour

IMPL, GOLDEN, TEST, THIRD_PARTY = "impl", "golden", "test", "third_party"
KERNEL_FRAMEWORKS = ("pypto", "pypto_pro", "triton", "tilelang")
ROLES = (IMPL, GOLDEN, TEST, THIRD_PARTY)


def is_golden_name(name: str) -> bool:
    return name.startswith("golden") or (name.endswith("_golden") and not name.startswith("_"))


def _third_party_name(name: str) -> bool:
    return "third_party" in name.lower() and not name.startswith("_")


def is_test_name(name: str) -> bool:
    return name.startswith("test_") or name.endswith("_test")


def _test_function(node: ast.AST, module: ModuleInfo) -> bool:
    """A ``test_*`` or ``*_test`` function that is neither a kernel nor a golden: a ``@pl.jit
    def hc_pre_test(...)`` is device code and ``golden_rms_norm_test`` its reference, each
    named after the test kernel it serves."""
    return is_test_name(node.name) and not is_golden_name(node.name) and not jit_flavour(node, module.aliases)


def _defines_kernel(module: ModuleInfo) -> bool:
    """A kernel anywhere in the file, nested ones included (a harness that builds kernels)."""
    return any(isinstance(n, FUNCTION_DEFS) and jit_flavour(n, module.aliases) for n in module.index.nodes)


def imports_framework(aliases: dict[str, str]) -> bool:
    """Whether the import aliases name a kernel framework. A file importing one at top level
    that also holds a ``golden_*`` is an implementation with its reference beside it (its
    kernels may be built in a way not recognised, such as a ``@pl.program`` class), not a
    standalone golden."""
    return any(full.split(".")[0] in KERNEL_FRAMEWORKS for full in aliases.values())


def _stem(path: str) -> str:
    """``Path(path).stem``, without building a Path (every audited file and relative import asks) where ``path``
    is written as ``str(Path)`` writes it: no ``.`` part, doubled or trailing slash."""
    if path in ("", ".") or "//" in path or "/." in path or path.endswith("/"):
        return Path(path).stem
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def file_roles(path: str, tree: ast.Module, module: ModuleInfo) -> frozenset[str]:
    """The roles a file holds (empty when none can be told)."""
    stem = _stem(path)
    roles = set()
    if module.kernels or module.launching:
        roles.add(IMPL)
    tops = [n for n in tree.body if isinstance(n, (*FUNCTION_DEFS, ast.ClassDef))]
    if is_test_name(stem) or any(
            (isinstance(n, ast.ClassDef) and n.name.startswith("Test")) or (not isinstance(n, ast.ClassDef) and _test_function(n, module))
            for n in tops):
        roles.add(TEST)
    if is_golden_name(stem) or (not roles and any(not isinstance(n, ast.ClassDef) and is_golden_name(n.name) for n in tops)
                              and not _defines_kernel(module) and not imports_framework(module.aliases)):
        roles.add(GOLDEN)
    if _third_party_name(stem) or (not roles and any(not isinstance(n, ast.ClassDef) and _third_party_name(n.name) for n in tops)):
        roles.add(THIRD_PARTY)
    return frozenset(roles)


def parse_roles(spec: str | None) -> frozenset[str] | None:
    """``--role golden,test`` as a set; None when not given. An unknown role is a usage error."""
    if not spec:
        return None
    chosen = {p.strip().lower() for p in spec.split(",") if p.strip()}
    unknown = sorted(chosen - set(ROLES))
    if unknown or not chosen:
        from kb_tools.diagnostics import EXIT_USAGE, fail

        fail("--role", None, "AU021", f"unknown role {', '.join(unknown) or spec!r}; known: {', '.join(ROLES)}", EXIT_USAGE)
    return frozenset(chosen)
