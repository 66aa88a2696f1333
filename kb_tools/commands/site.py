NAME = "site"
HELP = "build the static site (KB pages, router, executed notebooks, operator reviews) with Sphinx, offline"


def configure(parser):
    parser.add_argument("-o", "--output", default="build/site", metavar="DIR", help="where the HTML goes (default: build/site)")
    parser.add_argument("--notebooks", default="build/notebooks", metavar="DIR",
                        help="executed notebooks from `kbt notebooks` (default: build/notebooks); unexecuted ones are shown as sources")
    parser.add_argument("--ops", default="ops", metavar="DIR", help="operator catalog (default: ops)")


def run(args):
    from pathlib import Path

    from kb_tools.commands._common import knowledge_base
    from kb_tools.site import build_site

    kb = knowledge_base(args)
    notebooks = Path(args.notebooks)
    status = build_site(kb.root, kb, Path(args.output), notebooks if notebooks.is_dir() else None, Path(args.ops))
    if status == 0:
        print(f"kbt site: open {Path(args.output) / 'index.html'}")
    return status
