"""WB106 (host-data-read): the wrapper reads tensor data on the host (a method, a builtin, a
condition, a formatted string)."""

from __future__ import annotations

from kb_tools.audit import tables as tb
from kb_tools.audit.findings import Claim, Report
from kb_tools.audit.kinds import P, T

CODE = "WB106"


def method(attr: str, paired: bool = False) -> Claim | None:
    """``.item()``, ``.tolist()``, ``.numpy()``, ``.cpu()`` (which still gives a tensor)."""
    if attr in tb.DATA_METHODS:
        return Claim(Report(CODE, f".{attr}() reads tensor data on the host", attr), T if attr == "cpu" else P)
    return None


def condition() -> Report:
    return Report(CODE, "uses a tensor in a condition (reads its data on the host)")


def formatted() -> Report:
    return Report(CODE, "formats a tensor's data into a string on the host")


def builtin(name: str) -> Report:
    """``float(x)``, ``list(x)``, ``print(x)`` of a tensor."""
    return Report(CODE, f"{name}() of a tensor reads its data on the host")
