"""Which floating dtype a golden's expression casts a tensor to, when the source names it.

The golden rules (seed 000 §3, §8) are about casts written with a named dtype: ``.astype(np.float32)``,
``.to(torch.float64)``, ``.float()``, ``np.sum(x, dtype="float64")``, ``tf.cast(x, tf.float32)``.
A cast to a dtype taken at run time (``output_dtypes[i]``, ``x.dtype``) names nothing and is
not judged here. Names are followed through module constants, dtype maps and
``getattr(torch, "float32")``.
"""

from __future__ import annotations

import ast

FLOAT_NAMES = {
    "float16": "float16", "half": "float16", "fp16": "float16",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float32": "float32", "float": "float32", "fp32": "float32", "single": "float32",
    "float64": "float64", "double": "float64", "fp64": "float64",
}
WIDTH = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}
LOW = frozenset({"float16", "bfloat16"})
DTYPE_MODULES = frozenset({"np", "numpy", "torch", "tf", "tensorflow", "ml_dtypes", "jnp"})
METHOD_CASTS = {"float": "float32", "double": "float64", "half": "float16", "bfloat16": "bfloat16"}
# Calls whose dtype= makes a new buffer rather than converting a tensor.
ALLOCATORS = frozenset({
    "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "zeros_like", "ones_like",
    "full_like", "empty_like", "rand", "randn", "randint", "normal", "uniform", "range",
})


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""


def float_dtype(node: ast.AST | None, consts: dict[str, ast.AST], depth: int = 0) -> str | None:
    """The floating dtype ``node`` names (``float32`` ...), or None when it names none."""
    if node is None or depth > 8:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return FLOAT_NAMES.get(node.value.lower())
    if isinstance(node, ast.Attribute):
        root = _dotted(node.value).split(".")[0]
        if root not in DTYPE_MODULES or (node.attr == "float" and root != "torch"):
            return None
        return FLOAT_NAMES.get(node.attr)
    if isinstance(node, ast.Name):
        return float_dtype(consts.get(node.id), consts, depth + 1)
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        if name == "getattr" and len(node.args) >= 2 and _dotted(node.args[0]) in DTYPE_MODULES:
            return float_dtype(node.args[1], consts, depth + 1)
        if name.endswith(".dtype") and name.split(".")[0] in DTYPE_MODULES and node.args:
            return float_dtype(node.args[0], consts, depth + 1)
        return None
    if isinstance(node, ast.IfExp):  # either dtype may be taken: the wider one is what can go wrong
        names = [n for n in (float_dtype(node.body, consts, depth + 1), float_dtype(node.orelse, consts, depth + 1)) if n]
        return max(names, key=WIDTH.__getitem__) if names else None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        table = consts.get(node.value.id)
        key = node.slice
        if isinstance(table, ast.Dict) and isinstance(key, ast.Constant):
            for k, v in zip(table.keys, table.values):
                if isinstance(k, ast.Constant) and k.value == key.value:
                    return float_dtype(v, consts, depth + 1)
    return None


def _constant_expr(node: ast.AST) -> bool:
    """A literal number or an arithmetic of literals (``2**63``, ``-1.0``)."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp):
        return _constant_expr(node.operand)
    if isinstance(node, ast.BinOp):
        return _constant_expr(node.left) and _constant_expr(node.right)
    return False


def cast_target(call: ast.Call, consts: dict[str, ast.AST]) -> tuple[str, int] | None:
    """(floating dtype, line) when ``call`` converts a tensor to a named floating dtype.

    The line is where the cast is written (``.astype(`` of a call spread over lines).
    """
    func = call.func
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    if isinstance(func, ast.Attribute):
        line = func.end_lineno or call.lineno
        if func.attr == "astype":
            target = float_dtype(call.args[0] if call.args else kw.get("dtype"), consts)
            return (target, line) if target else None
        if func.attr == "to":
            for arg in [*call.args, kw.get("dtype")]:
                target = float_dtype(arg, consts)
                if target:
                    return target, line
            return None
        if func.attr in METHOD_CASTS and not call.args and not kw and _dotted(func.value) not in DTYPE_MODULES:
            return METHOD_CASTS[func.attr], line
        if func.attr == "cast" and _dotted(func.value).split(".")[0] in ("tf", "tensorflow"):
            target = float_dtype(call.args[1] if len(call.args) > 1 else kw.get("dtype"), consts)
            return (target, line) if target else None
        name = func.attr
    elif isinstance(func, ast.Name):
        name = func.id
        line = call.lineno
    else:
        return None
    if "dtype" in kw and name not in ALLOCATORS:
        if call.args and _constant_expr(call.args[0]):
            return None
        target = float_dtype(kw["dtype"], consts)
        return (target, line) if target else None
    return None
