NAME = "audit"
HELP = "audit operator code: wrappers against the wrapper boundary (seed 003), goldens, tests and kernels against their pages; parses, never imports or runs it"


def configure(parser):
    from kb_tools.audit.codes import SELECT_EXAMPLE

    from kb_tools.commands._bounds import jobs

    parser.add_argument("paths", nargs="+", metavar="PATH",
                        help="Python files, or directories to search for *.py (hidden folders, virtual environments and build/ skipped)")
    parser.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="output format (default: text)")
    parser.add_argument("--select", metavar="CODES", help=f"comma-separated rule codes or prefixes, e.g. {SELECT_EXAMPLE} (kbt explain lists them)")
    parser.add_argument("--wrapper-pattern", action="append", default=[], metavar="GLOB",
                        help="choose wrappers by name instead of by what they do (default: every function that "
                             "launches a kernel, plus every *_wrapper); repeatable")
    parser.add_argument("--launcher", action="append", default=[], metavar="NAME",
                        help="a function name whose call is a kernel launch (an imported kernel); repeatable")
    parser.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                        help="skip files or folders whose path matches; repeatable")
    parser.add_argument("--role", metavar="ROLES",
                        help="impl, golden, third_party and/or test (comma-separated) for every file, instead of telling each "
                             "file's role from what it holds; the wrapper family runs on every file")
    parser.add_argument("--policy", default="strict", metavar="NAME",
                        help="the reading of seed 003 to report under: strict (default, the seed to the letter), lenient, "
                             "pypto-op-lint or agent-verifier (the table: docs/audit-policies.md)")
    parser.add_argument("--jobs", type=jobs, metavar="N",
                        help="processes to audit with (default: both cores for 64 files or more, else one); "
                             "the report is the same for any N")
    parser.add_argument("--spec", metavar="OPS_YAML",
                        help="the operator spec the golden, test and kernel rules read (default: ops/<op>.yaml "
                             "found beside or above each file, <op> from the file's name)")


