"""TS103 (tolerance-coverage): a literal ``rtol``/``atol`` looser than the spec's criterion
allows for the dtype the comparison runs under (the branch of an ``if`` on the dtype, or the
dtypes its test names; the loosest of all declared dtypes when it names none), only where
those dtypes' criteria are element-wise.
"""

from __future__ import annotations

import ast

from kb_tools.audit.casts import dtype_name
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.module import FUNCTION_DEFS
from kb_tools.audit.roles import TEST
from kb_tools.audit.suite_rules import comparisons
from kb_tools.kb import vocabulary as V
from kb_tools.numerics import tolerances as tol

CODE = "TS103"
ROLES = (TEST,)  # the file roles (kb_tools/audit/roles.py) the rule reads


def _number(expr: ast.AST) -> float | None:
    """A literal number (``1e-3``, ``2**-9``, ``-1``), else None."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return float(expr.value)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        v = _number(expr.operand)
        return None if v is None else (-v if isinstance(expr.op, ast.USub) else v)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Pow, ast.Mult, ast.Div)):
        a, b = _number(expr.left), _number(expr.right)
        if a is None or b is None or (isinstance(expr.op, ast.Pow) and abs(b) > 64):
            return None
        try:
            return a ** b if isinstance(expr.op, ast.Pow) else a * b if isinstance(expr.op, ast.Mult) else a / b
        except (ZeroDivisionError, OverflowError):
            return None
    return None


def allowed_tolerance(criterion: str, dtype: str) -> tuple[float, float] | None:
    """(rtol, atol) an element-wise criterion allows for ``dtype``; None when the criterion
    is not element-wise (stat_rel_err, cross_check, quant). gym_gate's mean gates sit on top of
    its mixed tolerance, so a test looser than that tolerance is looser than the gate."""
    if criterion == "binary_equal":
        return 0.0, 0.0
    if criterion == "close":
        return tol.close_rtol(dtype), tol.CLOSE_ATOL
    if criterion in ("mix_tolerance", "gym_gate"):  # gym_gate's element-wise half reads TTK's mix rows
        row = tol.mix_row(dtype)
        return row.rtol, row.atol
    return None


def _named_dtypes(node: ast.AST) -> set[str]:
    """The dtypes an expression or block names (``torch.float16``, ``"bf16"``)."""
    named = set()
    for n in ast.walk(node):
        d = dtype_name(n) if isinstance(n, ast.Attribute) else V.canonical_dtype(n.value) \
            if isinstance(n, ast.Constant) and isinstance(n.value, str) else None
        if d:
            named.add(d)
    return named


def _dtypes_in_force(call: ast.AST, parents: dict[int, ast.AST], declared: list[str]) -> list[str]:
    """The declared dtypes a comparison runs under: the branch of an ``if`` that tests for
    some of them (its ``else`` excludes them), else those its function names (its
    parametrisation included), else all."""
    node, excluded = call, set()
    while id(node) in parents:
        parent = parents[id(node)]
        if isinstance(parent, ast.If):
            tested = [d for d in declared if d in _named_dtypes(parent.test)]
            negated = any(isinstance(n, (ast.NotEq, ast.IsNot, ast.NotIn, ast.Not)) for n in ast.walk(parent.test))
            chosen, other = (parent.orelse, parent.body) if negated else (parent.body, parent.orelse)
            if tested and node in chosen:
                return [d for d in tested if d not in excluded] or tested
            if tested and node in other:
                excluded.update(tested)
        if isinstance(parent, FUNCTION_DEFS):
            named = [d for d in declared if d in _named_dtypes(parent) and d not in excluded]
            return named or [d for d in declared if d not in excluded] or declared
        node = parent
    return [d for d in declared if d not in excluded] or declared


def check(ctx: FileContext) -> list[RawFinding]:
    """A literal rtol/atol looser than the criterion allows for the dtypes the comparison runs
    under (one dtype when a branch or the test names it; the loosest of several otherwise)."""
    spec = ctx.spec
    if spec is None or not spec.dtypes:
        return []
    bounds = {d: allowed_tolerance(spec.criteria.get(d, V.undeclared_criterion(d)), d) for d in spec.dtypes}
    parents = {id(child): node for node in ctx.nodes for child in ast.iter_child_nodes(node)}
    out = []
    for call, name in comparisons(ctx):
        dtypes = _dtypes_in_force(call, parents, list(spec.dtypes))
        if any(bounds[d] is None for d in dtypes):
            continue  # a criterion that is not element-wise: no rtol/atol bound to hold it to
        allowed = {"rtol": max(bounds[d][0] for d in dtypes), "atol": max(bounds[d][1] for d in dtypes)}
        for kw in call.keywords:
            value = _number(kw.value) if kw.arg in allowed else None
            if value is not None and value > allowed[kw.arg]:
                under = dtypes[0] if len(dtypes) == 1 else f"any of {', '.join(dtypes)}"
                out.append(RawFinding(kw.value.lineno, kw.value.col_offset, CODE,
                                      f"{kw.arg}={value:g} is looser than {spec.op}'s criteria allow for {under} "
                                      f"(at most {allowed[kw.arg]:g})"))
    return out
