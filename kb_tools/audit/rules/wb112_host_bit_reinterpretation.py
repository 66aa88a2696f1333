"""WB112 (host-bit-reinterpretation): ``x.view(dtype)`` or ``triton.reinterpret(x, dtype)``
reinterprets bits on the host."""

from __future__ import annotations

from kb_tools.audit.findings import Report

CODE = "WB112"


def dtype_view() -> Report:
    return Report(CODE, ".view(dtype) reinterprets bits on the host", "view")


def reinterpret_call(name: str) -> Report:
    """``triton.reinterpret(x, dtype)``: the same reinterpretation, handed to the launch (it
    computes nothing, so it is not tensor arithmetic)."""
    return Report(CODE, f"{name}() reinterprets a tensor's bits on the host", name)
