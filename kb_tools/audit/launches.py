"""The launch stage of a wrapper's walk: how many kernel launches each path has made (0, 1,
or 2 for "two or more"), where a second launch, a launch in a loop and a return without a
launch are reported (WB109, WB110), and which calls are launches.
"""

from __future__ import annotations

import ast

from kb_tools.audit.buffers import same_buffer
from kb_tools.audit.kinds import K, U
from kb_tools.audit.module import launch_target

BLAMED_ZERO = -1  # a path already reported as returning without a launch


def _launch(counts: frozenset) -> frozenset:
    return frozenset(min(max(c, 0) + 1, 2) for c in counts)


class LaunchCounting:
    """Launch counts along the walk (mixed into ``WrapperAudit``)."""

    @property
    def most_launches(self) -> int:
        return max((max(c, 0) for c in self.end_counts), default=0)

    def ret(self, s, kind) -> None:
        frame = self.frame
        counts = self.counts
        if frame.launches and 0 in counts and self.nested == 0:
            self.emit((s.lineno, s.col_offset), "WB109",
                      "returns without launching the kernel (a delivered wrapper launches once, even for an empty input)")
            counts = frozenset(BLAMED_ZERO if c == 0 else c for c in counts)
        frame.returns.append(kind)
        frame.return_counts |= counts
        if len(self.frames) == 1 and s.value is not None and not self.nested:
            self.returned.update(same_buffer(s.value))
        self.counts = frozenset()

    def is_launch(self, call) -> bool:
        names = self.module.launchers | self.frame.kernel_names
        if launch_target(call, names):
            return True
        return isinstance(call.func, ast.Name) and self.env.get(call.func.id) == K

    def launch(self, call) -> str:
        if self.nested:
            return U
        pos = (call.lineno, call.col_offset)
        before = self.counts
        if self.loop_depth > 0:
            site, at = self.report_site(pos, lambda f: self.loop_depth > f.entry_loop)
            self.emit(site, "WB110", "launches the kernel inside a loop or comprehension", at=at)
        elif any(c >= 1 for c in before):
            site, at = self.report_site(pos, lambda f: not any(c >= 1 for c in f.entry_counts))
            self.emit(site, "WB109", "a second kernel launch on this path; a wrapper launches exactly one kernel once", at=at)
        else:
            self.one_kernel(call, pos)
        self.launch_sites.add(pos)
        self.counts = _launch(before)
        return U

    def relaunch(self, call) -> None:
        """A call back into a function on the walk's stack that launches (recursion): one more
        launch on this path, counted and reported as a launch is, never a new kernel."""
        if not self.nested and (self.loop_depth > 0 or any(c >= 1 for c in self.counts)):
            self.launch(call)
        elif not self.nested:
            self.counts = _launch(self.counts)

    def report_site(self, pos, belongs_here) -> tuple:
        """Where a launch problem is reported: in the innermost frame that holds its cause
        (the loop, or the earlier launch), at the call leading into the next frame; the
        position and that frame (its file, when the call leads into another module)."""
        frames = self.frames
        for i in range(len(frames) - 1, -1, -1):
            if belongs_here(frames[i]) or frames[i].called_at is None:
                return pos, frames[i]
            pos = frames[i].called_at
        return pos, frames[0]

    def one_kernel(self, call, pos) -> None:
        """Seed 003: exactly one kernel per wrapper, whichever path runs. A launch that picks
        among kernels (``k = a if c else b; k[grid](...)``), or a kernel other than the one
        an earlier launch on another branch used, is WB109 (``kernel-choice``)."""
        names = self.module.launchers | self.frame.kernel_names
        kernel = launch_target(call, names) or (call.func.id if isinstance(call.func, ast.Name) else "<kernel>")
        among = self.module.choices(self.frame.fn).get(kernel, ())
        first = next(iter(self.kernels_seen), None)
        if len(among) > 1:
            self.emit(pos, "WB109", f"launches one of {len(among)} kernels ({', '.join(among)}) chosen on the host; "
                      "a wrapper delivers exactly one kernel (choose the variant inside it with a constexpr)", "kernel-choice")
        elif first is not None and kernel not in self.kernels_seen:
            self.emit(pos, "WB109", f"launches `{kernel}`, a second kernel beside `{first}` on another path; "
                      "a wrapper delivers exactly one kernel (choose the variant inside it with a constexpr)", "kernel-choice")
        self.kernels_seen.setdefault(kernel, pos)
