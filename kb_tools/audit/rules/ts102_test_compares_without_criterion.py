"""TS102 (tolerance-coverage): a comparison by bare ``allclose``/``isclose``/``assert_allclose``,
whose default tolerances are nobody's criterion (``assert_close``'s per-dtype defaults are one;
a negated comparison asserts a difference and is not judged).
"""

from __future__ import annotations

from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding, call_pos
from kb_tools.audit.roles import TEST
from kb_tools.audit.suite_rules import COMPARE_FUNCS, comparisons

CODE = "TS102"
ROLES = (TEST,)  # the file roles (kb_tools/audit/roles.py) the rule reads


def check(ctx: FileContext) -> list[RawFinding]:
    out = []
    for call, name in comparisons(ctx, COMPARE_FUNCS):
        given = {k.arg for k in call.keywords}
        if None in given or "rtol" in given or "atol" in given or len(call.args) > 2:
            continue  # **kwargs, or tolerances given by keyword or position
        out.append(RawFinding(*call_pos(call), CODE, f"{name} with its default tolerances: no criterion decides this comparison"))
    return out
