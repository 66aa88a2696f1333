"""``kbt mcp``: the command that starts the server (registered by kb_tools.cli, since it drives
the command registry rather than living in it)."""

NAME = "mcp"
HELP = "serve the KB's commands, pages and roles to a coding agent over the Model Context Protocol (stdio)"


def configure(parser):
    parser.add_argument("--root", default=".", metavar="DIR",
                        help="the folder every tool's paths must resolve inside; the server works from it (default: .)")


def run(args):
    import os
    from pathlib import Path

    from kb_tools.diagnostics import EXIT_USAGE, fail
    from kb_tools.kb.root import find_root

    root = Path(args.root)
    if not root.is_dir():
        fail(args.root, None, "MCP001", "--root must be an existing folder", EXIT_USAGE)
    kb_root = Path(find_root(args.kb_root)).resolve()
    try:
        from kb_tools.agents.server import build_server
    except ImportError as exc:
        fail("mcp", None, "MCP002", f"the MCP SDK is not installed ({exc.name}): pip install 'opkb[agents]'", EXIT_USAGE)
    os.chdir(root)
    build_server(Path("."), kb_root).run("stdio")
    return 0
