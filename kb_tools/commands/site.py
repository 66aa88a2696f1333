NAME = "site"
HELP = "build the static site (KB pages, router, executed notebooks, operator reviews) with Sphinx, offline"

DEFAULT_NOTEBOOKS = "build/notebooks"


def configure(parser):
    parser.add_argument("-o", "--output", default="build/site", metavar="DIR", help="where the HTML goes (default: build/site)")
    parser.add_argument("--notebooks", metavar="DIR",
                        help=f"executed notebooks from `kbt notebooks` (default: {DEFAULT_NOTEBOOKS} when it exists; "
                             "otherwise the notebooks are shown unexecuted)")
    parser.add_argument("--ops", default="ops", metavar="DIR", help="operator catalog (default: ops)")


def run(args):
    from pathlib import Path

    from kb_tools.commands._common import knowledge_base
    from kb_tools.diagnostics import EXIT_USAGE, fail
    from kb_tools.outputs.site import build_site

    out = Path(args.output)
    if out.exists() and not out.is_dir():
        fail(out, None, "ST001", "is a file; the site is a folder (name another with -o)", EXIT_USAGE)
    if args.notebooks is not None and not Path(args.notebooks).is_dir():
        fail(args.notebooks, None, "ST002", "no such folder of executed notebooks (write one with `kbt notebooks -o DIR`)", EXIT_USAGE)
    if args.ops and not Path(args.ops).is_dir():
        fail(args.ops, None, "ST003", "no such operator catalog folder", EXIT_USAGE)
    notebooks = Path(args.notebooks or DEFAULT_NOTEBOOKS)
    if not notebooks.is_dir():
        print(f"kbt site: no {notebooks}/, so the notebooks are shown unexecuted (run `kbt notebooks` first to see their outputs)")
    kb = knowledge_base(args)
    status = build_site(kb.root, kb, out, notebooks if notebooks.is_dir() else None, Path(args.ops))
    if status == 0:
        print(f"kbt site: open {out / 'index.html'}")
    return status
