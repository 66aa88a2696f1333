"""KN103 (platform-gated-conversion): a call of a name ``kb/api_inventory.yaml`` lists as absent
(``vf.cast``: only ``vf.astype`` exists).
"""

from __future__ import annotations

import ast

from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.kernel_rules import absent_api
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.roles import IMPL

CODE = "KN103"
ROLES = (IMPL,)  # the file roles (kb_tools/audit/roles.py) the rule reads


def check(ctx: FileContext) -> list[RawFinding]:
    table = absent_api()
    if not table:
        return []
    # a call can match an entry only by its last name (``written == k`` or ``q.endswith("." + k)``,
    # q being ``written`` with its first name resolved): the other calls are passed over unresolved
    lasts = {k.rsplit(".", 1)[-1] for k in table}
    if not ctx.may_name(lasts):
        return []
    out = []
    for node in ctx.module.index.of(ast.Call):
        parts = dotted(node.func)
        if not parts or len(parts) < 2 or parts[-1] not in lasts:
            continue
        written = ".".join(parts)
        q = qualname(node.func, ctx.aliases) or written
        hit = next((k for k in table if written == k or q.endswith("." + k)), None)
        if hit:
            out.append(RawFinding(node.lineno, node.col_offset, CODE,
                                  f"{hit} does not exist (kb/api_inventory.yaml); use {table[hit]}"))
    return out
