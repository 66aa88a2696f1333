"""The wrapper-boundary rule codes: one code per kind of violation (as ruff and TorchFix do).

Pages name these codes in their ``static`` invariants; ``kbt lint`` refuses a code that is
not listed here, and the audit reports findings under them. The numbers and meanings are
fixed: pages, KB_USAGE files and SARIF uploads refer to them. ``fix`` says where the work
goes instead (seed 003, the host-op -> in-kernel migration table).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RuleCode:
    code: str
    name: str  # short kebab-case name, stable (SARIF rule name)
    summary: str  # one line: what the wrapper did
    fix: str = ""  # one line: what to do instead


RULES = {
    r.code: r
    for r in (
        RuleCode("WB101", "host-cast", "casts a tensor on the host (.to, .float(), .half(), .double(), .type, ...)",
                 "load the native dtype in the kernel and convert per tile (pl.cast / vf.astype, platform-gated)"),
        RuleCode("WB102", "host-layout-change", "changes layout on the host (.contiguous, .permute, .movedim, .transpose, .t(), .T, .mT)",
                 "index the axis through its stride and offset in the kernel's tile loop; use a strided copy instead of .contiguous()"),
        RuleCode("WB103", "host-reshape-or-slice", "reshapes, views or slices a tensor on the host (.reshape, .view, .flatten, .squeeze, .unsqueeze, .expand, .narrow, .split, subscripts)",
                 "pass the real shape (or a base address plus an offset) and compute flat offsets in the kernel"),
        RuleCode("WB104", "host-allocation", "allocates other than torch.empty for a declared output (zeros, ones, full, arange, empty_like, clone, ...)",
                 "allocate declared outputs with torch.empty and write every element (or initialise) in the kernel; compute indices arithmetically"),
        RuleCode("WB105", "host-concat-or-pad", "concatenates or pads on the host (torch.cat, torch.stack, F.pad)",
                 "pass every operand to the kernel and choose inside the loop; handle tails with pl.set_validshape"),
        RuleCode("WB106", "host-data-read", "reads tensor data on the host (.item(), .tolist(), .numpy(), .cpu(), a tensor in a condition)",
                 "read only metadata on the host; decisions that depend on values belong in the kernel"),
        RuleCode("WB107", "host-tensor-arithmetic", "does tensor arithmetic on the host (the operator's math belongs in the kernel)",
                 "move the computation into the kernel; the wrapper may only do Python integer arithmetic on metadata"),
        RuleCode("WB108", "host-synchronize", "synchronises a device or stream inside the wrapper (synchronisation belongs to the caller)",
                 "delete it: the caller owns synchronisation"),
        RuleCode("WB109", "launch-count", "launches the kernel other than exactly once",
                 "launch the one kernel exactly once; flatten lists into fixed slots"),
        RuleCode("WB110", "launch-in-loop", "launches the kernel inside a loop or comprehension",
                 "flatten the TensorList into a fixed set of pointer slots and launch once"),
        RuleCode("WB111", "multiple-jit-kernels", "defines more than one @pl.jit kernel in one file",
                 "deliver exactly one @pl.jit kernel; fuse the phases into it"),
        RuleCode("WB112", "host-bit-reinterpretation", "reinterprets bits on the host with .view(dtype); do it in the kernel",
                 "pass the tensor as a pl.Ptr and read it in the kernel as the type it needs"),
        RuleCode("WB113", "host-torch-call", "calls a torch function outside the whitelist (only torch.empty is allowed)",
                 "only torch.empty, for the declared outputs; everything else belongs in the kernel"),
    )
}
