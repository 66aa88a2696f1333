"""WB104 (host-allocation): the wrapper allocates other than ``torch.empty`` for a declared output."""

from __future__ import annotations

from kb_tools.audit import tables as tb
from kb_tools.audit.findings import Claim, Report
from kb_tools.audit.kinds import T

CODE = "WB104"


def method(attr: str, paired: bool = False) -> Claim | None:
    if attr in tb.ALLOC_METHODS:
        return Claim(Report(CODE, f"allocation .{attr}() on the host; only torch.empty for the declared outputs is allowed",
                            attr), T)
    return None


def torch_function(name: str, short: str) -> Report | None:
    if name in tb.TORCH_ALLOC:
        return Report(CODE, f"allocation torch.{name}(); only torch.empty for the declared outputs is allowed", short)
    return None


def scratch(name: str, function: str) -> Report:
    """A ``torch.empty`` the function never returns: a scratch buffer, not a declared output."""
    return Report(CODE, f"torch.empty for `{name}`, which `{function}` never returns: a scratch buffer, not a declared "
                  "output; allocate it in the kernel's workspace or declare it", "scratch-empty")


def handed_on(function: str) -> Report:
    """A ``torch.empty`` in a function the wrapper hands on (an allocator) and never calls."""
    return Report(CODE, f"torch.empty in `{function}`, which the wrapper hands on and never calls: a scratch buffer, "
                  "not a declared output; allocate it in the kernel's workspace or declare it", "scratch-empty")
