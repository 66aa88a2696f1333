NAME = "build"
HELP = "the main job: KB_SELECTION.json and KB_USAGE.json for every operator in a catalog"


def configure(parser):
    parser.add_argument("ops", nargs="?", default="ops",
                        help="catalog directory of <op>.yaml specs (default: ops), or a CANN operator repository "
                             "(or any folder of it): then one golden report in JSON, Markdown and HTML")
    parser.add_argument("-o", "--output", default="build", metavar="DIR", help="output directory (default: build)")


def run(args):
    from pathlib import Path

    from kb_tools.commands._common import knowledge_base, report
    from kb_tools.contract.build import build_catalog, format_table
    from kb_tools.diagnostics import EXIT_USAGE, fail
    from kb_tools.files.jsonio import make_folder
    from kb_tools.contract.specs import spec_files

    ops = Path(args.ops)
    from kb_tools.outputs.cann_report import is_cann_repository

    if is_cann_repository(ops):  # a CANN operator repository: one golden report, not a catalog build
        return _cann_report(ops, Path(args.output))
    if not ops.is_dir():
        fail(ops, None, "BU001", "catalog directory does not exist", EXIT_USAGE)
    if not spec_files(ops):  # a build that builds nothing checks nothing
        fail(ops, None, "BU003", "holds no <op>.yaml spec: nothing to build (is this the catalog folder?)", EXIT_USAGE)
    make_folder(Path(args.output))  # a file in the way is said once, not once per operator
    rows, diags = build_catalog(knowledge_base(args), ops, Path(args.output))
    print(format_table(rows))
    print(f"kbt build: {len(rows)} operators written to {args.output}/" + (f", {len(diags)} findings" if diags else ""))
    return report(diags)


def _cann_report(root, output):
    """``kbt build REPO`` on a CANN repository: every operator's facts and every file's findings
    in one run, one report (kb_tools.outputs.cann_report), worst first."""
    import sys

    from kb_tools.outputs.cann_report import build_report, said, write_report
    from kb_tools.diagnostics import EXIT_FINDINGS, EXIT_OK

    def progress(done, files):
        if files >= 100:  # a repository: say how far the run is; one folder needs no progress
            print(f"kbt build: {done}/{files} Python files audited", file=sys.stderr)

    report = build_report(root, progress=progress)
    write_report(report, output)
    rows = report["operators"]
    for row in rows[:10]:  # the worst ten, each finding on its own path:line line
        for f in row["findings"]:
            print(f"{(root / f['path']).as_posix()}:{f['line']}: {f['code']} {f['severity']}: {said(f)}")  # openable from here
    problems = [p for r in rows for p in r["problems"]] + report["outside"]["problems"]
    for line in problems:
        print(" ".join(line.split()), file=sys.stderr)
    errors = sum(r["errors"] for r in rows) + sum(f["severity"] == "error" for f in report["outside"]["findings"])
    warnings = sum(r["warnings"] for r in rows) + sum(f["severity"] == "warning" for f in report["outside"]["findings"])
    print(f"kbt build: {len(rows)} CANN operators, {errors} errors, {warnings} warnings, {len(problems)} problems; "
          f"report in {output}/cann-report.{{json,md,html}}")
    return EXIT_FINDINGS if errors or report["unusable"] else EXIT_OK  # a golden that cannot be read is judged by nothing
