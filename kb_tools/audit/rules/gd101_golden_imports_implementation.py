"""GD101 (golden-framework): the golden imports a kernel framework or the implementation it judges
(a ``*_wrapper``/``*_impl``/``*_kernel`` module, the spec's wrapper, or a module of the same
project, beside the golden or one folder up, that defines ``@jit`` kernels), so it is no longer
an independent reference. Run on goldens and on third-party legs.
"""

from __future__ import annotations

import ast
from pathlib import Path

from kb_tools.audit.family_context import FileContext, folder_names
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.golden_rules import defines_kernels
from kb_tools.audit.roles import GOLDEN, KERNEL_FRAMEWORKS, THIRD_PARTY

CODE = "GD101"
ROLES = (GOLDEN, THIRD_PARTY)  # the file roles (kb_tools/audit/roles.py) the rule reads
IMPL_SUFFIXES = ("_wrapper", "wrappers", "_impl", "_kernel", "kernels")


def _impl_module(module: str, spec_stem: str | None) -> bool:
    parts = module.split(".")
    return parts[0] in KERNEL_FRAMEWORKS or any(p.endswith(IMPL_SUFFIXES) for p in parts) or (
        spec_stem is not None and spec_stem in parts)


def _module_file(module: str, level: int, here: Path) -> Path | None:
    """The source file an import names, looked up where a golden run as a script finds it:
    beside the golden, or one folder up (``sys.path.insert(0, parent)``); a relative import
    from the package it names. None when it is not there (an installed package)."""
    parts = module.split(".") if module else []
    if level > len(here.parents):
        return None
    bases = [here.parents[level - 1]] if level else [here.parent, here.parent.parent]
    for base in bases:
        if not parts or not {parts[0], parts[0] + ".py"} & folder_names(base):  # nothing there by that name
            continue
        for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if candidate.is_file():
                return candidate
    return None


def _local_implementation(node: ast.AST, here: Path) -> str | None:
    """The name of a same-project module this import reads that defines kernels."""
    if isinstance(node, ast.Import):
        targets = [(a.name, 0) for a in node.names]
    else:
        targets = [(node.module or "", node.level)] + [(f"{node.module}.{a.name}" if node.module else a.name, node.level)
                                                      for a in node.names]
    for module, level in targets:
        found = _module_file(module, level, here)
        if found is not None and found.resolve() != here and defines_kernels(found.resolve()):
            return module
    return None


def check(ctx: FileContext) -> list[RawFinding]:
    spec_stem = ctx.wrapper_stem
    here = Path(ctx.path).resolve()
    out = []
    for node in ctx.nodes:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names] if node.module else []
        else:
            continue
        hit = next((n for n in names if _impl_module(n, spec_stem)), None)
        local = None if hit else _local_implementation(node, here)
        if hit:
            out.append(RawFinding(node.lineno, node.col_offset, CODE, f"the golden imports `{hit}`: a golden that "
                                  "shares the kernel's framework or code cannot catch its errors"))
        elif local:
            out.append(RawFinding(node.lineno, node.col_offset, CODE, f"the golden imports `{local}`, a module of this "
                                  "project that defines kernels: move the reference out of the implementation's file"))
    return out
