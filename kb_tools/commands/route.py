NAME = "route"
HELP = "list the pages a task routes to (by wording or task id from ROUTER.md)"


def configure(parser):
    parser.add_argument("task", help='task wording or id, e.g. "Decide what may run on the host" or decide-host-work')
    parser.add_argument("--skill", help="only if this skill owns the task")


def run(args):
    import sys

    from kb_tools.commands._common import knowledge_base
    from kb_tools.paths import find_root
    from kb_tools.router import find_task, nearest, parse_router

    root = find_root(args.kb_root)
    tasks = parse_router(root / "ROUTER.md")
    task = find_task(tasks, args.task)
    if task is None:
        near = nearest(tasks, args.task)
        print(f"kbt route: no task {args.task!r} in ROUTER.md; nearest:", file=sys.stderr)
        for t in near:
            print(f"  {t.id}: {t.wording}", file=sys.stderr)
        return 1
    if args.skill and args.skill not in task.skills:
        print(f"kbt route: task {task.id!r} is owned by {', '.join(task.skills)}, not {args.skill}", file=sys.stderr)
        return 1
    kb = knowledge_base(args, strict=False)
    print(f"{task.wording} [{task.id}] -- skills: {', '.join(task.skills)}")
    for ref in task.references:
        page = kb.by_path(ref)
        print(f"  kb/{ref}" + (f"  {page.title}" if page else "  (missing page)"))
    return 0
