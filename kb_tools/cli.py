"""``kbt`` / ``python -m kb_tools``: one subcommand per module in ``kb_tools.commands``.

Each command module defines NAME, HELP, ``configure(parser)`` and ``run(args) -> int`` and
imports anything heavy inside ``run``, so that ``kbt select`` starts without numpy or torch.
Bad input surfaces as ``path:line: CODE message`` lines, never as a traceback.
"""

from __future__ import annotations

import os
import sys

from kb_tools.commands import build_parser, command_names, invoked, run_parsed
from kb_tools.diagnostics import EXIT_USAGE, EscapingStream, unexpected
from kb_tools.limits import malformed

__all__ = ["build_parser", "command_names", "main"]


def _front_doors() -> tuple:
    """Subcommands that live above the command registry because they drive it: ``kbt mcp``
    serves every other command to an agent, ``kbt hook`` runs them as an agent's hooks
    (kb_tools.agents), ``kbt opencode`` installs those hooks as an OpenCode plugin."""
    from kb_tools.agents import command as mcp_command, hook, opencode

    return (mcp_command, hook, opencode)


def _skip_slow_optional_imports() -> None:
    """jsonschema imports every optional format library it finds; rfc3987_syntax (pulled in by
    JupyterLab, see `make lab`) compiles a grammar on import, about 1.7 s here. No opkb schema
    uses the IRI formats it serves, so a `kbt` process never loads it."""
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)


def _text_arguments(argv: list[str]) -> list[str]:
    """Arguments as the UTF-8 text the user typed: under an ASCII locale (LC_ALL=C) Python
    decodes them byte by byte into surrogates, and a Chinese question looked like binary data."""
    fixed = []
    for arg in argv:
        if any("\udc80" <= c <= "\udcff" for c in arg):
            try:
                arg = os.fsencode(arg).decode("utf-8")
            except UnicodeDecodeError:  # really not UTF-8: left for the command to refuse
                pass
        fixed.append(arg)
    return fixed


def _escape_what_streams_cannot_show() -> None:
    """A terminal whose encoding cannot show a character (ASCII, Latin-1) gets its escape
    (\\u7cbe) instead of a UnicodeEncodeError half-way through the output."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def _stdout_failed(exc: OSError) -> int:
    """A standard output that cannot take the text (a full disk): one line, exit 2. A reader
    that went away (``kbt route ... | head -1``) is no error. Either way the unwritten rest is
    dropped, so that Python's exit does not fail on it again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    if isinstance(exc, BrokenPipeError):
        return 0
    print(f"kbt: IO014 cannot write standard output: {exc.strerror or exc}", file=sys.stderr)
    return EXIT_USAGE


def _stdout_broken() -> OSError | None:
    """What stopped the last of the output reaching standard output, if anything did."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as exc:
        return exc
    return None


def main(argv: list[str] | None = None) -> int:
    _skip_slow_optional_imports()
    _escape_what_streams_cannot_show()
    argv = _text_arguments(sys.argv[1:] if argv is None else argv)
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (EscapingStream(s) if s is not None else s for s in streams)
    try:
        settings = malformed()
        if settings:  # a bound the user meant to raise is not silently left at its default
            print("\n".join(settings), file=sys.stderr)
            return EXIT_USAGE
        parser = build_parser(invoked(argv), extra=_front_doors())
        args = parser.parse_args(argv)
        try:
            status = run_parsed(args, on_output_error=_stdout_failed)
        except BrokenPipeError as exc:
            return _stdout_failed(exc)
        except Exception as exc:  # the one guard: no traceback reaches the user, a debug log keeps it
            return unexpected(exc)
        broken = _stdout_broken()
        return _stdout_failed(broken) if broken else status
    finally:
        sys.stdout, sys.stderr = streams
