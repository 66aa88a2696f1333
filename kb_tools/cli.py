"""``kbt`` / ``python -m kb_tools``: one subcommand per module in ``kb_tools.commands``.

Each command module defines NAME, HELP, ``configure(parser)`` and ``run(args) -> int`` and
imports anything heavy inside ``run``, so that ``kbt select`` starts without numpy or torch.
Bad input surfaces as ``path:line: CODE message`` lines, never as a traceback.
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
    from kb_tools import commands

    return sorted(name[:-3] for folder in commands.__path__ for name in os.listdir(folder)
                  if name.endswith(".py") and not name.startswith("_"))


def _invoked(argv: list[str]) -> str | None:
    """The subcommand named on the command line, found without building every parser."""
    args = iter(argv)
    for arg in args:
        if arg == "--kb-root":
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``only`` when it names a subcommand, else of every subcommand: a
    command's start-up should not pay for importing and configuring fifteen others (their
    help is listed by ``kbt -h`` and after an unknown command)."""
    parser = argparse.ArgumentParser(prog="kbt", description="opkb: route, record and check the operator rules.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--kb-root", metavar="DIR", help="KB root holding ROUTER.md and kb/ (default: found upward from here)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    names = command_names()
    wanted = (only or "").replace("-", "_")  # check-usage lives in check_usage.py
    for module in (importlib.import_module(f"kb_tools.commands.{name}") for name in names if wanted not in names or name == wanted):
        child = sub.add_parser(module.NAME, help=module.HELP, description=module.HELP)
        module.configure(child)
        child.set_defaults(_run=module.run)
    return parser


def _skip_slow_optional_imports() -> None:
    """jsonschema imports every optional format library it finds; rfc3987_syntax (pulled in by
    JupyterLab, see `make lab`) compiles a grammar on import, about 1.7 s here. No opkb schema
    uses the IRI formats it serves, so a `kbt` process never loads it."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)


def main(argv: list[str] | None = None) -> int:
    _skip_slow_optional_imports()
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(_invoked(argv))
    args = parser.parse_args(argv)
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
        return 0
    except FileNotFoundError as exc:  # a path given on the command line
        print(f"{exc.filename}: IO001 no such file or directory", file=sys.stderr)
        return EXIT_USAGE
