"""One finding about one place in one file, printed as ``path:line: CODE message``.

Every command reports bad input this way, so that editors and CI can jump to the line and
nobody ever sees a traceback for a mistake in a file they wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

# Exit statuses shared by every command.
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


@dataclass(frozen=True, order=True)
class Diagnostic:
    path: str
    line: int | None
    code: str
    message: str
    severity: str = "error"  # "error" or "warning"

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


def fail(path, line, code, message, exit_code=EXIT_FINDINGS):
    raise KbError(Diagnostic(str(path), line, code, message), exit_code)
