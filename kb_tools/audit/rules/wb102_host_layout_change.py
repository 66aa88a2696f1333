"""WB102 (host-layout-change): the wrapper transposes, permutes or copies to contiguous on the host."""

from __future__ import annotations

from kb_tools.audit import tables as tb
from kb_tools.audit.findings import Claim, Report
from kb_tools.audit.kinds import T

CODE = "WB102"


def method(attr: str, paired: bool = False) -> Claim | None:
    """A layout method; ``paired``: a ``.contiguous()`` follows it (one transpose-and-copy)."""
    if attr in tb.LAYOUT_METHODS:
        tail = " + .contiguous() (transpose and copy)" if paired and attr != "contiguous" else ""
        return Claim(Report(CODE, f"layout change .{attr}(){tail} on the host", attr), T)
    return None


def attribute(attr: str) -> Report | None:
    """``x.T``, ``x.mT`` and the other transposing attributes of a tensor."""
    return Report(CODE, f"layout change .{attr} on the host") if attr in tb.LAYOUT_ATTRS else None


def torch_function(name: str, short: str) -> Report | None:
    return Report(CODE, f"layout change torch.{name}() on the host", short) if name in tb.TORCH_LAYOUT else None


def is_layout_change(report) -> bool:
    """Is this finding one of this rule's (a ``.contiguous()`` after it is the same copy)?"""
    return report.code == CODE
