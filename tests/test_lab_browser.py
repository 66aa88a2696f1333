"""JupyterLab started as ``make lab`` starts it (kb_tools.outputs.lab_launch), in a real browser:
a review written by ``kbt review --format notebook -o X.py`` opens as a notebook, with no
"Unreadable Notebook" and no Select Kernel dialog, its kernel starts by itself, and the tab is
not marked modified. The server and its kernel are stopped whatever happens, within seconds."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import REPO
from kb_tools.outputs.lab_launch import lab_argv, lab_env, write_settings
from real_browser import browser_page, chromium

START_S = 60  # the server up, or the test fails rather than waits


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _api(base: str, path: str, token: str, method: str = "GET"):
    request = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as reply:
        body = reply.read()
    return json.loads(body) if body else None


def _stop(server: subprocess.Popen, base: str, token: str) -> None:
    """Shut the kernels down through the server (they run in sessions of their own), then the server."""
    try:
        for kernel in _api(base, "/api/kernels", token):
            _api(base, f"/api/kernels/{kernel['id']}", token, method="DELETE")
    except OSError:
        pass
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(3)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(5)


@pytest.fixture
def lab(tmp_path):
    """(base url, token, root): a JupyterLab server as make lab configures it, over ``tmp_path/root``."""
    pytest.importorskip("jupyterlab")
    pytest.importorskip("playwright", reason="playwright is not installed (pip install -e '.[test]')")
    chromium()  # skips before a server is started for nothing
    root, settings = tmp_path / "root", tmp_path / "settings"
    root.mkdir()
    write_settings(settings)
    port, token = _free_port(), "opkb-test"
    base = f"http://127.0.0.1:{port}"
    env = {**lab_env(), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONPATH": str(REPO)}
    argv = lab_argv(root, settings, [f"--port={port}", "--ServerApp.ip=127.0.0.1", "--no-browser",
                                     f"--IdentityProvider.token={token}"])
    with open(tmp_path / "lab.log", "wb") as log:
        server = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + START_S
        while True:
            try:
                _api(base, "/api/status", token)
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not start: {(tmp_path / 'lab.log').read_text()[-2000:]}")
                time.sleep(0.2)
        yield base, token, root
    finally:
        _stop(server, base, token)


def test_lab_opens_a_review_py_as_a_notebook_unmodified(lab, kbt):
    base, token, root = lab
    assert kbt("review", REPO / "ops" / "softmax.yaml", "--format", "notebook", "-o", root / "review.py").code == 0
    with browser_page() as page:
        page.goto(f"{base}/lab/tree/review.py?token={token}")
        # the first cells as a notebook draws them: the review's title, its first code cell
        page.locator(".jp-NotebookPanel .jp-MarkdownCell", has_text="Design review: softmax").wait_for(timeout=60_000)
        page.locator(".jp-NotebookPanel .jp-CodeCell", has_text="ReviewSession.open").wait_for()
        sessions = []
        deadline = time.monotonic() + 60
        while not (sessions and sessions[0]["kernel"]["execution_state"] == "idle") and time.monotonic() < deadline:
            time.sleep(0.5)
            sessions = _api(base, "/api/sessions", token)
        assert sessions and sessions[0]["kernel"]["name"] == "python3", f"no kernel started by itself: {sessions}"
        page.wait_for_selector(".jp-StatusBar-TextItem:has-text('Idle')", timeout=30_000)
        page.wait_for_timeout(1000)  # the kernel's language_info reaches the notebook's metadata
        dialogs = page.locator(".jp-Dialog").all_inner_texts()
        assert not dialogs, f"a dialog opened: {dialogs}"  # "Unreadable Notebook", "Select Kernel"
        tab = page.locator(".lm-DockPanel .lm-TabBar-tab", has_text="review.py")
        assert "jp-mod-dirty" not in tab.get_attribute("class"), "the untouched review is marked modified"
