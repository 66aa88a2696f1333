NAME = "audit"
HELP = "audit wrapper files against the wrapper boundary (seed 003): parses, never imports or runs them"


def configure(parser):
    parser.add_argument("paths", nargs="+", metavar="PATH", help="Python files holding *_wrapper functions")
    parser.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="output format (default: text)")
    parser.add_argument("--select", metavar="CODES", help="comma-separated rule codes or prefixes, e.g. WB101,WB11")
    parser.add_argument("--wrapper-pattern", default="*_wrapper", metavar="GLOB", help="which functions are wrappers (default: *_wrapper)")
    parser.add_argument("--launcher", action="append", default=[], metavar="NAME",
                        help="a function name whose call is a kernel launch (an imported kernel); repeatable")


def run(args):
    import sys

    from kb_tools.audit import audit_path, select_codes
    from kb_tools.audit.report import REPORTERS
    from kb_tools.diagnostics import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, KbError

    codes = select_codes(args.select)
    results, unusable = [], 0
    for path in args.paths:
        try:
            results.append(audit_path(path, wrapper_pattern=args.wrapper_pattern, launchers=args.launcher, select=codes))
        except KbError as exc:
            print(exc.diagnostic, file=sys.stderr)
            unusable += 1
    output = REPORTERS[args.format](results)
    if output:
        print(output)
    findings = sum(len(r.findings) for r in results)
    suppressed = sum(len(r.suppressed) for r in results)
    wrappers = sum(len(r.wrappers) for r in results)
    no_wrapper = [r.path for r in results if not r.wrappers]
    summary = sys.stdout if args.format == "text" else sys.stderr
    for path in no_wrapper:
        print(f"{path}: AU012 no function matches {args.wrapper_pattern!r}; nothing audited in this file", file=summary)
    if args.format != "text":
        for r in results:
            for f in r.suppressed:
                print(f"suppressed: {f}", file=sys.stderr)
    print(f"kbt audit: {findings} findings, {suppressed} suppressed, {wrappers} wrappers in {len(results)} files"
          + (f", {unusable} files unusable" if unusable else ""), file=summary)
    if unusable:
        return EXIT_USAGE
    return EXIT_FINDINGS if findings or (results and not wrappers) else EXIT_OK
