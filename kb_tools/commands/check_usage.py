NAME = "check-usage"
HELP = "check a filled KB_USAGE.json against its KB_SELECTION.json and the contract"


def configure(parser):
    parser.add_argument("usage", help="path of KB_USAGE.json (KB_SELECTION.json must sit beside it)")
    parser.add_argument("--root", default=".", metavar="DIR", help="directory implementation.file paths are relative to (default: .)")


def run(args):
    from pathlib import Path

    from kb_tools.commands._common import knowledge_base, report
    from kb_tools.usage import check_usage

    diags = check_usage(Path(args.usage), knowledge_base(args), Path(args.root))
    status = report(diags)
    errors = sum(d.severity == "error" for d in diags)
    print(f"kbt check-usage: {args.usage}: {'FAIL' if status else 'PASS'} ({errors} errors, {len(diags) - errors} warnings)")
    return status
