NAME = "notebooks"
HELP = "execute every notebooks/*.py (jupytext + nbclient) and write .ipynb and HTML"


def configure(parser):
    parser.add_argument("names", nargs="*", help="only these notebooks (file stems), default all")
    parser.add_argument("--backend", default=None, help="comma-separated backends to run on (default: all available)")
    parser.add_argument("-o", "--output", default="build/notebooks", metavar="DIR")
    parser.add_argument("--timeout", type=int, default=300, help="per-cell timeout in seconds (default 300)")
    parser.add_argument("--no-html", action="store_true", help="write only the executed .ipynb")


def run(args):
    import sys

    from tqdm import tqdm

    from kb_tools.diagnostics import EXIT_USAGE
    from kb_tools.kb.root import find_root
    from kb_tools.outputs.notebook_runner import execute, notebook_sources
    from kb_tools.runtime import backends

    sources = notebook_sources(find_root(args.kb_root))
    if args.names:
        unknown = sorted(set(args.names) - {s.stem for s in sources})
        if unknown:
            print(f"kbt notebooks: no notebook named {', '.join(unknown)}", file=sys.stderr)
            return EXIT_USAGE
        sources = [s for s in sources if s.stem in args.names]
    chosen = None
    if args.backend:
        chosen = [b.strip() for b in args.backend.split(",") if b.strip()]
        bad = [b for b in chosen if b not in backends.KNOWN]
        if bad:
            print(f"kbt notebooks: unknown backend {', '.join(bad)} (known: {', '.join(backends.KNOWN)})", file=sys.stderr)
            return EXIT_USAGE
        absent = [b for b in chosen if b not in backends.available()]
        if absent:
            print(f"kbt notebooks: --backend {', '.join(absent)}: no such device on this machine "
                  f"(available: {', '.join(backends.available())})", file=sys.stderr)
            return EXIT_USAGE
    failures = 0
    for source in tqdm(sources, desc="notebooks", unit="nb", file=sys.stderr, disable=None):
        result = execute(source, args.output, chosen, timeout=args.timeout, html=not args.no_html)
        if result.error:
            failures += 1
            print(f"{source}: NB001 {result.error}", file=sys.stderr)
        else:
            print(f"ok  {source} -> {result.ipynb}")
    print(f"kbt notebooks: {len(sources) - failures} passed, {failures} failed")
    return 1 if failures else 0
