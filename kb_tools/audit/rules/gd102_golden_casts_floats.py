"""GD102 (golden-promote): in a three-party case (a float criterion is ``cross_check``) the
golden casts a floating tensor; Promote has already raised it (seed 000 section 3).
"""

from __future__ import annotations

from kb_tools.audit.casts import is_float
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding, call_pos
from kb_tools.audit.golden_rules import literal_casts
from kb_tools.audit.roles import GOLDEN
from kb_tools.audit.cann_goldens import cann_findings, is_cann_golden

CODE = "GD102"
ROLES = (GOLDEN,)  # the file roles (kb_tools/audit/roles.py) the rule reads


def check(ctx: FileContext) -> list[RawFinding]:
    if is_cann_golden(ctx.path):  # its own folder says the case mode (kb_tools.cann.golden_flow)
        return cann_findings(ctx.path, CODE, ctx.tree)
    spec = ctx.spec
    if spec is None or not any(spec.criteria.get(d) == "cross_check" for d in spec.dtypes if is_float(d)):
        return []
    return [RawFinding(*call_pos(call), CODE, f"casts to {dtype} in the golden of a three-party case (cross_check): "
                       "Promote already raised the floats; a cast collapses the dual reference")
            for call, dtype in literal_casts(ctx) if is_float(dtype)]
