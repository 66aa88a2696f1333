"""``kbt mcp``: the command that starts the server (registered by kb_tools.cli, since it drives
the command registry rather than living in it)."""

NAME = "mcp"
HELP = "serve the KB's commands, pages and roles to a coding agent over the Model Context Protocol (stdio)"


def configure(parser):
    parser.add_argument("--root", default=".", metavar="DIR",
                        help="the folder every tool's paths must resolve inside; the server works from it (default: .)")
    parser.add_argument("--time-limit", type=float, default=None, metavar="S",
                        help="seconds one tool call may run before it is stopped (default 120)")
    parser.add_argument("--max-request-bytes", type=int, default=None, metavar="N",
                        help="the largest request line read; a larger one is refused unread (default 4 MiB)")


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
    from kb_tools.agents import server as served, wire

    seconds = served.DEFAULT_TIME_LIMIT if args.time_limit is None else args.time_limit
    max_bytes = wire.DEFAULT_MAX_REQUEST_BYTES if args.max_request_bytes is None else args.max_request_bytes
    if not 0 < seconds <= 86400:
        fail("--time-limit", None, "MCP003", f"must be between 0 and 86400 seconds, got {seconds:g}", EXIT_USAGE)
    if not 1024 <= max_bytes <= 1 << 30:
        fail("--max-request-bytes", None, "MCP004", f"must be between 1024 and {1 << 30}, got {max_bytes}", EXIT_USAGE)
    wire.quiet_logging()
    os.chdir(root)
    server = build_server(Path("."), kb_root, time_limit=seconds, max_request_bytes=max_bytes)
    _serve(server, wire.BoundedStdio(max_bytes))
    return 0


def _serve(server, stdio) -> None:
    """The server over ``stdio`` (agents.wire) instead of the SDK's unbounded transport; the
    rest is the SDK's own ``run_stdio_async``."""
    import anyio
    from mcp.server.stdio import stdio_server

    async def serve():
        async with stdio_server(*stdio.streams()) as (read_stream, write_stream):
            lowlevel = server._lowlevel_server
            await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

    anyio.run(serve)
