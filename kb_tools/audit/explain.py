"""What the registry says about the audit's rules, as text a person reads: one rule in full
(``kbt explain CODE``, as ``ruff rule CODE``) and every rule as one Markdown table
(``docs/audit-rules.md`` holds ``rule_table()`` word for word; a test keeps them equal).
Both read ``codes.RULES`` alone, so neither can drift from what the audit reports.
"""

from __future__ import annotations

from kb_tools.audit.codes import RULES, RuleCode


def _policies(rule: RuleCode) -> str:
    """Which lenient readings let which of the rule's operations pass ("" when none does)."""
    by_policy: dict[str, list[str]] = {}
    for op, names in rule.passes.items():
        for name in names:
            by_policy.setdefault(name, []).append("every operation" if op == "*" else f"`{op}`")
    return "; ".join(f"{name}: {', '.join(ops)}" for name, ops in by_policy.items())


def explain(code: str) -> str:
    """One rule in full: code and name, level, what it reports, the fix, where its detection
    lives, the pages that state it and what each lenient policy lets pass."""
    rule = RULES[code]
    lines = [f"{rule.code} ({rule.name}), {rule.level}",
             f"  reports: {rule.summary}",
             f"  fix:     {rule.fix}",
             f"  rule:    kb_tools/audit/rules/{rule.module}.py",
             f"  pages:   {', '.join(f'kb/{p}.md' for p in rule.pages) or '(none states it)'}",
             f"  lenient: {_policies(rule) or 'no policy lets it pass'}"]
    return "\n".join(lines)


def rule_table() -> str:
    """Every rule as one Markdown table, in code order."""
    rows = ["| code | name | level | reports | fix | pages | lenient policies let pass |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for code in sorted(RULES):
        r = RULES[code]
        pages = ", ".join(f"[{p}](../kb/{p}.md)" for p in r.pages)
        rows.append(f"| `{code}` | {r.name} | {r.level} | {r.summary.replace('|', '/')} | {r.fix.replace('|', '/')} "
                    f"| {pages} | {_policies(r)} |")
    return "\n".join(rows) + "\n"
