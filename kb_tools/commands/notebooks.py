NAME = "notebooks"
HELP = "execute every notebooks/*.py (jupytext + nbclient) and write .ipynb and HTML"


def configure(parser):
    from kb_tools.commands._bounds import jobs, whole_seconds

    parser.add_argument("names", nargs="*", help="only these notebooks (file stems), default all")
    parser.add_argument("--backend", default=None,
                        help="comma-separated backends of cpu, triton (the interpreter), cuda, npu (default: all available)")
    parser.add_argument("-o", "--output", default="build/notebooks", metavar="DIR")
    parser.add_argument("--timeout", type=whole_seconds, default=300, help="per-cell timeout in seconds (default 300)")
    parser.add_argument("--no-html", action="store_true", help="write only the executed .ipynb")
    parser.add_argument("-j", "--jobs", type=jobs, default=None, metavar="N",
                        help="notebooks run at once, each in its own kernel (default: the CPUs this process may use, at most 4)")


def run(args):
    import os
    import sys
    from concurrent.futures import ProcessPoolExecutor, as_completed

    from tqdm import tqdm

    from kb_tools.diagnostics import EXIT_USAGE
    from kb_tools.kb.root import find_root
    from kb_tools.outputs.notebook_runner import notebook_sources
    from kb_tools.outputs.notebook_runner import run as run_notebook
    from kb_tools.runtime import backends

    sources = notebook_sources(find_root(args.kb_root))
    if args.names:
        unknown = sorted(set(args.names) - {s.stem for s in sources})
        if unknown:
            print(f"kbt notebooks: no notebook named {', '.join(unknown)}", file=sys.stderr)
            return EXIT_USAGE
        sources = [s for s in sources if s.stem in args.names]
    chosen = backends.available()
    if args.backend:
        chosen = [b.strip() for b in args.backend.split(",") if b.strip()]
        bad = [b for b in chosen if b not in backends.KNOWN]
        if bad:
            print(f"kbt notebooks: unknown backend {', '.join(bad)} (known: {', '.join(backends.KNOWN)})", file=sys.stderr)
            return EXIT_USAGE
        for backend in chosen:
            why = backends.missing(backend)
            if why:
                print(f"kbt notebooks: --backend {backend}: {why} (available: {', '.join(backends.available())})",
                      file=sys.stderr)
                return EXIT_USAGE
    print(f"kbt notebooks: backends {', '.join(chosen)}"
          + "".join(f"; {b}: {backends.missing(b)}" for b in backends.KNOWN if b not in chosen and backends.missing(b)))
    jobs = args.jobs if args.jobs else min(4, len(os.sched_getaffinity(0)))
    if jobs < 1:
        print("kbt notebooks: --jobs must be at least 1", file=sys.stderr)
        return EXIT_USAGE
    failures = 0
    # each notebook runs in a process and a kernel of its own (reading, executing and converting it
    # to HTML all take CPU), so several run at once; results print in source order
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_notebook, source, args.output, chosen, timeout=args.timeout, html=not args.no_html)
                   for source in sources]
        for _ in tqdm(as_completed(futures), total=len(futures), desc="notebooks", unit="nb", file=sys.stderr, disable=None):
            pass
    for source, future in zip(sources, futures):
        result = future.result()
        if result.error:
            failures += 1
            print(f"{source}: NB001 {result.error}", file=sys.stderr)
        else:
            print(f"ok  {source} -> {result.ipynb}")
        if result.refused:
            print(f"    {result.refused} (a finding, not a failed check; see docs/triton-ascend-findings.md)")
    print(f"kbt notebooks: {len(sources) - failures} passed, {failures} failed")
    return 1 if failures else 0
