"""One module per ``kbt`` subcommand, discovered by name, and the one parser and runner that
every front door uses: the command line (kb_tools.cli) and the MCP server (kb_tools.agents).

Each command module defines NAME, HELP, ``configure(parser)`` and ``run(args) -> int`` and
imports anything heavy inside ``run``, so that ``kbt select`` starts without numpy or torch.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from kb_tools import __version__
from kb_tools.diagnostics import EXIT_USAGE, KbError, KbErrors


def command_names() -> list[str]:
    """The modules of the subcommands in kb_tools/commands (``check_usage`` is ``check-usage``)."""
    return sorted(name[:-3] for folder in __path__ for name in os.listdir(folder)
                  if name.endswith(".py") and not name.startswith("_"))


def invoked(argv: list[str]) -> str | None:
    """The subcommand named on the command line, found without building every parser."""
    args = iter(argv)
    for arg in args:
        if arg == "--kb-root":
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


def build_parser(only: str | None = None, extra: tuple = ()) -> argparse.ArgumentParser:
    """The parser of ``only`` when it names a subcommand, else of every subcommand: a
    command's start-up should not pay for importing and configuring fifteen others (their
    help is listed by ``kbt -h`` and after an unknown command). ``extra``: command modules
    that live outside this package (the front doors above it, such as ``kbt mcp``)."""
    parser = argparse.ArgumentParser(prog="kbt", description="opkb: route, record and check the operator rules.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--kb-root", metavar="DIR", help="KB root holding ROUTER.md and kb/ (default: found upward from here)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    names = command_names()
    wanted = (only or "").replace("-", "_")  # check-usage lives in check_usage.py
    modules = [importlib.import_module(f"kb_tools.commands.{name}") for name in names if wanted not in names or name == wanted]
    modules += [m for m in extra if wanted not in names]  # a front door is never needed to run a registry command
    for module in sorted(modules, key=lambda m: m.NAME):
        child = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.configure(child)
        child.set_defaults(_run=module.run)
    return parser


def run_parsed(args, on_output_error=None) -> int:
    """Run a parsed command: its bad input becomes its ``path:line: CODE message`` lines on
    standard error and an exit status, never a traceback. ``on_output_error(exc)`` decides the
    status when writing the command's own output failed (the CLI's standard output)."""
    try:
        return int(args._run(args) or 0)
    except KbErrors as exc:
        for d in exc.diagnostics:
            print(d, file=sys.stderr)
        return exc.exit_code
    except KbError as exc:
        print(exc.diagnostic, file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("kbt: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        raise
    except OSError as exc:
        if exc.filename is None and on_output_error is not None:  # every file kbt opens is named by its error: this is the output stream
            return on_output_error(exc)
        # a path no check caught (a name too long, a folder without permission): said, not a traceback
        code = "IO001" if isinstance(exc, FileNotFoundError) else "IO004"
        print(f"{exc.filename}: {code} {exc.strerror or 'cannot be read'}", file=sys.stderr)
        return EXIT_USAGE
