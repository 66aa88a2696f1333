"""The launch stage of a wrapper's walk: how many kernel launches each path has made (0, 1,
or 2 for "two or more"), where a second launch, a launch in a loop and a return without a
launch are reported (``rules.wb109_launch_count``, ``rules.wb110_launch_in_loop``), which
calls are launches, and the calls through a dispatch table (``dispatch``): one branch per
function the table holds.
"""

from __future__ import annotations

import ast

from kb_tools.audit.buffers import same_buffer
from kb_tools.audit.evidence import torch_name
from kb_tools.audit.findings import method_pos
from kb_tools.audit.kinds import K, U, join
from kb_tools.audit.module import launch_target
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.rules import wb109_launch_count as wb109, wb110_launch_in_loop as wb110

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
            self.emit((s.lineno, s.col_offset), *wb109.return_without_launch())
            counts = frozenset(BLAMED_ZERO if c == 0 else c for c in counts)
        frame.returns.append(kind)
        frame.return_counts |= counts
        if s.value is not None and not self.nested:
            frame.returned.update(same_buffer(s.value))
        self.counts = frozenset()

    def target(self, call) -> str | None:
        """The kernel ``call`` launches (``module.launch_target``, dispatch tables read)."""
        return launch_target(call, self.frame.known, self.module.tables, self.frame.fn)

    def is_launch(self, call) -> bool:
        if self.target(call):
            return True
        return isinstance(call.func, ast.Name) and self.env.get(call.func.id) == K

    def dispatched(self, call):
        """The dispatch site of a call that runs a table's values as functions, else None."""
        site = self.module.tables.site(call, self.frame.fn)
        return site if site is not None and not site.grid else None

    def call_table(self, call, site):
        """``table[key](args)``: each function the table holds runs from the same state, as one
        branch of an ``if`` would; a kernel among them is a launch, a torch function a torch call.
        A value the walk cannot follow (a lambda, a call, a function from outside the tree) is
        told once at the call, and no path through it is told it launched nothing. The functions
        are the variants the key picks among (``fn[mode]``: one operator per mode), so the kernel
        each launches is not "another kernel" beside the others'; a second launch on one path
        still is one."""
        self.expr(call.func)
        counts0, ends, kinds = self.counts, [], []
        unknown = site.table.unknown
        kernels = self.frame.known
        seen0, seen = self.kernels_seen, {}
        for member in site.table.members:
            self.counts = counts0
            self.kernels_seen = dict(seen0)
            if isinstance(member, ast.Name) and member.id in kernels:
                self.args(call)
                kinds.append(self.launch(call))
            elif (found := self.defined(member)) is not None:
                kinds.append(self.call_helper(call, found[1], found[0]))
            elif (name := torch_name(qualname(member, self.aliases))) is not None:
                kinds.append(self.torch_call(call, name))  # ACT = {"gelu": F.gelu}: torch work on the host
            else:
                unknown = True
                continue
            ends.append(self.counts)
            for kernel, pos in self.kernels_seen.items():
                seen.setdefault(kernel, pos)
        self.kernels_seen = {**seen0, **seen}
        if unknown:
            if not ends:
                self.args(call)
            where = self.parsed.path if self.parsed is not None else None
            self.unfollowed.add((where, call.lineno, site.table.name, site.table.why))
            ends.append(frozenset(BLAMED_ZERO if c == 0 else c for c in counts0))
        self.counts = frozenset().union(*ends)
        return join(*kinds) if kinds else U

    def launch(self, call) -> str:
        if self.nested:
            return U
        pos = (call.lineno, call.col_offset)
        before = self.counts
        if self.loop_depth > 0:
            self.report(pos, *wb110.in_loop())
        elif any(c >= 1 for c in before):
            self.report(pos, *wb109.second_launch())
        else:
            self.one_kernel(call, pos)
        self.launch_sites.add(pos)
        self.counts = _launch(before)
        self.unbound_empties(call)
        return U

    def unbound_empties(self, call) -> None:
        """A ``torch.empty`` written straight into a launch's arguments (``x if c else
        torch.empty(1)``, a dummy pointer) is bound to no name, so never returned: scratch."""
        stack = [*call.args, *(k.value for k in call.keywords)]
        while stack:
            arg = stack.pop()
            if isinstance(arg, ast.IfExp):
                stack += [arg.body, arg.orelse]
            elif isinstance(arg, ast.Call) and torch_name(qualname(arg.func, self.aliases)) == "empty":
                pos = method_pos(arg.func) if isinstance(arg.func, ast.Attribute) else (arg.lineno, arg.col_offset)
                places = self.frame.empties.setdefault("a launch argument", [])
                if pos not in places:
                    places.append(pos)

    def relaunch(self, call) -> None:
        """A call back into a function on the walk's stack that launches (recursion): one more
        launch on this path, counted and reported as a launch is, never a new kernel."""
        if not self.nested and (self.loop_depth > 0 or any(c >= 1 for c in self.counts)):
            self.launch(call)
        elif not self.nested:
            self.counts = _launch(self.counts)

    def report(self, pos, code: str, message: str, op: str = "") -> None:
        """A launch problem is the wrapper's: it is reported in the wrapper's own code, at the
        launch or at the call leading to the helper that launches (named in the message). A
        helper that is a wrapper too is told at its own line when it is audited as one."""
        frames = self.frames
        inner = frames[-1].name if len(frames) > 1 else None
        for frame in frames[:0:-1]:
            pos = frame.called_at
        self.emit(pos, code, message + (f" (the launch is in `{inner}`)" if inner else ""), op, at=frames[0])

    def one_kernel(self, call, pos) -> None:
        """Seed 003: exactly one kernel per wrapper, whichever path runs. A launch that picks
        among kernels (``k = a if c else b; k[grid](...)``), or a kernel other than the one
        an earlier launch on another branch used, is reported as ``kernel-choice``."""
        kernel = self.target(call) or (call.func.id if isinstance(call.func, ast.Name) else "<kernel>")
        among = self.module.choices(self.frame.fn).get(kernel, ()) or self.table_choice(call)
        first = next(iter(self.kernels_seen), None)
        if len(among) > 1:
            self.report(pos, *wb109.chosen_kernel(among))
        elif first is not None and kernel not in self.kernels_seen:
            self.report(pos, *wb109.other_kernel(kernel, first))
        self.kernels_seen.setdefault(kernel, pos)

    def table_choice(self, call) -> tuple[str, ...]:
        """The kernels a launch through a dispatch table picks among (``KERNELS[dtype][grid](x)``)."""
        site = self.module.tables.site(call, self.frame.fn)
        names = tuple(sorted(".".join(dotted(m)) for m in site.table.members)) if site is not None else ()
        return names if len(names) > 1 else ()
