"""GD110 (seed 000 §1, §8; kb/constraints/third-party-narrowing.md): the third-party leg widens and never narrows its outputs back at exit.

Judged on a CANN golden (``<op>/tests/assets/golden.py`` beside ``op_host/``) with its own
folder's facts by ``kb_tools.cann.golden_flow``; other files are not read by this rule.
"""

from __future__ import annotations

from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.roles import GOLDEN
from kb_tools.audit.cann_goldens import cann_findings, is_cann_golden

CODE = "GD110"
ROLES = (GOLDEN,)  # the file roles (kb_tools/audit/roles.py) the rule reads


def check(ctx: FileContext) -> list[RawFinding]:
    return cann_findings(ctx.path, CODE, ctx.tree) if is_cann_golden(ctx.path) else []
