"""`make lab` in a real browser: a review ``.py`` opens as a notebook (no "Unreadable Notebook", no
Select Kernel dialog, its kernel started by itself, the tab not marked modified), a module in the
editor.

JupyterLab starts the way `make lab` starts it (kb_tools.outputs.lab_launch, through
tests/lab_server.py), over the repository; Playwright drives Debian's chromium. Each kind of file
is opened the two ways a user opens one: a double-click in the file browser, and a command without a viewer named (`docmanager:open`, and
`rendermime:handle-local-link`, which a notebook's link runs) on a file no listing has shown;
Open With, which names its viewer, still gets it.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import REPO
from kb_tools.cli import main as kbt_main
from kb_tools.outputs.lab_launch import EXTENSIONS
from lab_server import lab_server
from real_browser import browser_page, chromium

# its module fixture is costly: every test of the module on one worker (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("lab-server")


@pytest.fixture(scope="module")
def lab_files():
    """Under the server's root (the repository): a review .py and a copy of kb_tools/cli.py, and
    the same two in unlisted/, a folder the file browser is never shown."""
    (REPO / "build").mkdir(exist_ok=True)
    files = Path(tempfile.mkdtemp(prefix="lab-viewers-", dir=REPO / "build"))
    try:
        (files / "unlisted").mkdir()
        assert kbt_main(["review", str(REPO / "ops" / "add.yaml"), "--format", "notebook", "-o", str(files / "review.py")]) == 0
        shutil.copy(files / "review.py", files / "unlisted" / "review.py")
        for folder in (files, files / "unlisted"):
            shutil.copy(REPO / "kb_tools" / "cli.py", folder / "cli.py")
        yield files
    finally:
        shutil.rmtree(files, ignore_errors=True)


def test_the_server_serves_a_review_as_a_notebook_and_a_module_as_a_file(lab_files):
    """The types the frontend opens by, and the read-only notebook a module gets when asked for as one."""
    import asyncio

    from tornado.web import HTTPError

    from kb_tools.outputs.lab_contents import ScriptNotebooksContentsManager

    manager = ScriptNotebooksContentsManager(root_dir=str(REPO))
    rel = lab_files.relative_to(REPO).as_posix()

    async def check():
        listing = await manager.get(rel)
        assert {m["name"]: m["type"] for m in listing["content"]} == {"review.py": "notebook", "cli.py": "file", "unlisted": "directory"}
        for path, kind in ((f"{rel}/unlisted/review.py", "notebook"), ("kb_tools/cli.py", "file"), ("notebooks/promote.py", "notebook")):
            assert (await manager.get(path, content=False))["type"] == kind, path
        shown = await manager.get(f"{rel}/cli.py", type="notebook")
        assert shown["writable"] is False and "Open With → Editor" in shown["content"].cells[0].source
        with pytest.raises(HTTPError) as refused:
            await manager.save({"type": "notebook", "content": shown["content"]}, f"{rel}/cli.py")
        assert refused.value.status_code == 403

    asyncio.run(check())
    assert (lab_files / "cli.py").read_bytes() == (REPO / "kb_tools" / "cli.py").read_bytes()


def test_the_committed_extension_is_built_from_its_source_package():
    """`make lab` loads the committed build without node: it is whole, and of labextension/'s package."""
    import json

    source = json.loads((REPO / "labextension" / "package.json").read_text())
    built = json.loads((EXTENSIONS / source["name"] / "package.json").read_text())
    load = built["jupyterlab"].pop("_build")["load"]
    assert built == source, "labextension/package.json changed since the build: run make lab-extension"
    entry = EXTENSIONS / source["name"] / load
    assert entry.is_file() and "opkb-lab-viewers:plugin" in "".join(
        p.read_text() for p in entry.parent.glob("*.js")), entry


@pytest.fixture
def lab_page(lab_files, tmp_path):
    """A chromium page on `make lab` over the repository, in the folder holding lab_files."""
    pytest.importorskip("playwright", reason="playwright is not installed (pip install -e '.[test]')")
    chromium()  # skips before a server is started for nothing
    extra = ["--LabApp.expose_app_in_browser=True", f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}",
             f"--LabApp.user_settings_dir={tmp_path / 'user-settings'}"]
    with lab_server(REPO, tmp_path, extra) as (base, token), browser_page() as page:
        rel = lab_files.relative_to(REPO).as_posix()
        page.goto(f"{base}/lab/tree/{rel}?token={token}")
        page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started")
        yield page, rel


