"""``kbt opencode``: install opkb's hooks as an OpenCode plugin (issue 38 item 8).

OpenCode, the agent pypto-gym's KB is written for, loads every JavaScript file in a
project's ``.opencode/plugins/``. The plugin written there (opencode_plugin.js) calls the
same ``kbt hook edit`` and ``kbt hook stop`` the Claude Code settings call, so both agents
meet the same checks and the same never-trap rules. A plugin file there that kbt did not
write is left alone."""

from __future__ import annotations

NAME = "opencode"
HELP = "install opkb's edit and stop checks as an OpenCode plugin (.opencode/plugins/opkb.js)"
PLUGIN = "opkb.js"
MARK = "written by `kbt opencode`"


def configure(parser):
    parser.add_argument("operator", help="the operator folder kbt verify checks when the session goes idle "
                        "(holding KB_SELECTION.json and KB_USAGE.json), relative to the project")
    parser.add_argument("--root", default=".", metavar="SRC", help="source root of its wrapper (default: .)")
    parser.add_argument("--project", default=".", metavar="DIR", help="the project OpenCode runs in (default: .)")


def plugin_text(kbt_argv: list[str], operator: str, root: str) -> str:
    """The plugin's source with this install's kbt, operator folder and root filled in."""
    import json
    from pathlib import Path

    template = (Path(__file__).with_name("opencode_plugin.js")).read_text(encoding="utf-8")
    for name, value in (("__KBT__", kbt_argv), ("__OPERATOR__", operator), ("__ROOT__", root)):
        template = template.replace(name, json.dumps(value))
    return template


def run(args):
    import sys
    from pathlib import Path

    from kb_tools.diagnostics import EXIT_USAGE, fail
    from kb_tools.files.jsonio import write_atomic
    from kb_tools.kb.root import find_root

    project = Path(args.project)
    if not project.is_dir():
        fail(args.project, None, "OC001", "--project must be an existing folder", EXIT_USAGE)
    target = project / ".opencode" / "plugins" / PLUGIN
    if target.is_symlink() or (target.exists() and not _ours(target)):
        fail(str(target), None, "OC002", "a plugin file kbt did not write is already there; left untouched "
             "(move it, then re-run kbt opencode)", EXIT_USAGE)
    kbt = [sys.executable, "-m", "kb_tools", "--kb-root", str(Path(find_root(args.kb_root)).resolve())]
    written = write_atomic(target, plugin_text(kbt, args.operator, args.root), keep_equal=True)
    print(f"kbt opencode: {'wrote' if written else 'kept'} {target}: edits of Python files are audited, "
          f"and kbt verify {args.operator} runs when the session goes idle")
    return 0


def _ours(path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return MARK in handle.read(400)
    except OSError:
        return False
