NAME = "verify"
HELP = "check-usage, the audit of the spec's wrapper, and KB_USAGE claims against the audit's findings"


def configure(parser):
    parser.add_argument("dir", help="directory holding KB_SELECTION.json and KB_USAGE.json (or its KB_USAGE.json)")
    parser.add_argument("--root", default=".", metavar="SRC", help="source root the wrapper and implementation paths are relative to (default: .)")


def run(args):
    from pathlib import Path

    from kb_tools.commands._common import categories_note, knowledge_base, report
    from kb_tools.audit.verify import verify

    kb = knowledge_base(args)
    folder = Path(args.dir)
    folder = folder.parent if folder.is_file() else folder  # the usage file named instead of its folder
    _wrapper_inside(folder, Path(args.root))
    diags, audited = verify(folder, kb, Path(args.root))
    status = report(diags)
    errors, warnings = (sum(d.severity == kind for d in diags) for kind in ("error", "warning"))
    print(f"kbt verify: {args.dir}: {'FAIL' if status else 'PASS'} ({errors} errors, {warnings} warnings; "
          f"audited {audited or 'no wrapper'})" + categories_note(diags))
    return status


def _wrapper_inside(folder, root) -> None:
    """Refuse, in one line, a selection whose wrapper resolves outside the source root (links
    followed): verify audits that file, and nothing outside the root is read. A selection that
    cannot be read is left to verify, which says why."""
    from kb_tools.diagnostics import EXIT_USAGE, KbError, KbErrors, fail
    from kb_tools.files.confine import OutsideRoot, resolve_inside
    from kb_tools.files.jsonio import load_json

    path = folder / "KB_SELECTION.json"
    try:
        selection = load_json(path, code_prefix="SE")
    except (KbError, KbErrors):
        return
    wrapper = selection.get("wrapper") if isinstance(selection, dict) else None
    if isinstance(wrapper, str) and wrapper:
        try:
            resolve_inside(root, wrapper, "wrapper", "the source root")
        except OutsideRoot as exc:
            line = selection.line_of("wrapper") if hasattr(selection, "line_of") else None
            fail(path, line, "VF004", f"{exc}; nothing outside it is audited (pass --root)", EXIT_USAGE)
