"""GD105 (third-party-narrowing, on third-party legs): the exit cast sits only on the branch
taken for floating outputs (``if y.is_floating_point(): y = y.to(declared)``, or ``... if
x.is_floating_point() else y``), so an integer output leaves the leg widened.
"""

from __future__ import annotations

import ast

from kb_tools.audit.casts import is_int
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.golden_rules import declared_names
from kb_tools.audit.names import dotted
from kb_tools.audit.roles import THIRD_PARTY

CODE = "GD105"
ROLES = (THIRD_PARTY,)  # the file roles (kb_tools/audit/roles.py) the rule reads
FLOAT_TESTS = ("is_floating_point", "is_float", "is_complex")


def _float_test(test: ast.AST) -> bool:
    """A condition that asks whether something is floating (``x.is_floating_point()``,
    ``torch.is_floating_point(x)``, ``dtype in FLOAT_DTYPES``, ``dtype.is_floating_point``)."""
    for node in ast.walk(test):
        parts = dotted(node.func if isinstance(node, ast.Call) else node) if isinstance(node, (ast.Call, ast.Attribute, ast.Name)) else None
        if parts and (parts[-1] in FLOAT_TESTS or "float" in parts[-1].lower()):
            return True
    return False


def _exit_casts_in(nodes, declared: set[str]) -> bool:
    """A cast back to the declared dtype (``y.to(declared)``, ``y.to(x.dtype)``, ``y.type(declared)``)."""
    for body in nodes:
        for n in ast.walk(body):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("to", "type", "astype"):
                for arg in [*n.args, *(k.value for k in n.keywords if k.arg == "dtype")]:
                    if (isinstance(arg, ast.Name) and arg.id in declared) or (isinstance(arg, ast.Attribute) and arg.attr == "dtype"):
                        return True
    return False


def check(ctx: FileContext) -> list[RawFinding]:
    spec = ctx.spec
    if spec is not None and not any(is_int(d) and spec.widening.get(d, d) != d for d in spec.dtypes):
        return []  # no integer output is widened: nothing can leave the leg wide
    out = []
    for fn in ctx.functions:
        declared = declared_names(fn)
        for node in ctx.walk(fn):
            if isinstance(node, ast.If):
                body, orelse = node.body, node.orelse
            elif isinstance(node, ast.IfExp):
                body, orelse = [node.body], [node.orelse]
            else:
                continue
            if not _float_test(node.test):
                continue
            negated = isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
            float_branch, other = (orelse, body) if negated else (body, orelse)
            if _exit_casts_in(float_branch, declared) and not _exit_casts_in(other, declared):
                out.append(RawFinding(node.lineno, node.col_offset, CODE, "the third-party leg casts back to the declared "
                                      "dtype only on the floating branch; an integer output leaves it at the widened dtype"))
    return sorted(set(out), key=lambda f: (f.line, f.col))