CURRENT = "() => { const w = window.jupyterapp.shell.currentWidget; return w && w.context ? w.context.path : null; }"
SHOWS = """path => { const w = window.jupyterapp.shell.currentWidget;
  if (!w || !w.context || w.context.path !== path || !w.context.isReady) return null;
  return w.node.classList.contains('jp-NotebookPanel') ? 'notebook'
       : w.content && w.content.node.classList.contains('jp-FileEditor') ? 'editor' : 'other'; }"""


def _double_click(page, name: str) -> None:
    page.locator(".jp-DirListing-content .jp-DirListing-itemText", has_text=re.compile(f"^{re.escape(name)}$")).dblclick()


def _run(page, command: str, **args) -> None:
    """Run a JupyterLab command (what it returns, a widget, stays in the page)."""
    page.evaluate("async ([command, args]) => { await window.jupyterapp.commands.execute(command, args); }", [command, args])


def _shown_as(page, path: str) -> str:
    page.wait_for_function(f"path => ({SHOWS})(path) !== null", arg=path)
    return page.evaluate(f"path => ({SHOWS})(path)", path)


def _assert_review_notebook(page, path: str) -> None:
    assert _shown_as(page, path) == "notebook", page.evaluate(CURRENT)
    panel = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)")
    panel.locator(".jp-Cell", has_text="Design review: add").first.wait_for()
    # the kernel starts by itself: it is there, and no dialog asked for one
    page.wait_for_function("() => { const s = window.jupyterapp.shell.currentWidget.sessionContext;"
                           " return s.session && s.session.kernel && s.session.kernel.name === 'python3'; }")
    assert page.locator(".jp-Dialog").count() == 0, page.locator(".jp-Dialog").first.inner_text()
    assert "Unreadable Notebook" not in page.inner_text("body")


def _assert_module_editor(page, path: str) -> None:
    assert _shown_as(page, path) == "editor", page.evaluate(CURRENT)
    editor = page.locator(".jp-MainAreaWidget:not(.lm-mod-hidden) .jp-FileEditor .cm-content")
    first_line = next(line for line in (REPO / "kb_tools" / "cli.py").read_text().splitlines() if line.strip())
    editor.filter(has_text=first_line[:40]).first.wait_for()
    assert "is a Python module, not a notebook" not in page.inner_text("body")


def _assert_unmodified_once_idle(page, name: str) -> None:
    """The kernel's start fills in nothing the served notebook lacked (kernelspec, language_info)."""
    page.wait_for_selector(".jp-StatusBar-TextItem:has-text('Idle')", timeout=60_000)
    page.wait_for_timeout(1000)  # the kernel's language_info reaches the notebook's metadata
    tab = page.locator(".lm-DockPanel .lm-TabBar-tab", has_text=name).first
    assert "jp-mod-dirty" not in tab.get_attribute("class"), f"the untouched {name} is marked modified"
    assert "Jupyter news" not in page.inner_text("body"), "JupyterLab asks about its news feed"


def test_make_lab_opens_a_review_as_a_notebook_and_a_module_in_the_editor(lab_page):
    """One test, so that one server and one browser serve every check, whichever worker runs it."""
    page, rel = lab_page
    # a double-click in the file browser
    _double_click(page, "review.py")
    _assert_review_notebook(page, f"{rel}/review.py")
    _assert_unmodified_once_idle(page, "review.py")
    _double_click(page, "cli.py")
    _assert_module_editor(page, f"{rel}/cli.py")
    # a notebook's link, and an open that names no viewer, on files no listing has shown
    _run(page, "rendermime:handle-local-link", path=f"{rel}/unlisted/review.py")
    _assert_review_notebook(page, f"{rel}/unlisted/review.py")
    _run(page, "docmanager:open", path=f"{rel}/unlisted/cli.py")
    _assert_module_editor(page, f"{rel}/unlisted/cli.py")
    # Open With → Editor runs docmanager:open with its factory: a review then opens as text
    _run(page, "docmanager:open", path=f"{rel}/review.py", factory="Editor")
    assert _shown_as(page, f"{rel}/review.py") == "editor"
