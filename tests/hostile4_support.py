"""What the round-4 hostile tests share: ``kbt`` in a child process with its own wall time and
peak memory (os.wait4's rusage of that one child), a file's hash, and a raw MCP stdio client
that can send what a real client never would (a 100 MB line, a hang-up mid-call)."""

from __future__ import annotations

import hashlib
import json
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from conftest import REPO

KBT = [sys.executable, "-m", "kb_tools"]


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float
    peak_mb: float


def run_kbt(*argv, cwd=REPO, stdin: bytes | None = None, timeout: float = 120, env=None) -> Run:
    """``kbt ARGV`` in a child under /usr/bin/time: its exit status, output, wall time and peak
    resident memory (GNU time's %M, of that one process)."""
    import tempfile

    with tempfile.NamedTemporaryFile("r") as peak:
        start = time.monotonic()
        try:
            done = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak.name, *KBT, *map(str, argv)], cwd=cwd,
                                  input=stdin if stdin is not None else b"", capture_output=True, timeout=timeout,
                                  env={**os.environ, **(env or {})})
        except subprocess.TimeoutExpired as exc:
            return Run(124, (exc.stdout or b"").decode(), (exc.stderr or b"").decode(), time.monotonic() - start, 0.0)
        seconds = time.monotonic() - start
        kb = peak.read().split()
    return Run(done.returncode, done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace"),
               seconds, int(kb[-1]) / 1024 if kb else 0.0)


def one_line(run: Run, code: str, exit_code: int | None = None) -> str:
    """The refusal's single stderr line: no traceback, non-zero exit, carries ``code``."""
    assert "Traceback" not in run.err, run.err[-2000:]
    assert (run.code != 0) if exit_code is None else run.code == exit_code, (run.code, run.err[-1000:])
    lines = [line for line in run.err.splitlines() if line.strip()]
    assert len(lines) == 1, lines[:5]
    assert f" {code} " in f" {lines[0]} " or f"{code}" in lines[0], lines[0]
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class Mcp:
    """``kbt mcp --root ROOT`` over raw stdio."""

    def __init__(self, root: Path, *extra: str):
        self.proc = subprocess.Popen([*KBT, "--kb-root", str(REPO), "mcp", "--root", str(root), *extra],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buf, self.n = b"", 0
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "hostile4", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, obj) -> None:
        self.send_line(json.dumps(obj).encode())

    def send_line(self, line: bytes) -> None:
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict, timeout: float = 60):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        return self.reply(self.n, timeout)

    def reply(self, wanted, timeout: float = 60):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") == wanted:
                    return message
            if select.select([self.proc.stdout], [], [], 0.2)[0]:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    return None
                self.buf += chunk
        return None

    def tool(self, name: str, arguments: dict) -> dict:
        """(is_error, the structured result or the error text)."""
        message = self.call("tools/call", {"name": name, "arguments": arguments})
        result = message["result"]
        return result.get("isError", False), result.get("structuredContent") or result["content"][0]["text"]

    def close(self) -> str:
        """End the session; the server's standard error."""
        self.proc.stdin.close()
        self.proc.wait(30)
        err = self.proc.stderr.read().decode("utf-8", "replace")
        self.proc.stdout.close()
        self.proc.stderr.close()
        return err
