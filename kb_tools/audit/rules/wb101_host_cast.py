"""WB101 (host-cast): the wrapper converts a tensor's dtype or device on the host."""

from __future__ import annotations

from kb_tools.audit import tables as tb
from kb_tools.audit.findings import Claim, Report
from kb_tools.audit.kinds import T

CODE = "WB101"


def method(attr: str, paired: bool = False) -> Claim | None:
    """``x.float()``, ``x.to(...)``, ``x.type(...)`` and the other cast methods."""
    if attr in tb.CAST_METHODS:
        return Claim(Report(CODE, f"host cast .{attr}()", attr), T)
    return None


def to_device_or_dtype() -> Report:
    """``v.to(device)`` of a value of unknown kind: only torch objects have such a method."""
    return Report(CODE, "host cast .to() (to a device or dtype)", "to")
