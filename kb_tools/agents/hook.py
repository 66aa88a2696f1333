"""``kbt hook``: opkb's checks as a coding agent's hooks (Claude Code's hook protocol).

``kbt hook edit`` reads the hook's JSON on standard input after the agent edits a file; when
the file is Python (a wrapper, golden, test or kernel) it runs ``kbt audit`` on it and, on a
finding, hands the findings back to the agent (exit 2, findings on standard error).
``kbt hook stop DIR`` runs ``kbt verify DIR`` when the agent wants to stop and keeps it working
while the claims fail. A hook must never trap an agent: a payload it cannot read, a Stop hook
already fired once (``stop_hook_active``), a project with no operator folder and a check over
its time limit are each let through with one line saying so.
"""

from __future__ import annotations

from kb_tools.limits import limit

NAME = "hook"
HELP = "run opkb's checks as a coding agent's hooks: audit an edited file, verify before stopping"
BLOCK = 2  # the hook protocol's "give this back to the agent"
MAX_PAYLOAD = limit("OPKB_MAX_HOOK_PAYLOAD")  # 1 MiB unless set
DEFAULT_TIMEOUT = 50  # seconds; under the 60 s the shipped settings give the edit hook


def configure(parser):
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="S",
                        help=f"let the agent through, with one line, when the check takes longer (default {DEFAULT_TIMEOUT} s)")
    sub = parser.add_subparsers(dest="event", metavar="EVENT", required=True)
    sub.add_parser("edit", help="after an edit: audit the edited Python file (hook JSON on standard input)")
    stop = sub.add_parser("stop", help="before stopping: kbt verify DIR")
    stop.add_argument("dir", help="the operator folder holding KB_SELECTION.json and KB_USAGE.json")
    stop.add_argument("--root", default=".", metavar="SRC", help="source root of the wrapper (default: .)")


def _payload() -> tuple[dict, str | None]:
    """The hook's JSON object and, when it cannot be read, the one line that says why."""
    import sys

    from kb_tools.diagnostics import KbError
    from kb_tools.files.jsonio import parse_json

    raw = sys.stdin.buffer.read(MAX_PAYLOAD + 1) if sys.stdin is not None else b""
    if len(raw) > MAX_PAYLOAD:
        return {}, f"the hook payload is over {MAX_PAYLOAD} bytes"
    try:
        data = parse_json(raw.decode("utf-8"), "<hook payload>")
    except UnicodeDecodeError as exc:
        return {}, f"the hook payload is not UTF-8 (byte at offset {exc.start})"
    except KbError as exc:
        return {}, str(exc.diagnostic)
    return (data, None) if isinstance(data, dict) else ({}, "the hook payload is not a JSON object")


def _edited_file(payload: dict) -> str | None:
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    path = tool_input.get("file_path") or tool_input.get("path") or tool_input.get("notebook_path")
    return path if isinstance(path, str) and path.endswith(".py") else None


def _let_through(why: str) -> int:
    import sys

    from kb_tools.diagnostics import one_line_safe

    print(f"kbt hook: {one_line_safe(why)}; letting the agent go on", file=sys.stderr)
    return 0


def _within(seconds: float, argv: list[str]):
    """``run_command(argv)``, or ``None`` when it takes longer than ``seconds``."""
    from kb_tools.agents.deadline import TimeUp, time_limit
    from kb_tools.agents.invoke import run_command

    try:
        with time_limit(seconds):
            return run_command(argv)
    except TimeUp:
        return None


def run(args):
    import os
    import sys

    from kb_tools.diagnostics import EXIT_USAGE, fail

    if not 0 < args.timeout <= 3600:
        fail("--timeout", None, "HK001", f"must be between 0 and 3600 seconds, got {args.timeout:g}", EXIT_USAGE)
    payload, unreadable = _payload()
    if unreadable:
        return _let_through(f"{args.event}: nothing checked: {unreadable}")
    if args.event == "edit":
        path = _edited_file(payload)
        if path is None or not os.path.isfile(path):
            return 0
        argv = ["audit", path]
    else:
        if payload.get("stop_hook_active") is True:
            return _let_through("stop: the Stop hook already blocked once (stop_hook_active); not blocking again")
        if not os.path.isdir(args.dir):
            return _let_through(f"stop: no operator folder {args.dir!r} in this project, nothing to verify")
        argv = ["verify", args.dir, "--root", args.root]
    result = _within(args.timeout, argv)
    if result is None:
        return _let_through(f"{args.event}: kbt {argv[0]} took over {args.timeout:g} s (--timeout)")
    if result.exit_code == 0:
        return 0
    if args.event == "edit":
        print(f"kbt audit {path} (opkb's wrapper boundary and rule families) found:", file=sys.stderr)
        print((result.stdout + result.stderr).strip(), file=sys.stderr)
        print("Fix each finding, or mark a deliberate one with `# kbt: ignore[CODE] reason`.", file=sys.stderr)
        return BLOCK
    print(f"kbt verify {args.dir} does not pass; the stage is not done:", file=sys.stderr)
    print((result.stderr + result.stdout).strip(), file=sys.stderr)
    return BLOCK
