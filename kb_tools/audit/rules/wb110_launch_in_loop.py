"""WB110 (launch-in-loop): the wrapper launches its kernel inside a loop or comprehension."""

from __future__ import annotations

from kb_tools.audit.findings import Report

CODE = "WB110"


def in_loop() -> Report:
    return Report(CODE, "launches the kernel inside a loop or comprehension")
