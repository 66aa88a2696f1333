"""Reading dtypes and casts off the syntax tree, in every framework's spelling.

``torch.float16``, ``tl.bfloat16``, ``pl.BF16``, ``np.float32``, ``"fp32"`` all name a dtype;
``x.to(d)``, ``x.half()``, ``x.astype(d)``, ``vf.astype(x, ..., dtype=d)``, ``pl.cast(x, d)``
and ``tl.cast(x, d)`` all cast. Names are canonical torch names (``kb_tools.kb.vocabulary``).
"""

from __future__ import annotations

import ast

from kb_tools.audit.names import dotted
from kb_tools.kb import vocabulary as V
from kb_tools.numerics import dtypes

# Lower-cased spellings the kernel frameworks use (PyPTO-Pro's ``DT_FP16``, ``DT_INT32``): the
# vocabulary's aliases and the integer names.
FRAMEWORK_DTYPES = {**V.DTYPE_ALIASES, **{d: d for d in V.INTEGER_DTYPES}}
# Methods that cast to a fixed dtype.
FIXED_CASTS = {"half": "float16", "float": "float32", "double": "float64", "bfloat16": "bfloat16",
               "int": "int32", "long": "int64", "short": "int16", "char": "int8", "byte": "uint8"}
CAST_FUNCS = frozenset({"cast", "astype", "to"})  # pl.cast, vf.astype, tl.cast, x.to, x.astype
WIDTH = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
         "int32": 4, "int64": 8, "bool": 1}


def dtype_name(expr: ast.AST) -> str | None:
    """The canonical dtype an expression names literally, or None."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return V.canonical_dtype(expr.value)
    parts = dotted(expr)
    if not parts or len(parts) < 2:  # a bare name (``dtype``) is a variable, not a literal
        return None
    low = parts[-1].lower().removeprefix("dt_")
    if low in ("int", "float") and parts[0] not in ("torch", "np", "numpy"):
        return None  # ``self.float`` is an attribute, not a dtype
    torch_name = dtypes.canonical(parts[-1]) if parts[0] == "torch" else None  # torch.float8_e8m0fnu, torch.uint16
    return V.canonical_dtype(parts[-1]) or torch_name or FRAMEWORK_DTYPES.get(low)


def cast_target(call: ast.Call) -> tuple[str | None, ast.AST | None] | None:
    """(the dtype cast to or None when not literal, the value cast) for a cast call; None
    for any other call. ``x.to(device)`` is not a cast unless it names a dtype."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return None
    name = func.attr
    if name in FIXED_CASTS and not call.args and not call.keywords:
        if name in ("int", "float") and isinstance(func.value, ast.Name) and func.value.id in ("np", "numpy", "math"):
            return None
        return FIXED_CASTS[name], func.value
    if name not in CAST_FUNCS and name != "type":
        return None
    kw = {k.arg: k.value for k in call.keywords if k.arg}
    receiver = dotted(func.value)
    module_call = bool(receiver) and len(receiver) == 1 and receiver[0] in ("pl", "vf", "tl", "np", "numpy", "torch", "pypto")
    if module_call:  # pl.cast(x, d), vf.astype(x, mask, dtype=d), tl.cast(x, d)
        value = call.args[0] if call.args else kw.get("x") or kw.get("input")
        cands = [kw[k] for k in ("dtype", "dst_dtype", "dst_type", "type") if k in kw] + list(call.args[1:])
    else:  # x.to(d), x.to(dtype=d), x.astype(d), x.type(d)
        value = func.value
        cands = [kw[k] for k in ("dtype",) if k in kw] + list(call.args)
    named = [dtype_name(c) for c in cands]
    found = next((d for d in named if d), None)
    if found:
        return found, value
    if name == "to" and not module_call:  # .to(device) / .to(other) / .to(var)
        dtype_kw = kw.get("dtype")
        return (None, value) if dtype_kw is not None or any(isinstance(c, ast.Name) and "dtype" in c.id.lower() for c in cands) else None
    return (None, value) if cands else None


def is_float(dtype: str | None) -> bool:
    """Any floating format torch has: a cast to float8_e8m0fnu is as much a cast as one to float16."""
    return dtype in V.FLOAT_DTYPES or dtype in dtypes.FLOAT_NAMES


def is_int(dtype: str | None) -> bool:
    return dtype in V.INTEGER_DTYPES or dtype in dtypes.INTEGER_NAMES
