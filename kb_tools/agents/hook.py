"""``kbt hook``: opkb's checks as a coding agent's hooks (Claude Code's hook protocol).

``kbt hook edit`` reads the hook's JSON on standard input after the agent edits a file; when
the file is Python (a wrapper, golden, test or kernel) it runs ``kbt audit`` on it and, on a
finding, hands the findings back to the agent (exit 2, findings on standard error).
``kbt hook stop DIR`` runs ``kbt verify DIR`` when the agent wants to stop and keeps it working
while the claims fail. Anything the hook cannot read is let through with one line: a broken
hook must never stop an agent from editing.
"""

from __future__ import annotations

NAME = "hook"
HELP = "run opkb's checks as a coding agent's hooks: audit an edited file, verify before stopping"
BLOCK = 2  # the hook protocol's "give this back to the agent"
MAX_PAYLOAD = 1 << 20


def configure(parser):
    sub = parser.add_subparsers(dest="event", metavar="EVENT", required=True)
    sub.add_parser("edit", help="after an edit: audit the edited Python file (hook JSON on standard input)")
    stop = sub.add_parser("stop", help="before stopping: kbt verify DIR")
    stop.add_argument("dir", help="the operator folder holding KB_SELECTION.json and KB_USAGE.json")
    stop.add_argument("--root", default=".", metavar="SRC", help="source root of the wrapper (default: .)")


def _payload() -> dict:
    import json
    import sys

    raw = sys.stdin.buffer.read(MAX_PAYLOAD + 1) if sys.stdin is not None else b""
    if len(raw) > MAX_PAYLOAD:
        return {}
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _edited_file(payload: dict) -> str | None:
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    path = tool_input.get("file_path") or tool_input.get("path") or tool_input.get("notebook_path")
    return path if isinstance(path, str) and path.endswith(".py") else None


def run(args):
    import os
    import sys

    from kb_tools.agents.invoke import run_command

    payload = _payload() if args.event == "edit" else {}
    if args.event == "edit":
        path = _edited_file(payload)
        if path is None or not os.path.isfile(path):
            return 0
        result = run_command(["audit", path])
        if result.exit_code == 0:
            return 0
        print(f"kbt audit {path} (opkb's wrapper boundary and rule families) found:", file=sys.stderr)
        print((result.stdout + result.stderr).strip(), file=sys.stderr)
        print("Fix each finding, or mark a deliberate one with `# kbt: ignore[CODE] reason`.", file=sys.stderr)
        return BLOCK
    result = run_command(["verify", args.dir, "--root", args.root])
    if result.exit_code == 0:
        return 0
    print(f"kbt verify {args.dir} does not pass; the stage is not done:", file=sys.stderr)
    print((result.stderr + result.stdout).strip(), file=sys.stderr)
    return BLOCK
