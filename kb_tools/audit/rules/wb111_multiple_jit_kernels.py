"""WB111 (multiple-jit-kernels): a file that delivers a wrapper defines more than one @pl.jit kernel."""

from __future__ import annotations

from kb_tools.audit.findings import RawFinding

CODE = "WB111"


def extra_kernels(kernels: list) -> list[RawFinding]:
    """Every ``@pl.jit`` kernel after the first, as a finding at its definition."""
    return [RawFinding(k.lineno, k.col_offset, CODE, f"second @pl.jit kernel `{k.name}` in this file (the first is "
                       f"`{kernels[0].name}`)") for k in kernels[1:]]
