"""``kbt spec PATH``: a CANN operator folder, category or repository read as specs (kb_tools.cann)."""

NAME = "spec"
HELP = "read CANN operator folders (op_host OpDef, TestSpec golden, TTK cases, kernel) as specs"

# Below this many folders a second process costs more than it saves. ops-math's 523 at load ~1:
# serial 0.31 s, two forked processes handed runs of neighbours 0.19-0.21 s (a ProcessPoolExecutor
# handing out eight folders at a time had taken 0.62 s against 0.34 s serial).
PARALLEL_FROM = 200
RUNS_PER_JOB = 4  # runs of neighbouring folders handed to each process on average: a slowed one takes fewer


def configure(parser):
    parser.add_argument("path", help="an operator folder, a category folder, or a whole operator repository")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="text table (default) or JSON")
    parser.add_argument("--jobs", type=int, default=0, help="worker processes (default: the CPUs; 1: serial)")


def _read_run(items):
    from kb_tools.cann import read_listed

    return [read_listed(item) for item in items]


def read_all(path: str, jobs: int = 0, progress=None):
    """OperatorFacts for every operator under ``path``, in folder order whatever ``jobs`` is."""
    import os

    from kb_tools.cann import listed_operators, read_listed

    items = listed_operators(path)
    jobs = jobs or os.cpu_count() or 1
    out = []
    if jobs > 1 and len(items) >= PARALLEL_FROM:
        import multiprocessing

        size = -(-len(items) // (jobs * RUNS_PER_JOB))
        runs = [items[k:k + size] for k in range(0, len(items), size)]
        with multiprocessing.get_context("fork").Pool(jobs) as pool:  # forked: the modules are imported already
            for facts in (f for run in pool.imap(_read_run, runs) for f in run):  # in folder order
                out.append(facts)
                if progress:
                    progress(len(out), len(items))
    else:
        for i, item in enumerate(items, 1):
            out.append(read_listed(item))
            if progress:
                progress(i, len(items))
    return out


def _table(facts) -> str:
    rows = [("op", "folder", "dtypes", "criteria", "uncovered", "stale", "3-party", "untested", "golden")]
    for f in facts:
        crit = ", ".join(f"{d}:{s}" for d, s in f.criteria.items()) or "-"
        rows.append((f.op, f.folder, ", ".join(f.dtypes) or "-", crit, ", ".join(f.uncovered) or "-",
                     ", ".join(f.stale) or "-", "yes" if f.three_party else "no", ", ".join(f.untested) or "-",
                     f.golden_framework))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def _indented(doc) -> str:
    """``json.dumps(doc, indent=2, ensure_ascii=False)``'s very text, by orjson (the standard
    encoder indents in Python); a lone surrogate in a name falls back to the standard encoder."""
    import json

    import orjson

    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode("utf-8")
    except orjson.JSONEncodeError:
        return json.dumps(doc, indent=2, ensure_ascii=False)


def run(args):
    import sys
    from pathlib import Path

    if not Path(args.path).is_dir():
        print(f"{args.path}:1: SP050 not a folder; give an operator folder, a category or a repository", file=sys.stderr)
        return 2
    many = not (Path(args.path) / "op_host").is_dir()

    def progress(i, n):
        if many and (i == n or i % 50 == 0):
            print(f"kbt spec: {i}/{n} operators", file=sys.stderr)

    facts = read_all(args.path, args.jobs, progress)
    if not facts:
        print(f"{args.path}:1: SP051 no operator folder (a folder with op_host/) here", file=sys.stderr)
        return 1
    if args.format == "json":
        text = _indented({"operators": [f.as_json() for f in facts]})
    else:
        text = _table(facts)
    sys.stdout.write(text + "\n")
    problems = [p for f in facts for p in f.problems]
    for line in problems:
        print(" ".join(line.split()), file=sys.stderr)
    return 1 if problems else 0
