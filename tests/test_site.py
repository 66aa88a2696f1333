"""The static site: it builds offline, every internal link resolves, and headless Chromium
loads the key pages, with a notebook page showing its figures (a screenshot is saved under
build/test-output/)."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from kb_tools.notebook_runner import execute
from kb_tools.pages import load_kb
from kb_tools.site import build_site

from conftest import REPO

SCREENSHOTS = REPO / "build" / "test-output"


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.targets: list[str] = []
        self.images = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images += 1
        for key in ("href", "src"):
            if attrs.get(key):
                self.targets.append(attrs[key])


def _parse(path: Path) -> _Links:
    parser = _Links()
    parser.feed(path.read_text("utf-8", errors="replace"))
    return parser


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("site")
    executed = tmp / "notebooks"
    source = REPO / "notebooks" / "promote.py"
    if not source.exists():  # any notebook with a figure will do; promote is quick
        source = sorted((REPO / "notebooks").glob("*.py"))[0]
    result = execute(source, executed, ["cpu"], html=False)
    assert result.error is None, result.error
    out = tmp / "site"
    assert build_site(REPO, load_kb(REPO), out, executed, REPO / "ops") == 0
    return out, source.stem


def test_every_page_and_link_resolves(site):
    out, _ = site
    pages = sorted(out.rglob("*.html"))
    kb = load_kb(REPO)
    assert len(pages) >= len(kb.pages) + len(list((REPO / "ops").glob("*.yaml"))) + 3
    broken = []
    for page in pages:
        for target in _parse(page).targets:
            parts = urlsplit(target)
            if parts.scheme or target.startswith(("#", "mailto:", "data:")):
                continue
            path = unquote(parts.path)
            if path and not (page.parent / path).exists():
                broken.append(f"{page.relative_to(out)} -> {target}")
    assert not broken, broken[:10]


def test_kb_page_has_its_fact_box_and_operators(site):
    out, _ = site
    html = (out / "kb" / "constraints" / "golden-promote.html").read_text()
    assert "Facts" in html and "applies to" in html and "../../operators/softmax.html" in html


def test_operator_review_and_router_are_there(site):
    out, _ = site
    assert "Design review: bernoulli" in (out / "operators" / "bernoulli.html").read_text()
    assert "decide-host-work" in (out / "router.html").read_text()


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def test_chromium_loads_pages_and_notebook_figures(site):
    out, stem = site
    browser = _chromium()
    if browser is None:
        pytest.skip("headless Chromium is not installed (make browser installs Debian's chromium)")
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"]
    for rel in ("index.html", "router.html", "kb/constraints/wrapper-boundary.html", f"notebooks/{stem}.html", "operators/softmax.html"):
        dom = subprocess.run([*flags, "--dump-dom", (out / rel).as_uri()], capture_output=True, text=True, timeout=120).stdout
        assert "<title>" in dom and "opkb" in dom, rel
    notebook = out / "notebooks" / f"{stem}.html"
    dom = subprocess.run([*flags, "--dump-dom", notebook.as_uri()], capture_output=True, text=True, timeout=120).stdout
    assert dom.count("<img") >= 1, "the executed notebook page shows no figure"
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / f"site_notebook_{stem}.png"
    subprocess.run([*flags, f"--screenshot={shot}", "--window-size=1280,1600", notebook.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.is_file() and shot.stat().st_size > 10_000
    print(f"screenshot: {shot}")
