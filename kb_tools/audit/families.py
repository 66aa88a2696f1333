"""The rule families beyond the wrapper, run on the roles they concern: the golden family
on goldens, the test family on tests, the kernel family on implementations. The engine
calls ``family_findings`` with the tree it already parsed, so nothing is parsed twice.
A rule that depends on a dtype nothing declares says so once per file (``UNDECIDED``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from kb_tools.audit.family_context import FileContext, find_spec
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.golden_rules import check_golden, check_third_party
from kb_tools.audit.kernel_rules import check_kernel, undecided_loads
from kb_tools.audit.module import FUNCTION_DEFS, ModuleInfo
from kb_tools.audit.roles import GOLDEN, IMPL, TEST, THIRD_PARTY, file_roles
from kb_tools.audit.suite_rules import check_test, undecided_compares
from kb_tools.contract.specs import OpSpec

FAMILIES = ((GOLDEN, check_golden), (THIRD_PARTY, check_third_party), (TEST, check_test), (IMPL, check_kernel))
FAMILY_PREFIX = {GOLDEN: "GD", THIRD_PARTY: "GD", TEST: "TS", IMPL: "KN"}
UNDECIDED = {TEST: undecided_compares, IMPL: undecided_loads}  # role -> its note when a dtype cannot be told


@dataclass(frozen=True)
class FamilyOptions:
    """``--role`` (None: tell it from the file) and ``--spec`` (None: find ``ops/<op>.yaml``)."""
    roles: frozenset[str] | None = None
    spec: OpSpec | None = None
    find_specs: bool = True


def family_findings(tree: ast.Module, module: ModuleInfo, path: str, options: FamilyOptions,
                    select: set[str] | None = None) -> tuple[frozenset[str], list[RawFinding], str | None]:
    """(the file's roles, the findings of the families those roles select, a note). A file
    that defines functions but has no role gets the wrapper family only, and a note that
    says so in one line."""
    roles = options.roles if options.roles is not None else file_roles(path, tree, module)
    note = None
    if not roles and any(isinstance(n, FUNCTION_DEFS) for n in tree.body):
        note = (f"{path}: AU014 role cannot be told (no kernel or launch, no test_*, no golden, no third-party leg); "
                "wrapper family only (choose with --role)")
    wanted = [(role, check) for role, check in FAMILIES if role in roles
              and (select is None or any(c.startswith(FAMILY_PREFIX[role]) for c in select))]
    if not wanted:
        return roles, [], note
    spec = options.spec or (find_spec(path) if options.find_specs else None)
    ctx = FileContext.build(path, tree, module, spec)
    found: list[RawFinding] = []
    notes = []
    for role, check in wanted:
        try:
            found.extend(check(ctx))
            undecided = UNDECIDED[role](ctx) if role in UNDECIDED else None
        except RecursionError:  # an expression too deep to follow: one line, the other families still run
            undecided = f"{path}: AU013 too deeply nested for the {role} rules; they were skipped for this file"
        if undecided:
            notes.append(undecided)
    return roles, found, "\n".join(notes) or None