def run(args):
    import sys
    from pathlib import Path

    from kb_tools.audit import select_codes
    from kb_tools.audit.batch import audit_files_beside
    from kb_tools.audit.codes import RULES
    from kb_tools.audit.discover import python_files
    from kb_tools.audit.kernel_rules import absent_api, inventory_of
    from kb_tools.audit.policies import POLICIES
    from kb_tools.audit.report import REPORTERS
    from kb_tools.diagnostics import EXIT_FINDINGS, EXIT_OK, EXIT_USAGE, KbError

    codes = select_codes(args.select)
    families = _family_options(args)
    if args.policy not in POLICIES:
        raise KbError(f"--policy: AU021 unknown policy {args.policy!r}; known: {', '.join(POLICIES)}", EXIT_USAGE)
    roots = [p for p in args.paths if Path(p).is_dir()]
    with inventory_of(_kb_root(args)):
        absent_api()  # a broken kb/api_inventory.yaml is one line here, not one per file (or its rule silently off)
        results, errors, opaque, _ = audit_files_beside(python_files(args.paths, args.exclude), None, roots=roots,
                                                        jobs=args.jobs, progress=_progress(), wrapper_patterns=args.wrapper_pattern,
                                                        launchers=args.launcher, select=codes, families=families,
                                                        policy=args.policy)
    for line in errors:
        print(line, file=sys.stderr)
    unusable = len(errors)
    if not results:
        if not unusable:
            print(f"kbt audit: no Python file under {', '.join(args.paths)}", file=sys.stderr)
        return EXIT_USAGE
    for r in results:
        if r.note:
            print(r.note, file=sys.stderr)
    output = REPORTERS[args.format](results)
    if output:
        print(output)
    summary = sys.stdout if args.format == "text" else sys.stderr
    if args.format != "text":
        for r in results:
            for f in r.suppressed:
                print(f"suppressed: {f}", file=sys.stderr)
    unmatched = _unmatched_patterns(args.wrapper_pattern, results)
    if unmatched:  # a mistyped name would otherwise audit nothing and pass
        print(f"--wrapper-pattern: AU013 {', '.join(map(repr, unmatched))} names no wrapper in the audited files "
              "(a function there that launches a kernel or works on tensors); check the spelling", file=sys.stderr)
        return EXIT_USAGE
    findings = sum(len(r.findings) for r in results)
    warnings = sum(RULES[f.code].level == "warning" for r in results for f in r.findings)
    suppressed = sum(len(r.suppressed) for r in results)
    wrappers = sum(len(r.wrappers) for r in results)
    if not wrappers and any(not r.roles or "impl" in r.roles for r in results):  # a golden or test holds none
        print("kbt audit: AU012 no wrapper found (no function launches a kernel and none is named *_wrapper); "
              "name imported kernels with --launcher or choose wrappers with --wrapper-pattern", file=summary)
    starred = sorted({site for r in results for site in r.starred})
    if starred:
        print(f"kbt audit: {len(starred)} star import(s) may bind names that wrappers call; those calls were not "
              f"followed (e.g. {', '.join(starred[:3])}); import the names explicitly", file=sys.stderr)
    unfollowed = sorted({site for r in results for site in r.unfollowed})
    if unfollowed:
        print(f"kbt audit: {len(unfollowed)} helper call(s) were not followed further, the rest was audited "
              f"(e.g. {', '.join(unfollowed[:3])})", file=sys.stderr)
    if opaque and roots:
        shown = sorted(opaque)
        print(f"kbt audit: calls into {len(shown)} module(s) outside the audited files were not followed "
              f"(e.g. {', '.join(shown[:3])})", file=sys.stderr)
    print(f"kbt audit (policy {args.policy}): {findings} findings" + (f" ({warnings} warnings)" if warnings else "")
          + f", {suppressed} suppressed, {wrappers} wrappers in {len(results)} files"
          + (f", {unusable} files unusable" if unusable else "")
          + (f"; checked only {len(codes)} of {len(RULES)} rules (--select {args.select})" if args.select is not None else ""),
          file=summary)
    return EXIT_FINDINGS if findings > warnings or unusable else EXIT_OK


def _progress():
    """How far a long audit is, on a terminal only (a pipe or a file gets the report alone): a
    line each time another tenth of the files is done."""
    import sys

    if not sys.stderr.isatty():
        return None
    said = [0]

    def say(done: int, files: int) -> None:
        if files >= 200 and (done == files or done - said[0] >= files // 10):
            said[0] = done
            print(f"kbt audit: {done}/{files} files", file=sys.stderr, flush=True)
    return say


def _kb_root(args):
    """The KB whose inventory of kernel API names the audit reads: the one --kb-root names, else
    the one found from here, found once (each file's kernel rules searched for it again, folder by
    folder up from here); None when there is none."""
    from kb_tools.diagnostics import KbError
    from kb_tools.kb.root import find_root

    if args.kb_root is not None:
        return find_root(args.kb_root)
    try:
        return find_root()
    except KbError:  # no KB here: the rule reads no inventory, as before
        return None


def _unmatched_patterns(patterns: list[str], results) -> list[str]:
    from fnmatch import fnmatchcase

    return [p for p in patterns if not any(fnmatchcase(w, p) for r in results for w in r.wrappers)]


def _family_options(args):
    """The golden/test/kernel families' options: --role and --spec (a bad spec: one line, exit 2)."""
    from pathlib import Path

    from kb_tools.audit.families import FamilyOptions
    from kb_tools.audit.roles import parse_roles
    from kb_tools.contract.specs import load_spec
    from kb_tools.diagnostics import EXIT_USAGE, KbError, KbErrors

    roles = parse_roles(args.role)
    try:
        spec = load_spec(Path(args.spec)) if args.spec else None
    except KbErrors as exc:  # the first problem, one line: kbt lint lists them all
        raise KbError(exc.diagnostics[0], EXIT_USAGE) from None
    except KbError as exc:
        raise KbError(exc.diagnostic, EXIT_USAGE) from None
    return FamilyOptions(roles=roles, spec=spec)
