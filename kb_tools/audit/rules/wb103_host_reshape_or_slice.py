"""WB103 (host-reshape-or-slice): the wrapper reshapes, views, slices or iterates a tensor on the host."""

from __future__ import annotations

from kb_tools.audit import tables as tb
from kb_tools.audit.findings import Claim, Report
from kb_tools.audit.kinds import T

CODE = "WB103"


def method(attr: str, paired: bool = False) -> Claim | None:
    if attr in tb.RESHAPE_METHODS:
        return Claim(Report(CODE, f"reshape or view .{attr}() on the host", attr), T)
    return None


def attribute(attr: str) -> Report | None:
    """``x.real``, ``x.imag``: views of a tensor."""
    return Report(CODE, f"view .{attr} of a tensor on the host") if attr in tb.VIEW_ATTRS else None


def torch_function(name: str, short: str) -> Report | None:
    return Report(CODE, f"reshape or slice torch.{name}() on the host", short) if name in tb.TORCH_RESHAPE else None


def subscript() -> Report:
    return Report(CODE, "slices a tensor on the host (subscript)")


def slice_write() -> Report:
    return Report(CODE, "writes into a slice of a tensor on the host")


def iteration() -> Report:
    return Report(CODE, "iterates over a tensor on the host (slices it row by row)")
