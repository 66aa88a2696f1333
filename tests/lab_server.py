"""JupyterLab as ``make lab`` starts it (kb_tools.outputs.lab_launch), for the browser tests: on a
free port with a token, its settings, runtime files and log in a scratch folder, and stopped,
with its kernels, whatever happens, within seconds."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import REPO
from kb_tools.outputs.lab_launch import lab_argv, lab_env, write_settings

START_S = 60  # the server up, or the test fails rather than waits


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def api(base: str, path: str, token: str, method: str = "GET"):
    request = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as reply:
        body = reply.read()
    return json.loads(body) if body else None


def _stop(server: subprocess.Popen, base: str, token: str) -> None:
    """Shut the kernels down through the server (they run in sessions of their own), then the server."""
    try:
        for kernel in api(base, "/api/kernels", token):
            api(base, f"/api/kernels/{kernel['id']}", token, method="DELETE")
    except OSError:
        pass
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(3)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(5)


@contextmanager
def lab_server(root: Path, scratch: Path, extra: list[str] = ()):
    """(base url, token) of a JupyterLab server over ``root``."""
    settings = scratch / "settings"
    write_settings(settings)
    port, token = _free_port(), "opkb-test"
    base = f"http://127.0.0.1:{port}"
    env = {**lab_env(), "JUPYTER_RUNTIME_DIR": str(scratch / "runtime"), "PYTHONPATH": str(REPO)}
    argv = lab_argv(root, settings, [f"--port={port}", "--ServerApp.ip=127.0.0.1", "--no-browser",
                                     f"--IdentityProvider.token={token}", *extra])
    with open(scratch / "lab.log", "wb") as log:
        server = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                api(base, "/api/status", token)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(scratch / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.2)
        yield base, token
    finally:
        _stop(server, base, token)
