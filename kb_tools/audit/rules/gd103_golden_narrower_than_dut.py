"""GD103 (golden-follows-dut-widening): in a two-party case the golden casts to a dtype that
is neither declared nor a widening target, and narrower than the DUT's widening. On a CANN
golden (judged with its folder's facts by ``kb_tools.cann.golden_flow``): a two-party golden
that never widens the half dtypes the kernel computes in float32 (the opposite of golden-wider-than-kernel),
reported only where the functions it reaches write two or more rounding operations: torch and
numpy compute one half op in float and round once, as the kernel's widen-compute-narrow does,
so only a chain departs from the kernel (a warning: the mode is read, not run).
"""

from __future__ import annotations

from kb_tools.audit.casts import WIDTH, is_float, is_int
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding, call_pos
from kb_tools.audit.golden_rules import literal_casts
from kb_tools.audit.roles import GOLDEN
from kb_tools.audit.cann_goldens import cann_findings, is_cann_golden

CODE = "GD103"
ROLES = (GOLDEN,)  # the file roles (kb_tools/audit/roles.py) the rule reads


def check(ctx: FileContext) -> list[RawFinding]:
    if is_cann_golden(ctx.path):  # judged with the folder's own facts (kb_tools.cann.golden_flow)
        return cann_findings(ctx.path, CODE, ctx.tree)
    spec = ctx.spec
    if spec is None or not spec.widening or any(spec.criteria.get(d) == "cross_check" for d in spec.dtypes if is_float(d)):
        return []
    allowed = set(spec.dtypes) | set(spec.widening.values())
    out = []
    for call, dtype in literal_casts(ctx):
        same_kind = [w for w in spec.widening.values() if (is_float(w) and is_float(dtype)) or (is_int(w) and is_int(dtype))]
        if dtype in allowed or not same_kind or WIDTH[dtype] >= max(WIDTH[w] for w in same_kind):
            continue
        out.append(RawFinding(*call_pos(call), CODE, f"casts to {dtype}, which {spec.op} neither declares nor widens to; "
                              f"the DUT computes in {max(same_kind, key=WIDTH.get)}"))
    return out
