"""Named readings of seed 003's wrapper boundary: which host operations each lets pass.

``strict`` (the default) is the seed to the letter: exactly one ``pl.jit`` kernel, launched
once on every path; ``torch.empty`` only for the outputs the wrapper returns; no other
``torch.*`` call, device queries and device contexts included, through any alias. The other
policies reproduce the readings of tools that read the same rule more leniently, so that a
user can tell which reading a finding comes from; each names its source. A finding is
tagged with the operation that made it (``RawFinding.op``: ``contiguous``, ``zeros``,
``scratch-empty``, ...), and a policy allows (code, operation) pairs, ``*`` for every
operation under a code; each rule's entry in the registry (``codes.RuleCode.passes``) says
which policies let which of its operations pass. ``docs/audit-policies.md`` holds
``policy_table()``; a test keeps the two equal.
"""

from __future__ import annotations

from dataclasses import dataclass

from kb_tools.audit.codes import RULES

DEFAULT_POLICY = "strict"


@dataclass(frozen=True)
class Policy:
    name: str
    source: str  # where the reading comes from
    reading: str  # one line: what it lets pass
    allows: frozenset[tuple[str, str]] = frozenset()

    def allowed(self, code: str, op: str) -> bool:
        return (code, "*") in self.allows or (code, op) in self.allows


def _allows(policy: str) -> frozenset[tuple[str, str]]:
    """The (code, operation) pairs the registry says ``policy`` lets pass. What every lenient
    reading lets pass (``LENIENT_READINGS``) is what the audit let pass before issue 24: a
    kernel chosen by branch, a scratch torch.empty, a device context reached through an alias,
    and the autocast-state read of torch's @custom_fwd (it read no decorator of torch; the blind
    labels mark that read strict-only, as a metadata query)."""
    return frozenset((code, op) for code, rule in RULES.items() for op, names in rule.passes.items() if policy in names)


POLICIES = {p.name: p for p in (
    Policy("strict", "seed 003 (wrapper-boundary), 'no exceptions' and 'how it is checked'",
           "nothing beyond the seed's whitelist: one kernel launched once, torch.empty for returned outputs only, "
           "no other torch.* call (device aliases included)"),
    Policy("lenient", "kbt audit before issue 24 (opkb 0ced64c)",
           "also a kernel chosen by branch, a scratch torch.empty, a torch call through getattr(torch, device), "
           "@custom_fwd's read of the autocast state", _allows("lenient")),
    Policy("pypto-op-lint", "hicann/pypto .agents/hooks/pypto-op-lint (as issue 24 reports its reading)",
           "also torch.zeros, casts and reshapes", _allows("pypto-op-lint")),
    Policy("agent-verifier", "an agent verifier's whitelist (as issue 24 reports its reading)",
           "also .contiguous(), .to(), .reshape() and .clone()", _allows("agent-verifier")),
)}


def strict_only(code: str, op: str) -> bool:
    """A finding every other policy lets pass: only the strict reading makes it."""
    return all(p.allowed(code, op) for name, p in POLICIES.items() if name != "strict")


def policy_table() -> str:
    """The policies as one Markdown table (``docs/audit-policies.md`` holds exactly this)."""
    rows = ["| policy | lets pass | source |", "| --- | --- | --- |"]
    rows += [f"| `{p.name}`{' (default)' if p.name == DEFAULT_POLICY else ''} | {p.reading} | {p.source} |"
             for p in POLICIES.values()]
    return "\n".join(rows) + "\n"
