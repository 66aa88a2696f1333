"""WB108 (host-synchronize): the wrapper synchronises a device or stream (the caller's job)."""

from __future__ import annotations

from kb_tools.audit import tables as tb
from kb_tools.audit.findings import Report

CODE = "WB108"


def torch_function(name: str, short: str) -> Report | None:
    if name.endswith("synchronize"):
        return Report(CODE, f"torch.{name}() in the wrapper: synchronisation belongs to the caller", short)
    return None


def method(attr: str) -> Report | None:
    """``stream.synchronize()``, ``wait_stream``, ``wait_event`` on whatever object."""
    if attr in tb.SYNC_METHODS:
        return Report(CODE, f".{attr}() in the wrapper: synchronisation belongs to the caller", attr)
    return None
