"""One finding about one place in one file, printed as ``path:line: CODE message``.

Every command reports bad input this way, so that editors and CI can jump to the line and
nobody ever sees a traceback for a mistake in a file they wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_CHECKING = False  # typing costs every kbt start-up more than a tenth of an interpreter start
if TYPE_CHECKING:
    from typing import NoReturn

# Exit statuses shared by every command.
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3  # a fault in kbt itself, not in the input: said in one line, traceback at debug level

# C0 controls (but tab and newline), DEL and C1 controls: an escape sequence in a spec or a file
# name could retitle the terminal, clear it, or forge a diagnostic line, so they are shown escaped.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x09), *range(0x0B, 0x20), 0x7F)}
_CONTROLS.update({c: f"\\u{c:04x}" for c in range(0x80, 0xA0)})
_CONTROLS_AND_NEWLINES = {**_CONTROLS, 0x0A: "\\n", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def terminal_safe(text: str) -> str:
    """``text`` with its control characters escaped; newlines and tabs kept (multi-line output)."""
    return str(text).translate(_CONTROLS)


class EscapingStream:
    """A text stream that writes through ``terminal_safe``: every command's output reaches the
    terminal (or the agent reading it) with its control characters shown, not obeyed."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def one_line_safe(text) -> str:
    """``text`` escaped to one printable line: a newline in a file name cannot start a line of its own."""
    return str(text).translate(_CONTROLS_AND_NEWLINES)


@dataclass(frozen=True)
class Diagnostic:
    path: str
    line: int | None
    code: str
    message: str
    severity: str = "error"  # "error", "warning", or "note" (a count or summary; never fails)

    def _order(self) -> tuple:
        # a finding about the whole file (no line) sorts before its lines; None and 3 do not compare
        return (self.path, self.line or 0, self.code, self.message, self.severity)

    def __lt__(self, other: Diagnostic) -> bool:
        return self._order() < other._order()

    def __gt__(self, other: Diagnostic) -> bool:
        return self._order() > other._order()

    def __str__(self) -> str:
        where = f"{one_line_safe(self.path)}:{self.line}" if self.line else one_line_safe(self.path)
        return f"{where}: {self.code} {one_line_safe(self.message)}"


class KbError(Exception):
    """A single diagnostic that stops the command. ``exit_code`` says whether it is a
    finding about the content (1) or input that cannot be used at all (2)."""

    def __init__(self, diagnostic: Diagnostic, exit_code: int = EXIT_FINDINGS):
        super().__init__(str(diagnostic))
        self.diagnostic = diagnostic
        self.exit_code = exit_code


class KbErrors(Exception):
    """Several diagnostics found together (a page with three bad keys gets three lines)."""

    def __init__(self, diagnostics: list[Diagnostic], exit_code: int = EXIT_FINDINGS):
        super().__init__("\n".join(str(d) for d in diagnostics))
        self.diagnostics = sorted(diagnostics)
        self.exit_code = exit_code


# No one reads past the first screen of a report; a file broken everywhere gets this many.
MAX_SHOWN = 200


def capped(diags: list[Diagnostic], path, code: str, limit: int = MAX_SHOWN) -> list[Diagnostic]:
    """The first ``limit`` diagnostics and, when there were more, one line counting the rest."""
    if len(diags) <= limit:
        return diags
    rest = len(diags) - limit
    return diags[:limit] + [Diagnostic(str(path), diags[limit - 1].line, code, f"{rest} more findings not shown; fix these first")]


def shortened(text, limit: int = 120) -> str:
    """``text`` cut in the middle to about ``limit`` characters: a 5000-character argument or
    number is named by its ends, so its message stays one readable line."""
    text = str(text)
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    return f"{text[:head]}...{text[-(limit - head - 3):]} ({len(text)} characters)"


def fail(path, line, code, message, exit_code=EXIT_FINDINGS) -> NoReturn:
    """Stop the command with one diagnostic."""
    raise KbError(Diagnostic(str(path), line, code, message), exit_code)


def unexpected(exc: BaseException, where: str = "kbt") -> int:
    """The one line for an error no check foresaw (a bug in kbt, or input no rule names yet):
    the type and message on standard error, the traceback logged at debug level
    (``OPKB_DEBUG=1`` shows it), so the guard never hides a real bug. Returns the exit status."""
    import logging
    import os
    import sys

    log = logging.getLogger("kb_tools")
    if os.environ.get("OPKB_DEBUG") and not log.handlers:
        log.addHandler(logging.StreamHandler(sys.stderr))
        log.setLevel(logging.DEBUG)
    log.debug("unexpected error in %s", where, exc_info=exc)
    message = shortened(one_line_safe(f"{type(exc).__name__}: {exc}"), 300)
    print(f"{where}: KBT999 internal error, not a finding about your input ({message}); "
          "OPKB_DEBUG=1 shows the traceback", file=sys.stderr)
    return EXIT_INTERNAL
