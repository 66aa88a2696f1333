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
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.code} {self.message}"


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
