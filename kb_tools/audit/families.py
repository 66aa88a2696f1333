"""The rule families beyond the wrapper, run on the roles they concern: the golden family
on goldens, the test family on tests, the kernel family on implementations. Each rule is a
module of ``kb_tools.audit.rules`` found through the registry (``codes.RULES``): its ``ROLES``
say which files it reads and its ``check(ctx)`` gives its findings, in code order. The engine
calls ``family_findings`` with the tree it already parsed, so nothing is parsed twice. A rule
that depends on a dtype nothing declares says so once per file (its ``undecided(ctx)``).
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from functools import lru_cache

from kb_tools.audit.family_context import FileContext, find_spec
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.codes import RULES
from kb_tools.audit.module import FUNCTION_DEFS, ModuleInfo
from kb_tools.audit.roles import GOLDEN, IMPL, TEST, THIRD_PARTY, file_roles
from kb_tools.audit.rules import ts101_test_misses_wrapper
from kb_tools.audit.suite_rules import importorskip_aliases, operator_test
from kb_tools.contract.specs import OpSpec

ROLE_ORDER = (GOLDEN, THIRD_PARTY, TEST, IMPL)
FAMILY_PREFIX = {GOLDEN: "GD", THIRD_PARTY: "GD", TEST: "TS", IMPL: "KN"}


@lru_cache(maxsize=1)
def family_rules() -> dict[str, tuple]:
    """role -> the rule modules that read files of that role, in code order."""
    modules = [importlib.import_module(f"kb_tools.audit.rules.{r.module}") for code, r in sorted(RULES.items())
               if code[:2] in FAMILY_PREFIX.values()]
    return {role: tuple(m for m in modules if role in m.ROLES) for role in ROLE_ORDER}


def _run(role: str, ctx: FileContext) -> list[RawFinding]:
    """The findings of one role's rules. A test file that tests no operator (a library's own
    unit tests) is judged only for reaching no delivery at all."""
    if role == TEST:
        ctx = importorskip_aliases(ctx)
        if not operator_test(ctx):
            return ts101_test_misses_wrapper.golden_only(ctx)
    return [f for rule in family_rules()[role] for f in rule.check(ctx)]


def _undecided(role: str, ctx: FileContext) -> str | None:
    """The first note of a rule of the role that could not tell a dtype, read after its check."""
    for rule in family_rules()[role]:
        note = rule.undecided(ctx) if hasattr(rule, "undecided") else None
        if note:
            return note
    return None


@dataclass(frozen=True)
class FamilyOptions:
    """``--role`` (None: tell it from the file) and ``--spec`` (None: find ``ops/<op>.yaml``)."""
    roles: frozenset[str] | None = None
    spec: OpSpec | None = None
    find_specs: bool = True


def family_findings(tree: ast.Module, module: ModuleInfo, path: str, options: FamilyOptions,
                    select: set[str] | None = None, delivers: bool = False) -> tuple[frozenset[str], list[RawFinding], str | None]:
    """(the file's roles, the findings of the families those roles select, a note). A file
    that defines functions but has no role gets the wrapper family only, and a note that
    says so in one line. ``delivers``: the wrapper audit found a wrapper here (one that launches
    through a helper of another module, which the file's own text does not show): an implementation."""
    roles = options.roles if options.roles is not None else file_roles(path, tree, module) | ({IMPL} if delivers else set())
    note = None
    if not roles and any(isinstance(n, FUNCTION_DEFS) for n in tree.body):
        note = (f"{path}: AU014 role cannot be told (no kernel or launch, no test_*, no golden, no third-party leg); "
                "wrapper family only (choose with --role)")
    wanted = [role for role in ROLE_ORDER if role in roles
              and (select is None or any(c.startswith(FAMILY_PREFIX[role]) for c in select))]
    if not wanted:
        return roles, [], note
    spec = options.spec or (find_spec(path) if options.find_specs else None)
    ctx = FileContext.build(path, tree, module, spec)
    found: list[RawFinding] = []
    notes = []
    for role in wanted:
        try:
            found.extend(_run(role, ctx))
            undecided = _undecided(role, ctx)
        except RecursionError:  # an expression too deep to follow: one line, the other families still run
            undecided = f"{path}: AU013 too deeply nested for the {role} rules; they were skipped for this file"
        if undecided:
            notes.append(undecided)
    return roles, found, "\n".join(notes) or None
