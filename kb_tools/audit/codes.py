"""The wrapper-boundary rule codes: one code per kind of violation (as ruff and TorchFix do).

Pages name these codes in their ``static`` invariants; ``kbt lint`` refuses a code that is
not listed here, and the audit reports findings under them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleCode:
    code: str
    name: str  # short kebab-case name, stable (SARIF rule name)
    summary: str  # one line: what the wrapper did


RULES = {
    r.code: r
    for r in (
        RuleCode("WB101", "host-cast", "casts a tensor on the host (.to, .float(), .half(), .double(), .type, ...)"),
        RuleCode("WB102", "host-layout-change", "changes layout on the host (.contiguous, .permute, .movedim, .transpose, .t(), .T, .mT)"),
        RuleCode("WB103", "host-reshape-or-slice", "reshapes, views or slices a tensor on the host (.reshape, .view, .flatten, .squeeze, .unsqueeze, .expand, .narrow, .split, subscripts)"),
        RuleCode("WB104", "host-allocation", "allocates other than torch.empty for a declared output (zeros, ones, full, arange, empty_like, clone, ...)"),
        RuleCode("WB105", "host-concat-or-pad", "concatenates or pads on the host (torch.cat, torch.stack, F.pad)"),
        RuleCode("WB106", "host-data-read", "reads tensor data on the host (.item(), .tolist(), .numpy(), .cpu(), a tensor in a condition)"),
        RuleCode("WB107", "host-tensor-arithmetic", "does tensor arithmetic on the host (the operator's math belongs in the kernel)"),
        RuleCode("WB108", "host-synchronize", "synchronises a device or stream inside the wrapper (synchronisation belongs to the caller)"),
        RuleCode("WB109", "launch-count", "launches the kernel other than exactly once"),
        RuleCode("WB110", "launch-in-loop", "launches the kernel inside a loop or comprehension"),
        RuleCode("WB111", "multiple-jit-kernels", "defines more than one @pl.jit kernel in one file"),
        RuleCode("WB112", "host-bit-reinterpretation", "reinterprets bits on the host with .view(dtype); do it in the kernel"),
        RuleCode("WB113", "host-torch-call", "calls a torch function outside the whitelist (only torch.empty is allowed)"),
    )
}
