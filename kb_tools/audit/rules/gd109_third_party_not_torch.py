"""GD109 (seed 000 §6; kb/constraints/golden-framework.md): the GPU third-party leg is written in a framework other than torch.

Judged on a CANN golden (``<op>/tests/assets/golden.py`` beside ``op_host/``) with its own
folder's facts by ``kb_tools.cann.golden_flow``; other files are not read by this rule.
"""

from __future__ import annotations

from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.roles import GOLDEN
from kb_tools.audit.cann_goldens import cann_findings, is_cann_golden

CODE = "GD109"
ROLES = (GOLDEN,)  # the file roles (kb_tools/audit/roles.py) the rule reads


def check(ctx: FileContext) -> list[RawFinding]:
    return cann_findings(ctx.path, CODE, ctx.tree) if is_cann_golden(ctx.path) else []
