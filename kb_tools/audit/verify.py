"""``kbt verify``: the contract check, the audit of the delivered wrapper and of the golden,
test and kernel each claim names (audit.claims), and the two held together. A
KB_USAGE record that claims anything (implemented, deviated, not_applicable) for a
``static`` invariant whose rule the audit finds violated fails, whatever its justification
says: no document can widen the boundary (seed 003, "no exceptions"). A ``# kbt: ignore``
in the wrapper waives nothing here, for the same reason.
"""

from __future__ import annotations

from pathlib import Path

from kb_tools.audit import audit_path
from kb_tools.contract.selection import SELECTION_FILENAME
from kb_tools.contract.usage import USAGE_FILENAME, check_usage
from kb_tools.diagnostics import EXIT_USAGE, Diagnostic, KbError, shortened
from kb_tools.files.jsonio import load_json
from kb_tools.files.text import is_file
from kb_tools.kb.pages import KnowledgeBase


def verify(out_dir: Path, kb: KnowledgeBase, source_root: Path,
           shown_dir: str | None = None) -> tuple[list[Diagnostic], str | None]:
    """(diagnostics, the wrapper file audited or None); ``shown_dir`` is ``out_dir`` as a
    command to copy names it (a review notebook reads it from its own folder, but its reader
    runs commands from the repository root)."""
    usage_path = Path(out_dir) / USAGE_FILENAME
    diags = list(check_usage(usage_path, kb, source_root))
    selection_path = Path(out_dir) / SELECTION_FILENAME
    sel = load_json(selection_path, code_prefix="SE")
    wrapper = sel.get("wrapper") if isinstance(sel, dict) else None
    golden = Path(out_dir) / "tests" / "assets" / "golden.py"  # a CANN operator folder holds its own golden
    cann = (Path(out_dir) / "op_host").is_dir() and is_file(golden)
    if (not wrapper or not isinstance(wrapper, str)) and not cann:  # a wrong type is the selection schema's finding
        diags.append(Diagnostic(str(selection_path), sel.line_of("op") if hasattr(sel, "line_of") else None, "VF001",
                                _no_wrapper_message(sel.get("op") if isinstance(sel, dict) else None, shown_dir or out_dir)))
        return sorted(set(diags)), None
    from kb_tools.audit.families import FamilyOptions

    if not wrapper or not isinstance(wrapper, str):  # its golden's rules (GD1xx) stand where a wrapper's would
        wrapper_path, result = golden, audit_path(golden, families=FamilyOptions(roles=frozenset({"golden"})))
    else:
        wrapper_path = Path(source_root) / wrapper
        if not is_file(wrapper_path):  # a name too long to look up is not there either
            raise KbError(Diagnostic(str(selection_path), sel.line_of("wrapper"), "VF002",
                                     f"wrapper file {shortened(wrapper)!r} not found under {source_root}"), EXIT_USAGE)
        result = audit_path(wrapper_path, families=FamilyOptions(roles=frozenset({"impl"})))  # the kernel family too (KN)
        if not result.wrappers:
            diags.append(Diagnostic(str(wrapper_path), None, "VF003", "no wrapper in the wrapper file (no function launches a kernel and none is named *_wrapper); nothing was audited"))
    findings = result.findings + result.suppressed
    by_code: dict[str, list] = {}
    for f in findings:
        by_code.setdefault(f.code, []).append(f)
        waived = " (a `# kbt: ignore` waives nothing under verify)" if f in result.suppressed else ""
        diags.append(Diagnostic(f.path, f.line, f.code, f"{f.message} [col {f.col}" + (f", wrapper `{f.wrapper}`]" if f.wrapper else "]") + waived))
    usage = load_json(usage_path, code_prefix="US")
    records = usage.get("invariants") if isinstance(usage, dict) and isinstance(usage.get("invariants"), list) else []
    for record in records:
        if not isinstance(record, dict):
            continue
        page = kb.by_path(record.get("reference"))
        inv = next((x for x in page.invariants if x.id == record.get("invariant_id")), None) if page else None
        if inv is None or inv.check != "static" or inv.rule not in by_code:
            continue
        impl = record.get("implementation") if isinstance(record.get("implementation"), dict) else {}
        status = impl.get("status") or "no status"
        first = by_code[inv.rule][0]
        more = len(by_code[inv.rule]) - 1
        diags.append(Diagnostic(str(usage_path), record.line, "VF010",
                                f"{record.get('reference')} {inv.id}: claims {status} but the audit finds {inv.rule} "
                                f"at {first.path}:{first.line}:{first.col}" + (f" (and {more} more)" if more else "")
                                + "; no status or justification can waive a static invariant"))
    from kb_tools.audit.claims import verify_claims  # the golden, test and kernel each claim names

    diags += verify_claims(out_dir, kb, source_root, wrapper)
    return sorted(set(diags)), str(wrapper_path)


def _no_wrapper_message(op, out_dir) -> str:
    """verify reads the selection, not the spec: an added `wrapper:` counts once re-selected."""
    spec = f"ops/{op}.yaml" if isinstance(op, str) else "ops/<op>.yaml"
    return (f"the selection names no wrapper file: add `wrapper:` to {spec}, then re-run `kbt usage {spec} -o {out_dir}` "
            "(verify reads the wrapper from KB_SELECTION.json, which a spec edit does not change); "
            "the static wrapper-boundary invariants were not audited")
