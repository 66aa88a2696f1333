"""``kbt`` / ``python -m kb_tools``: one subcommand per module in ``kb_tools.commands``.

Each command module defines NAME, HELP, ``configure(parser)`` and ``run(args) -> int`` and
imports anything heavy inside ``run``, so that ``kbt select`` starts without numpy or torch.
Bad input surfaces as ``path:line: CODE message`` lines, never as a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from kb_tools import __version__
from kb_tools.diagnostics import EXIT_USAGE, KbError, KbErrors


def _command_modules():
    from kb_tools import commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            yield importlib.import_module(f"kb_tools.commands.{info.name}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kbt", description="opkb: route, record and check the operator rules.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--kb-root", metavar="DIR", help="KB root holding ROUTER.md and kb/ (default: found upward from here)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _command_modules():
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
    parser = build_parser()
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
