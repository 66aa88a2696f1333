"""The MCP server's stdio wire, bounded: no request line larger than a set size is ever held,
a client that hangs up ends the server quietly, and the server's log says one line per event.

The SDK's own stdio transport reads a line of any length (a 100 MB request took the server to
400 MB) and its error for a bad line quotes the line back. Here an oversize line is skipped
unread in fixed-size pieces and answered with one JSON-RPC error that names its size, never
its text.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import threading

DEFAULT_MAX_REQUEST_BYTES = 4 << 20
_PIECE = 1 << 16
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,128}")')


class _OneLine(logging.Formatter):
    """A log record as one escaped line; its traceback only when OPKB_DEBUG asks for it."""

    def format(self, record: logging.LogRecord) -> str:
        from kb_tools.diagnostics import one_line_safe, shortened

        line = f"kbt mcp: {record.levelname.lower()}: {shortened(one_line_safe(record.getMessage()), 400)}"
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            line += f" ({type(exc).__name__}: {shortened(one_line_safe(exc), 200)})"
            if os.environ.get("OPKB_DEBUG"):
                line += "\n" + self.formatException(record.exc_info)
        return line


def quiet_logging() -> None:
    """Route every log record (the SDK's included) through ``_OneLine`` on standard error;
    set before the SDK configures logging, whose basicConfig then leaves it in place."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if os.environ.get("OPKB_DEBUG") else logging.WARNING)


class BoundedStdio:
    """The process's standard input and output taken for the wire: the descriptors are copied
    and 0/1 pointed at the null device and standard error, so a command's stray output cannot
    corrupt the protocol (as the SDK's transport does)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_REQUEST_BYTES):
        self.max_bytes = max_bytes
        self._in = os.fdopen(os.dup(0), "rb", buffering=_PIECE)
        self._out = os.fdopen(os.dup(1), "wb")
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(2, 1)
        self.hung_up = False
        self._lock = threading.Lock()  # the refusals are written from the reading thread

    def _line(self) -> str | None:
        """The next request line, or a line standing for a refused one; None at the end."""
        line = self._in.readline(self.max_bytes + 1)
        if not line:
            return None
        if len(line) <= self.max_bytes or line.endswith(b"\n") and len(line) == self.max_bytes + 1:
            return line.decode("utf-8", errors="replace")
        size, found = len(line), _ID.search(line[:4096])
        while not line.endswith(b"\n"):
            line = self._in.readline(_PIECE)
            if not line:
                break
            size += len(line)
        self._answer({"jsonrpc": "2.0", "id": json.loads(found.group(1)) if found else None,
                      "error": {"code": -32600, "message": f"request of {size} bytes or more is over the server's "
                                f"{self.max_bytes}-byte limit (kbt mcp --max-request-bytes); it was not read"}})
        logging.getLogger("kb_tools").warning("refused a request of %d bytes or more (limit %d)", size, self.max_bytes)
        return ""

    def _answer(self, message: dict) -> None:
        self._write(json.dumps(message) + "\n")

    def _write(self, text: str) -> None:
        with self._lock:
            if self.hung_up:
                return
            try:
                self._out.write(text.encode("utf-8"))
                self._out.flush()
            except (BrokenPipeError, ConnectionResetError, ValueError):
                self.hung_up = True  # the client is gone: nothing more to say, and no traceback

    def streams(self):
        """(stdin, stdout) in the shapes ``mcp.server.stdio.stdio_server`` takes."""
        import anyio

        wire = self

        class Lines:
            def __aiter__(self):
                return self

            async def __anext__(self) -> str:
                while True:
                    line = await anyio.to_thread.run_sync(wire._line)
                    if line is None:
                        raise StopAsyncIteration
                    if line.strip():
                        return line

        class Out:
            async def write(self, text: str) -> None:
                wire._write(text)

            async def flush(self) -> None:
                pass

        return Lines(), Out()
