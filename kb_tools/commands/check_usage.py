NAME = "check-usage"
HELP = "check a filled KB_USAGE.json against its KB_SELECTION.json and the contract"


def configure(parser):
    parser.add_argument("usage", nargs="+", help="KB_USAGE.json file(s), or the folder(s) holding one; each needs its "
                        "KB_SELECTION.json beside it")
    parser.add_argument("--root", default=".", metavar="DIR", help="directory implementation.file paths are relative to (default: .)")


def run(args):
    import sys
    from pathlib import Path

    from kb_tools.commands._common import categories_note, knowledge_base, report
    from kb_tools.contract.usage import check_usage
    from kb_tools.diagnostics import KbError, KbErrors

    kb = knowledge_base(args)
    worst = 0
    for usage in args.usage:  # a file that cannot be read is that file's result: the rest are still checked
        try:
            given = Path(usage)
            diags = check_usage(given / "KB_USAGE.json" if given.is_dir() else given, kb, Path(args.root))
        except (KbErrors, KbError) as exc:
            for d in exc.diagnostics if isinstance(exc, KbErrors) else [exc.diagnostic]:
                print(d, file=sys.stderr)
            worst = max(worst, exc.exit_code)
            continue
        status = report(diags)
        errors, warnings = (sum(d.severity == kind for d in diags) for kind in ("error", "warning"))
        print(f"kbt check-usage: {usage}: {'FAIL' if status else 'PASS'} ({errors} errors, {warnings} warnings)"
              + categories_note(diags))
        worst = max(worst, status)
    return worst
