"""JupyterLab started as ``make lab`` starts it (kb_tools.outputs.lab_launch), in a real browser:
a review written by ``kbt review --format notebook -o X.py`` opens as a notebook, with no
"Unreadable Notebook" and no Select Kernel dialog, its kernel starts by itself, and the tab is
not marked modified. The server and its kernel are stopped whatever happens, within seconds."""

from __future__ import annotations

import time

import pytest

from conftest import REPO
from lab_server import api, lab_server
from real_browser import browser_page, chromium


@pytest.fixture
def lab(tmp_path):
    """(base url, token, root): a JupyterLab server as make lab configures it, over ``tmp_path/root``."""
    pytest.importorskip("jupyterlab")
    pytest.importorskip("playwright", reason="playwright is not installed (pip install -e '.[test]')")
    chromium()  # skips before a server is started for nothing
    root = tmp_path / "root"
    root.mkdir()
    with lab_server(root, tmp_path) as (base, token):
        yield base, token, root


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
            sessions = api(base, "/api/sessions", token)
        assert sessions and sessions[0]["kernel"]["name"] == "python3", f"no kernel started by itself: {sessions}"
        page.wait_for_selector(".jp-StatusBar-TextItem:has-text('Idle')", timeout=30_000)
        page.wait_for_timeout(1000)  # the kernel's language_info reaches the notebook's metadata
        dialogs = page.locator(".jp-Dialog").all_inner_texts()
        assert not dialogs, f"a dialog opened: {dialogs}"  # "Unreadable Notebook", "Select Kernel"
        tab = page.locator(".lm-DockPanel .lm-TabBar-tab", has_text="review.py")
        assert "jp-mod-dirty" not in tab.get_attribute("class"), "the untouched review is marked modified"
