"""WB105 (host-concat-or-pad): the wrapper concatenates, stacks or pads tensors on the host."""

from __future__ import annotations

from kb_tools.audit import tables as tb
from kb_tools.audit.findings import Report

CODE = "WB105"


def torch_function(name: str, short: str) -> Report | None:
    if name in tb.TORCH_CONCAT_PAD or short == "pad":
        return Report(CODE, f"torch.{name}() concatenates or pads on the host", short)
    return None
