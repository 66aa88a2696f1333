"""What the kernel family's rules (KN1xx, ``kb_tools/audit/rules/kn*.py``) read alike in device
code (which calls are loads, which parameters a call binds), and the KB's inventory of kernel
API names (kb/api_inventory.yaml), which ``kbt lint`` reads too.
"""

from __future__ import annotations

import ast
import os
import itertools
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path

from kb_tools.audit.family_context import per_run
from kb_tools.audit.names import dotted

INVENTORY = "api_inventory.yaml"  # under kb/


def is_load(call: ast.AST) -> bool:
    """A call whose name says it loads (``pl.load``, ``tl.load``, ``vf.load_tile``)."""
    return isinstance(call, ast.Call) and "load" in ((dotted(call.func) or [""])[-1]).lower()


def bound_arguments(call: ast.Call, fn: ast.AST) -> list[tuple[ast.arg, ast.AST]]:
    """(parameter, argument) pairs a call of ``fn`` binds: the positional arguments up to the
    first ``*x`` (what follows it sits at an unknown place), then the keywords by name."""
    params = fn.args.posonlyargs + fn.args.args
    positional = list(itertools.takewhile(lambda a: not isinstance(a, ast.Starred), call.args))
    by_name = {p.arg: p for p in params + fn.args.kwonlyargs}
    return [*zip(params, positional), *((by_name[k.arg], k.value) for k in call.keywords if k.arg in by_name)]


# The KB whose inventory the absent-API rule reads when a command was told one (--kb-root); else the one
# found from here (kb_tools.kb.root).
_inventory_root: list = [None]


@contextmanager
def inventory_of(root):
    """Within the block the absent-API rule reads ``root``'s kb/api_inventory.yaml."""
    before, _inventory_root[0] = _inventory_root[0], root
    try:
        yield
    finally:
        _inventory_root[0] = before


def absent_api() -> dict[str, str]:
    """name -> the name to use instead, from the KB's kb/api_inventory.yaml (``inventory_of``)."""
    from kb_tools.diagnostics import KbError
    from kb_tools.kb.root import find_root

    root = _inventory_root[0]
    if root is None:
        try:
            root = find_root()
        except KbError:  # no KB here: nothing to check kernel names against
            return {}
    return read_inventory(_inventory_path(root))


@lru_cache(maxsize=4)
def _inventory_path(root) -> Path:
    """``root``'s kb/api_inventory.yaml, built once per KB: every implementation file asks."""
    return Path(root) / "kb" / INVENTORY


@per_run
@lru_cache(maxsize=4)
def read_inventory(path: Path) -> dict[str, str]:
    """An inventory's table; empty where the KB has none. One that is there but broken (not
    YAML, not a mapping of names under ``absent:``) is one line (AU030, exit 2): it would
    otherwise switch the absent-API rule off without a word. kbt lint reads it the same way."""
    from kb_tools.diagnostics import EXIT_USAGE, KbError, KbErrors, fail
    from kb_tools.files.text import read_text
    from kb_tools.files.yamlio import load_yaml

    if not os.path.lexists(path):  # a KB without it would switch the absent-API rule off without a word
        from kb_tools.audit.codes import code_named

        fail(path, None, "AU031", f"missing: the absent-API rule ({code_named('kernel-absent-api')}) checks kernel API names against it; restore it",
             EXIT_USAGE)
    try:
        data = load_yaml(read_text(path, code_prefix="AU"), path, code="AU030")
    except KbErrors as exc:
        raise KbError(exc.diagnostics[0], EXIT_USAGE) from None
    except KbError as exc:
        raise KbError(exc.diagnostic, EXIT_USAGE) from None
    entries = data.get("absent") if isinstance(data, dict) else None
    if not isinstance(entries, dict) or not entries:
        fail(path, getattr(data, "line", None), "AU030", "needs `absent:`, a mapping of kernel API names to "
             "{use: <the name that exists>, ...}; the audit checks kernel API names against it", EXIT_USAGE)
    for name, entry in entries.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("use"), str):
            fail(path, entries.line_of(name), "AU030", f"absent.{name} needs `use:`, the name that exists instead", EXIT_USAGE)
    return {name: entry["use"] for name, entry in entries.items()}

