"""WB112 (host-bit-reinterpretation): ``x.view(dtype)`` reinterprets bits on the host."""

from __future__ import annotations

from kb_tools.audit.findings import Report

CODE = "WB112"


def dtype_view() -> Report:
    return Report(CODE, ".view(dtype) reinterprets bits on the host", "view")
