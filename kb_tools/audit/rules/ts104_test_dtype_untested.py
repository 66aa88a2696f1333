"""TS104 (tolerance-coverage): a declared dtype that the file never names, unless it reads the
dtypes from the spec or the prototype (a name holding ``DTYPES``, a ``"dtypes"`` key).
"""

from __future__ import annotations

import ast

from kb_tools.audit.casts import dtype_name
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.roles import TEST
from kb_tools.audit.suite_rules import collect_tests
from kb_tools.kb import vocabulary as V

CODE = "TS104"
ROLES = (TEST,)  # the file roles (kb_tools/audit/roles.py) the rule reads


def check(ctx: FileContext) -> list[RawFinding]:
    spec = ctx.spec
    tests = collect_tests(ctx.tree, ctx.module.kernels)
    if spec is None or not tests:
        return []
    named = set()
    for node in ctx.nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.lower() == "dtypes":
                return []
            d = V.canonical_dtype(node.value)
        elif isinstance(node, ast.Attribute):
            if "dtypes" in node.attr.lower():
                return []
            d = dtype_name(node)
        elif isinstance(node, ast.Name):
            if "dtypes" in node.id.lower() and node.id.upper() == node.id:
                return []
            d = None
        else:
            continue
        if d:
            named.add(d)
    missing = [d for d in spec.dtypes if d not in named]
    if not missing:
        return []
    return [RawFinding(tests[0].lineno, tests[0].col_offset, CODE,
                       f"{spec.op} declares {', '.join(missing)}, which no test here names")]
