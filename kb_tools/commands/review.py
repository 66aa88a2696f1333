NAME = "review"
HELP = "a design-review walkthrough of one operator: pages, reasons, claims, audit, checklist; as a notebook its checks run"


def configure(parser):
    from kb_tools.commands._common import add_spec_arguments

    add_spec_arguments(parser)
    parser.add_argument("--usage", metavar="FILE", help="the operator's KB_USAGE.json (default: the one in the source "
                        "root, else build/<op>/KB_USAGE.json, when present)")
    parser.add_argument("--root", metavar="SRC", help="source root the spec's wrapper and tensors paths are relative to "
                        "(default: the worked example examples/<op>/ when the KB has one, else .)")
    parser.add_argument("--format", choices=("md", "html", "notebook"), default="md",
                        help="Markdown (default), standalone HTML, or a Jupyter notebook whose checks run live")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (notebook: FILE.ipynb, or FILE.py for a "
                        "jupytext percent script; default build/<op>/review.ipynb); md and html default to standard output")
    parser.add_argument("--execute", action="store_true", help="run the notebook (no error cells; each check prints "
                        "its verdict); exit 1 unless every check passes")


def _source_root(args, kb, spec):
    from pathlib import Path

    if args.root:
        return Path(args.root)
    from kb_tools.files.text import is_dir

    if getattr(spec, "folder", ""):  # a CANN folder is its own root, not a shipped example of the same name
        return Path(spec.folder)
    example = kb.kb_dir.parent / "examples" / spec.op
    return example if is_dir(example) else Path(".")


def _usage_path(args, spec, root):
    from pathlib import Path

    if args.usage:
        return Path(args.usage)
    from kb_tools.files.text import is_file

    candidates = (Path(root) / "KB_USAGE.json", Path("build") / spec.op / "KB_USAGE.json")
    return next((c for c in candidates if is_file(c)), None)


def _same_operator(usage, spec) -> None:
    """Refuse a KB_USAGE.json written for another operator: its records are not this spec's
    claims (the notebook review reports the same file as a missing input)."""
    from kb_tools.contract.usage_shape import load_usage
    from kb_tools.diagnostics import EXIT_USAGE, KbError, KbErrors, fail

    if usage is None:
        return
    try:
        data = load_usage(usage)
    except (KbError, KbErrors):
        return  # said by the review itself
    if isinstance(data, dict) and data.get("op") != spec.op:
        line = data.line_of("op") if hasattr(data, "line_of") else None
        fail(usage, line, "RV004", f"this KB_USAGE.json is for operator {data.get('op')!r}, not {spec.op!r}; "
             "give the operator's own file with --usage", EXIT_USAGE)


def run(args):
    from pathlib import Path

    from kb_tools.commands._common import emit, knowledge_base, spec_of
    from kb_tools.contract.selection import select
    from kb_tools.diagnostics import EXIT_USAGE, fail

    kb = knowledge_base(args)
    spec = spec_of(args)
    if args.execute and args.format != "notebook":
        fail("--execute", None, "RV002", "only a notebook review runs; add --format notebook", EXIT_USAGE)
    root = _source_root(args, kb, spec)
    if spec.wrapper:  # the wrapper is read and audited: it must lie under the source root, links followed
        from kb_tools.files.confine import OutsideRoot, resolve_inside

        try:
            resolve_inside(root, spec.wrapper, "wrapper", "the source root")
        except OutsideRoot as exc:
            fail(spec.path, None, "RV003", f"{exc}; nothing outside it is read (pass --root)", EXIT_USAGE)
    usage = _usage_path(args, spec, root)
    if args.usage and not usage.is_file():
        fail(usage, None, "RV001", "no such KB_USAGE.json", EXIT_USAGE)
    if args.format == "notebook":
        return _notebook(args, kb, spec, select(kb, spec), root, usage)
    _same_operator(usage, spec)
    from kb_tools.outputs.review import page_links, render_html, render_review, review_inputs

    # links to pages resolve from wherever the review is read: the output file's folder, or here
    where = Path(args.output).resolve().parent if args.output else Path.cwd()
    link_base, link_ext = page_links(kb.kb_dir, where, html=args.format == "html")
    inputs = review_inputs(kb, spec, select(kb, spec), usage, root, link_base, link_ext)
    text = render_review(inputs)
    if args.format == "html":
        text = render_html(text, f"Design review: {spec.op}")
    emit(text, args.output)
    return 0


def _notebook(args, kb, spec, selection, root, usage) -> int:
    """Write (and with --execute run) the review notebook; one line says how it went."""
    from pathlib import Path

    from kb_tools.diagnostics import EXIT_FINDINGS, EXIT_USAGE, fail
    from kb_tools.outputs.review import NO_IMPLEMENTATION, page_links
    from kb_tools.outputs.review_checks import ReviewSession
    from kb_tools.outputs.review_notebook import ReviewPlan, build_notebook, execute_review, write_notebook

    output = Path(args.output or Path("build") / spec.op / "review.ipynb")
    if output.suffix not in (".ipynb", ".py"):
        fail(output, None, "RV003", "a notebook review is written to FILE.ipynb or FILE.py", EXIT_USAGE)
    if args.execute and output.suffix == ".py" and output.with_suffix(".ipynb").is_dir():
        fail(output.with_suffix(".ipynb"), None, "RV004", "is a folder; the executed review is written there", EXIT_USAGE)
    where = output.resolve().parent
    link_base, _ = page_links(kb.kb_dir, where, html=False)  # a notebook links the pages' Markdown
    plan = ReviewPlan(kb, spec, selection, Path(getattr(spec, "folder", "") or spec.path), root, usage, kb.kb_dir.parent, link_base)
    write_notebook(build_notebook(plan, where), output)
    if not args.execute:
        problems = ReviewSession.of(kb, spec, selection, root, usage).input_problems()
        if problems:
            print(f"kbt review: wrote {output}; its checks will report {len(problems)} missing input(s), first: {problems[0]}")
            return EXIT_FINDINGS
        print(f"wrote {output}")
        return 0
    run = execute_review(output)
    if run.error:
        fail(run.executed, None, "RV010", f"the review did not run to the end: {run.error}", EXIT_USAGE)
    failed = [v for v in run.verdicts if v[0] != "PASS"]
    if failed:
        status, check, why = failed[0]
        lead = "" if spec.wrapper or getattr(spec, "golden", "") else f"{NO_IMPLEMENTATION} ({spec.op}: the spec names no wrapper); "
        print(f"kbt review: {run.executed}: {lead}{len(failed)} of {len(run.verdicts)} checks did not pass; first: "
              f"[{status}] {check}: {why}")
        return EXIT_FINDINGS
    print(f"wrote {run.executed} (executed): all {len(run.verdicts)} checks pass")
    return 0

