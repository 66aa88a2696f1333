NAME = "lint"
HELP = "KB integrity check: front matter, routing, links, citations, checkers, notebooks, specs"


def configure(parser):
    parser.add_argument("-q", "--quiet", action="store_true", help="print findings only, not the per-check summary")


def run(args):
    from kb_tools.commands._common import report
    from kb_tools.kb.root import find_root
    from kb_tools.lint import run_lint

    results = run_lint(find_root(args.kb_root))
    diags = sorted({d for r in results for d in r.diagnostics})
    status = report(diags)
    if not args.quiet:
        for r in results:
            print(f"{r.status:>16}  {r.name} ({r.examined} examined, {len(r.diagnostics)} findings)")
        passed = sum(r.status == "passed" for r in results)
        idle = [r.name for r in results if r.status == "examined nothing"]
        print(f"kbt lint: {passed}/{len(results)} checks passed" + (f"; examined nothing: {', '.join(idle)}" if idle else ""))
    return status
