NAME = "route"
HELP = "the pages for a task (its id or wording from ROUTER.md) or for any question: English, 中文, a symptom, a pasted error"


def _positive(text):
    import argparse

    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of pages, at least 1, not {text!r}")
    return int(text)


def configure(parser):
    parser.add_argument("query", metavar="QUESTION",
                        help='a task id or wording (decide-host-work), or any question: "my fp16 op fails precision", '
                             '"非连续", "aclnnInplaceCopy failed, error code is 561103"; - reads it from standard input')
    parser.add_argument("--limit", type=_positive, default=5, metavar="N", help="how many pages a search lists (default 5)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="json: [{id, path, title, score, matched, tasks}]")
    parser.add_argument("--skill", help="only pages of tasks this skill owns")


def run(args):
    import sys

    from kb_tools.kb.root import find_root
    from kb_tools.search.answer import answer, check_query, format_hits, format_task, read_stdin_query

    if args.query == "-" and sys.stdin is None:
        from kb_tools.diagnostics import EXIT_USAGE, fail

        fail("kbt route", None, "RQ004", "standard input is closed: give the question as an argument, or pipe it in", EXIT_USAGE)
    raw = read_stdin_query(sys.stdin.buffer) if args.query == "-" else args.query
    query = check_query(raw)
    result = answer(find_root(args.kb_root), query, limit=args.limit, skill=args.skill)
    if result.unloadable:
        print(f"kbt route: warning: {len(result.unloadable)} page(s) failed to load and are left out "
              f"(kbt lint says why): {', '.join(result.unloadable)}", file=sys.stderr)
    task = result.task
    if task is not None and args.skill and args.skill not in task.skills:
        print(f"kbt route: task {task.id!r} is owned by {', '.join(task.skills)}, not {args.skill}", file=sys.stderr)
        return 1
    if not result.hits:
        from kb_tools.kb.router import nearest

        if args.format == "json":
            print("[]")
        print(f"kbt route: no page matches {query!r}; nearest tasks:", file=sys.stderr)
        for t in nearest(result.tasks, query):
            print(f"  {t.id}: {t.wording}", file=sys.stderr)
        return 1
    if args.format == "json":
        import json

        print(json.dumps([h.as_json() for h in result.hits], ensure_ascii=False, indent=2))
    else:
        print(format_task(task, result.hits) if task else format_hits(query, result.hits), end="")
    return 0
