NAME = "audit"
HELP = "audit wrapper files against the wrapper boundary (seed 003): parses, never imports or runs them"


def configure(parser):
    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="Python files, or directories to search for *.py (hidden folders, virtual environments and build/ skipped)")
    parser.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="output format (default: text)")
    parser.add_argument("--select", metavar="CODES", help="comma-separated rule codes or prefixes, e.g. WB101,WB11")
    parser.add_argument("--wrapper-pattern", action="append", default=[], metavar="GLOB",
                        help="choose wrappers by name instead of by what they do (default: every function that "
                             "launches a kernel, plus every *_wrapper); repeatable")
    parser.add_argument("--launcher", action="append", default=[], metavar="NAME",
                        help="a function name whose call is a kernel launch (an imported kernel); repeatable")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="skip files or folders whose path matches; repeatable")


def run(args):
    import sys

    from kb_tools.audit import audit_path, select_codes
    from kb_tools.audit.discover import python_files
    from kb_tools.audit.report import REPORTERS
    from kb_tools.diagnostics import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, KbError

    codes = select_codes(args.select)
    results, unusable = [], 0
    for path in python_files(args.paths, args.exclude):
        try:
            results.append(audit_path(path, wrapper_patterns=args.wrapper_pattern, launchers=args.launcher, select=codes))
        except KbError as exc:
            print(exc.diagnostic, file=sys.stderr)
            unusable += 1
    if not results:
        if not unusable:
            print(f"kbt audit: no Python file under {', '.join(args.paths)}", file=sys.stderr)
        return EXIT_USAGE
    output = REPORTERS[args.format](results)
    if output:
        print(output)
    summary = sys.stdout if args.format == "text" else sys.stderr
    if args.format != "text":
        for r in results:
            for f in r.suppressed:
                print(f"suppressed: {f}", file=sys.stderr)
    findings = sum(len(r.findings) for r in results)
    suppressed = sum(len(r.suppressed) for r in results)
    wrappers = sum(len(r.wrappers) for r in results)
    if not wrappers:
        print("kbt audit: AU012 no wrapper found (no function launches a kernel and none is named *_wrapper); "
              "name imported kernels with --launcher or choose wrappers with --wrapper-pattern", file=summary)
    print(f"kbt audit: {findings} findings, {suppressed} suppressed, {wrappers} wrappers in {len(results)} files"
          + (f", {unusable} files unusable" if unusable else ""), file=summary)
    return EXIT_FINDINGS if findings or unusable else EXIT_OK
