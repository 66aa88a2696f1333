NAME = "review"
HELP = "a design-review walkthrough of one operator: pages, reasons, claims, audit, checklist"


def configure(parser):
    parser.add_argument("spec", help="operator spec, e.g. ops/softmax.yaml")
    parser.add_argument("--usage", metavar="FILE", help="the operator's KB_USAGE.json (default: build/<op>/KB_USAGE.json when present)")
    parser.add_argument("--root", default=".", metavar="SRC", help="source root the spec's wrapper path is relative to (default: .)")
    parser.add_argument("--format", choices=("md", "html"), default="md", help="Markdown (default) or standalone HTML")
    parser.add_argument("-o", "--output", metavar="FILE", help="write here instead of standard output")


def run(args):
    from pathlib import Path

    from kb_tools.commands._common import emit, knowledge_base
    from kb_tools.review import render_html, render_review, review_inputs
    from kb_tools.selection import select
    from kb_tools.specs import load_spec

    kb = knowledge_base(args)
    spec = load_spec(args.spec)
    usage = Path(args.usage) if args.usage else Path("build") / spec.op / "KB_USAGE.json"
    if args.usage and not usage.is_file():
        from kb_tools.diagnostics import EXIT_USAGE, fail

        fail(usage, None, "RV001", "no such KB_USAGE.json", EXIT_USAGE)
    import os

    # links to pages resolve from wherever the review is read: the output file's folder, or here
    where = Path(args.output).resolve().parent if args.output else Path.cwd()
    link_base = Path(os.path.relpath(kb.kb_dir.resolve(), where)).as_posix() + "/"
    inputs = review_inputs(kb, spec, select(kb, spec), usage, Path(args.root), link_base)
    text = render_review(inputs)
    if args.format == "html":
        text = render_html(text, f"Design review: {spec.op}")
    emit(text, args.output)
    return 0
