"""WB109 (launch-count): a path through the wrapper launches no kernel, a second launch, or a
kernel chosen among several (seed 003: one kernel, launched exactly once)."""

from __future__ import annotations

from kb_tools.audit.findings import Report

CODE = "WB109"
_ONE_KERNEL = "a wrapper delivers exactly one kernel (choose the variant inside it with a constexpr)"


def end_without_launch(wrapper: str) -> Report:
    return Report(CODE, f"a path through `{wrapper}` reaches its end without launching the kernel")


def return_without_launch() -> Report:
    return Report(CODE, "returns without launching the kernel (a delivered wrapper launches once, even for an empty input)")


def second_launch() -> Report:
    return Report(CODE, "a second kernel launch on this path; a wrapper launches exactly one kernel once")


def chosen_kernel(among) -> Report:
    return Report(CODE, f"launches one of {len(among)} kernels ({', '.join(among)}) chosen on the host; {_ONE_KERNEL}",
                  "kernel-choice")


def other_kernel(kernel: str, first: str) -> Report:
    return Report(CODE, f"launches `{kernel}`, a second kernel beside `{first}` on another path; {_ONE_KERNEL}",
                  "kernel-choice")


def no_launch(wrapper: str, hint: str) -> Report:
    return Report(CODE, f"wrapper `{wrapper}` launches no kernel{hint}")
