"""GD104 (integer-narrowing): integer division or remainder on tensors in a golden function
that guards neither zero divisors nor ``INT_MIN / -1``.
"""

from __future__ import annotations

import ast

from kb_tools.audit.casts import dtype_name, is_int
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.module import FUNCTION_DEFS
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.roles import GOLDEN
from kb_tools.audit.tables import TORCH_CONSTRUCTORS
from kb_tools.kb import vocabulary as V
from kb_tools.syntax import walk_nodes

CODE = "GD104"
ROLES = (GOLDEN,)  # the file roles (kb_tools/audit/roles.py) the rule reads
DIVISION_FUNCS = frozenset({"floor_divide", "remainder", "fmod", "floordiv", "floormod", "truncatediv", "truncatemod", "mod"})


ROUNDED_DIVS = frozenset({"div", "divide"})  # division only with rounding_mode=
TENSOR_MODULES = ("torch", "numpy", "tensorflow")


NOT_TENSOR_RESULTS = frozenset({"item", "tolist", "numel", "size", "dim", "iinfo", "finfo", "prod", "Size"})


def _tensor_names(fn: ast.AST, aliases: dict[str, str]) -> set[str]:
    """Names a function evidently uses as tensors: results of torch/numpy/tf calls, receivers
    of tensor methods, arguments of torch functions."""
    names = set()
    for node in walk_nodes(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            q = qualname(node.value.func, aliases) or ""
            if q.split(".")[-1] in NOT_TENSOR_RESULTS:
                continue
            if q.split(".")[0] in TENSOR_MODULES or (isinstance(node.value.func, ast.Attribute) and isinstance(node.value.func.value, ast.Name)
                                                     and node.value.func.value.id in names):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Call):
            q = qualname(node.func, aliases) or ""
            if q.split(".")[0] in TENSOR_MODULES and q.split(".")[-1] not in TORCH_CONSTRUCTORS:
                names.update(a.id for a in node.args if isinstance(a, ast.Name))  # torch.remainder(a, b); not torch.randn(n)
            if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.attr in (
                    "to", "numpy", "int", "long", "short", "char", "byte", "astype", "view", "reshape", "clone", "masked_fill"):
                names.add(node.func.value.id)
        elif isinstance(node, ast.Attribute) and node.attr in ("dtype", "shape") and isinstance(node.value, ast.Name):
            names.add(node.value.id)
    return names


def _names_integer_dtype(fn: ast.AST) -> bool:
    """Whether a function names an integer dtype (torch.int32, np.int8, "int64"): without a
    spec, the evidence that its divisions are integer divisions."""
    return any(is_int(dtype_name(n)) for n in walk_nodes(fn) if isinstance(n, (ast.Attribute, ast.Constant)))


def _division_sites(fn: ast.AST, aliases: dict[str, str]):
    tensors = None
    for node in walk_nodes(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            tensors = _tensor_names(fn, aliases) if tensors is None else tensors
            if any(isinstance(side, ast.Name) and side.id in tensors for side in (node.left, node.right)):
                yield node, "//" if isinstance(node.op, ast.FloorDiv) else "%"
        elif isinstance(node, ast.Call):
            parts = dotted(node.func) or []
            name = parts[-1] if parts else None
            q = qualname(node.func, aliases) or ""
            tensor_call = q.split(".")[0] in TENSOR_MODULES or (isinstance(node.func, ast.Attribute) and len(parts) != 1)
            if name in DIVISION_FUNCS and tensor_call:
                yield node, name
            elif name in ROUNDED_DIVS and tensor_call and any(k.arg == "rounding_mode" for k in node.keywords):
                yield node, f"{name}(rounding_mode=...)"


def _guards(fn: ast.AST) -> tuple[bool, bool]:
    """(a zero divisor is checked, INT_MIN / -1 is checked) somewhere in the function."""
    zero = minus_one = False
    for node in walk_nodes(fn):
        values = []
        if isinstance(node, ast.Compare):
            values = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("eq", "ne", "where", "isin"):
            values = list(node.args)
        elif isinstance(node, ast.Attribute) and node.attr == "min" and isinstance(node.value, ast.Call) and (dotted(node.value.func) or [""])[-1] == "iinfo":
            minus_one = True
        for v in values:
            if isinstance(v, ast.Constant) and v.value == 0 and not isinstance(v.value, bool):
                zero = True
            if (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub) and isinstance(v.operand, ast.Constant) and v.operand.value == 1) or (
                    isinstance(v, ast.Constant) and v.value == -1):
                minus_one = True
    return zero, minus_one


def check(ctx: FileContext) -> list[RawFinding]:
    if ctx.spec is not None and not any(d in V.INTEGER_DTYPES for d in ctx.spec.dtypes):
        return []
    out = []
    for fn in ctx.functions:
        inner = {id(n) for f in ctx.walk(fn) if f is not fn and isinstance(f, FUNCTION_DEFS) for n in ctx.walk(f)}
        sites = [(n, what) for n, what in _division_sites(fn, ctx.aliases) if id(n) not in inner]
        if not sites or (ctx.spec is None and not _names_integer_dtype(fn)):
            continue
        zero, minus_one = _guards(fn)
        missing = [g for g, ok in (("zero divisors", zero), ("INT_MIN / -1", minus_one)) if not ok]
        if missing:
            out.extend(RawFinding(n.lineno, n.col_offset, CODE, f"integer {what} in `{fn.name}` with no guard for "
                                  f"{' or '.join(missing)}") for n, what in sites)
    return out
