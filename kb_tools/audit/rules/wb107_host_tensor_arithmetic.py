"""WB107 (host-tensor-arithmetic): the wrapper computes with tensors on the host."""

from __future__ import annotations

from kb_tools.audit.findings import Claim, Report
from kb_tools.audit.kinds import T

CODE = "WB107"


def operator(op: str, in_place: bool = False) -> Report:
    """A binary or unary operator (``a * b``, ``-x``, ``acc += x``) with a tensor operand."""
    return Report(CODE, f"tensor arithmetic on the host ({op}{' in place' if in_place else ''})")


def comparison() -> Report:
    return Report(CODE, "elementwise tensor comparison on the host")


def value_function(name: str) -> Report:
    """A Python-value function (``triton.cdiv``, ``math.*``) given a tensor."""
    return Report(CODE, f"{name}() of a tensor computes on the host", name)


def tensor_method(attr: str) -> Claim:
    """Any other method of a known tensor computes on it."""
    return Claim(Report(CODE, f"tensor operation .{attr}() on the host", attr), T)
