"""GD106 (golden-promote, golden-follows-dut-widening; a warning): no spec is found, so the
case mode is unknown, and the golden casts its floating result back at exit (to a half dtype,
or to the input's dtype after widening to fp32): one of the three-party and the two-party readings applies,
and only the spec says which.
"""

from __future__ import annotations

import ast
from pathlib import Path

from kb_tools.audit.cann_goldens import is_cann_golden
from kb_tools.audit.casts import cast_target
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding, call_pos
from kb_tools.audit.golden_rules import declared_names
from kb_tools.audit.roles import GOLDEN
from kb_tools.audit.rules import gd102_golden_casts_floats as gd102
from kb_tools.contract.discovery import op_candidates
from kb_tools.kb import vocabulary as V
from kb_tools.syntax import walk_nodes

CODE = "GD106"
ROLES = (GOLDEN,)  # the file roles (kb_tools/audit/roles.py) the rule reads
GENERIC_STEMS = frozenset({"golden", "goldens", "legs", "reference", "ref", "tests", "test", "src", "ops"})  # not an op's name


def _exit_names(fn: ast.AST) -> set[str]:
    """Names a function returns (``return y``, ``return y, z``)."""
    return {n.id for r in walk_nodes(fn) if isinstance(r, ast.Return) and r.value is not None
            for n in walk_nodes(r.value) if isinstance(n, ast.Name)}


def _outermost(value: ast.AST) -> list[ast.AST]:
    """What a returned value is made of last: itself, or the items of a tuple or list it is
    (``return y.half()``, ``return [out.astype(np.float16)]``); not the casts of its inputs."""
    return [e for item in value.elts for e in _outermost(item)] if isinstance(value, (ast.Tuple, ast.List)) else [value]


def _cast_back(call: ast.Call, inputs: set[str]) -> str | None:
    """What a cast narrows to when it casts back: a half dtype, or an input's dtype
    (``y.to(x.dtype)``, ``y.to(dtype)`` with ``dtype = x.dtype`` or a ``dtype`` parameter,
    ``y.type_as(x)``)."""
    if not isinstance(call.func, ast.Attribute):
        return None
    if call.func.attr == "type_as" and len(call.args) == 1:
        return "the input's dtype"
    cast = cast_target(call)
    if cast is not None and cast[0] is not None:
        return cast[0] if cast[0] in V.HALF_DTYPES else None
    args = [*call.args, *(k.value for k in call.keywords if k.arg == "dtype")]
    if call.func.attr in ("to", "astype", "type") and any(
            (isinstance(a, ast.Attribute) and a.attr == "dtype") or (isinstance(a, ast.Name) and a.id in inputs) for a in args):
        return "the input's dtype"
    return None


def check(ctx: FileContext) -> list[RawFinding]:
    """With no spec, a golden that casts its result back at exit cannot be judged: a
    three-party case forbids it (``gd102``), a two-party case asks for it (``gd103``)."""
    if is_cann_golden(ctx.path):  # judged with the folder's own facts (kb_tools.cann.golden_flow)
        return []
    if ctx.spec is not None:
        return []
    name = next((n for n in op_candidates(Path(ctx.path)) if n not in GENERIC_STEMS), "<op>")
    out = []
    for fn in ctx.functions:
        widens = any(isinstance(n, ast.Call) and (cast_target(n) or (None,))[0] in ("float32", "float64") for n in ctx.walk(fn))
        inputs = declared_names(fn) | {a.arg for a in fn.args.args + fn.args.kwonlyargs if "dtype" in a.arg.lower()}
        exits = _exit_names(fn)
        values = [r.value for r in ctx.walk(fn) if isinstance(r, ast.Return) and r.value is not None]
        values += [a.value for a in ctx.walk(fn) if isinstance(a, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id in exits for t in a.targets)]
        for call in (c for v in values for c in _outermost(v)):
            if isinstance(call, ast.Call):
                target = _cast_back(call, inputs)
                if target and (widens or target in V.HALF_DTYPES):  # a float result raised, then narrowed back
                    out.append(RawFinding(*call_pos(call), CODE, f"the golden casts its result back to {target} at exit, "
                                          f"and no spec says the case mode: ops/{name}.yaml was not found (three-party: "
                                          f"the cast is {gd102.CODE}; two-party: due only to the declared dtype)"))
    return sorted(set(out), key=lambda f: (f.line, f.col))
