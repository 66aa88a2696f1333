"""Run one ``kbt`` command inside this process and keep what it said, as data.

The MCP tools are the commands, not a second implementation of them: each call is parsed and
run by the command registry (kb_tools.commands) that the CLI uses, with its output captured, so a tool result carries exactly the facts the
CLI prints (its JSON where the command has a JSON format, its ``path:line: CODE message`` lines
as records otherwise) and the same exit status.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from dataclasses import dataclass, field

# Diagnostic.__str__: "path:line: CODE message" or "path: CODE message"
_LINE = re.compile(r"^(?P<path>.+?)(?::(?P<line>\d+))?: (?P<code>[A-Z][A-Z0-9]{1,5}\d{3}) (?P<message>.+)$")


@dataclass
class CommandResult:
    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str
    data: object = None  # the command's JSON document, when it printed one
    diagnostics: list[dict] = field(default_factory=list)

    def as_dict(self) -> dict:
        out = {"command": "kbt " + " ".join(self.argv), "exit_code": self.exit_code,
               "passed": self.exit_code == 0, "diagnostics": self.diagnostics}
        if self.data is not None:
            out["result"] = self.data
        text = [line for line in self.stdout.splitlines() if line.strip()]
        if self.data is None and text:
            out["output"] = text
        notes = [line for line in self.stderr.splitlines() if line.strip() and not _LINE.match(line)]
        if notes:
            out["messages"] = notes
        return out


def _records(text: str, severity: str) -> list[dict]:
    """The diagnostic lines of one stream: the commands print errors to standard error and
    warnings and notes to standard output (commands._common.report)."""
    found = []
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            found.append({"path": m["path"], "line": int(m["line"]) if m["line"] else None, "code": m["code"],
                          "message": m["message"], "severity": severity})
    return found


def run_command(argv: list[str], *, json_output: bool = False) -> CommandResult:
    """``kbt ARGV`` in this process. An argument error (argparse) is exit 2 with its message,
    as at the terminal; nothing it does can end this process."""
    from kb_tools.commands import build_parser, invoked, run_parsed

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            args = build_parser(invoked(list(argv))).parse_args(list(argv))
            code = run_parsed(args)
        except SystemExit as exc:  # argparse's error() and --help
            code = exc.code if isinstance(exc.code, int) else 2
    stdout, stderr = out.getvalue(), err.getvalue()
    data = None
    if json_output and stdout.strip():
        try:
            data = json.loads(stdout)
        except ValueError:
            data = None
    diagnostics = _records(stderr, "error") + ([] if data is not None else _records(stdout, "warning"))
    return CommandResult(list(argv), int(code), stdout, stderr, data, diagnostics)
