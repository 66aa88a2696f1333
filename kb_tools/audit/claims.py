"""Each claim's evidence audited by the rule it names (issue 38 item 1, issue 41 item 2).

A KB_USAGE record that says ``implemented`` for a static invariant points at a file: the
golden for a GD rule, the test for a TS rule, the kernel for a KN rule, the wrapper for a WB
rule. ``kbt verify`` audits that file with the rule family of the claim (as well as the
roles the file shows by itself), reports every finding in it with its line, and fails the
claim (VF011) when its own rule is among them. The delivered wrapper is audited by
``kb_tools.audit.verify`` already and is skipped here."""

from __future__ import annotations

import os
from pathlib import Path

from kb_tools.diagnostics import Diagnostic, KbError, KbErrors

# The roles whose rule family holds a code, by the code's first letters (kb_tools/audit/roles.py names).
ROLES_OF_FAMILY = {"GD": ("golden", "third_party"), "TS": ("test",), "KN": ("impl",), "WB": ("impl",)}


def verify_claims(folder: Path, kb, source_root: Path, wrapper: str | None) -> list[Diagnostic]:
    """``claim_findings`` for the KB_USAGE.json in ``folder``, with the spec found for it;
    nothing when the usage file cannot be read (check-usage says why)."""
    from kb_tools.contract.usage_shape import load_usage

    usage_path = Path(folder) / "KB_USAGE.json"
    try:
        doc = load_usage(usage_path)
    except (KbError, KbErrors):
        return []
    records = [r for r in doc.get("invariants", []) if isinstance(r, dict)] if isinstance(doc.get("invariants"), list) else []
    wrapper_path = Path(source_root) / wrapper if isinstance(wrapper, str) and wrapper else None
    return claim_findings(records, kb, usage_path, source_root, wrapper_path, spec_beside(folder))


def claim_findings(records, kb, usage_path: Path, source_root: Path, wrapper_path: Path | None,
                   spec=None) -> list[Diagnostic]:
    """Every finding in the Python files the records name (the wrapper excepted), and a VF011
    for each ``implemented`` static claim whose own rule its file breaks."""
    wanted: dict[str, set[str]] = {}
    claims = []
    for record in records:
        impl = record.get("implementation") if isinstance(record.get("implementation"), dict) else {}
        name = impl.get("file")
        if not isinstance(name, str) or not name.endswith(".py"):
            continue
        roles = wanted.setdefault(name, set())
        page = kb.by_path(record.get("reference")) if isinstance(record.get("reference"), str) else None
        inv = next((x for x in page.invariants if x.id == record.get("invariant_id")), None) if page else None
        if inv is not None and inv.check == "static" and inv.rule and impl.get("status") == "implemented":
            roles.update(claimed_roles(inv.rule))
            claims.append((record, inv, name))
    skip = os.path.realpath(wrapper_path) if wrapper_path is not None else None
    found: dict[str, list] = {}
    diags: list[Diagnostic] = []
    for name, roles in wanted.items():
        path = _under(source_root, name)
        if path is None or os.path.realpath(path) == skip:
            continue  # outside the root or missing is check-usage's US045; the wrapper is audited already
        found[name] = _audit(path, frozenset(roles), spec)
        diags += [Diagnostic(f.path, f.line, f.code, f"{f.message} [col {f.col}, claimed evidence]") for f in found[name]]
    for record, inv, name in claims:
        hits = [f for f in found.get(name, ()) if f.code == inv.rule]
        if hits:
            more = f" (and {len(hits) - 1} more)" if len(hits) > 1 else ""
            diags.append(Diagnostic(str(usage_path), record.line, "VF011",
                                    f"{record.get('reference')} {inv.id}: claims implemented in {name}, but {name}:{hits[0].line} "
                                    f"breaks {inv.rule} ({hits[0].message}){more}; fix the code, the claim cannot waive it"))
    return diags


def claimed_roles(code: str) -> tuple[str, ...]:
    """The roles the claimed rule reads (its module's ``ROLES``): a claim on a third-party rule
    makes its file a third-party leg, not a golden too, so the leg's widening cast is not judged
    as a golden's.
    A code with no rule module (the wrapper's) takes its family's roles."""
    import importlib

    from kb_tools.audit.codes import RULES

    rule = RULES.get(code)
    module = importlib.import_module(f"kb_tools.audit.rules.{rule.module}") if rule and rule.module else None
    return getattr(module, "ROLES", None) or ROLES_OF_FAMILY.get(code[:2], ())


def _under(root: Path, name: str) -> Path | None:
    """``root/name`` when it is a regular file inside the root (links resolved), else None."""
    from kb_tools.files.confine import OutsideRoot, resolve_inside

    try:
        target = resolve_inside(root, name)
    except OutsideRoot:  # outside, or a NUL byte: check-usage's US045 says which
        return None
    return Path(root) / name if os.path.isfile(target) else None


def _audit(path: Path, claimed: frozenset[str], spec) -> list:
    """The findings of the file under the roles it shows and the roles its claims give it. A
    ``# kbt: ignore[CODE]`` on a golden's or a test's line stands here (a test that compares
    bit for bit on purpose says so); only the wrapper boundary admits no exception, and the
    wrapper is audited by verify itself."""
    from kb_tools.audit import audit_path
    from kb_tools.audit.families import FamilyOptions

    try:
        result = audit_path(path, families=FamilyOptions(spec=spec))
        findings = list(result.findings)
        missing = claimed - (result.roles or frozenset())
        if missing:
            again = audit_path(path, families=FamilyOptions(roles=(result.roles or frozenset()) | claimed, spec=spec))
            findings += [f for f in again.findings if f not in findings]
    except (KbError, KbErrors):
        return []  # an unreadable file is reported by check-usage
    return findings


def spec_beside(folder: Path):
    """The spec for the usage folder as every command finds one (contract.discovery: the
    selection's op among the ops/*.yaml at or above it); None when none is found, and the
    audit then looks for one by each file's name."""
    from kb_tools.contract.discovery import discover

    try:
        return discover(folder).spec
    except (KbError, KbErrors):
        return None
