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
    diags, audited = verify(folder, kb, Path(args.root))
    status = report(diags)
    errors, warnings = (sum(d.severity == kind for d in diags) for kind in ("error", "warning"))
    print(f"kbt verify: {args.dir}: {'FAIL' if status else 'PASS'} ({errors} errors, {warnings} warnings; "
          f"audited {audited or 'no wrapper'})" + categories_note(diags))
    return status
