"""Round-4 repro 17: markup planted in a spec's description, a page's title, trigger, invariant
and body, ROUTER.md, CONTRACT.md and a glossary alias reaches the built site as text, never as
an element; every page carries a Content-Security-Policy that runs no inline script; and in a
real browser (Playwright driving chromium) the planted handlers do not run. The control: the
site's own folds and the Ask page's scripts are still there."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from conftest import REPO
from kb_tools.kb.pages import load_kb
from kb_tools.outputs.site import build_site

pytestmark = pytest.mark.xdist_group("site")
PLACES = ("Title", "Invariant", "Trigger", "Body", "Block", "Router", "Contract", "Glossary", "Desc")


def _planted(tag: str) -> str:
    return f'<img src="x" onerror="document.body.dataset.pwned{tag}=1">'


def _plant(root: Path) -> None:
    page = root / "kb" / "constraints" / "accumulator-precision.md"
    lines = page.read_text().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("title: "):
            lines[i] = "title: " + json.dumps(_planted("Title") + " " + line[7:])
        elif line.startswith("    text: For fp16 and bf16 inputs"):
            lines[i] = "    text: " + json.dumps(_planted("Invariant") + " " + line[10:])
    text = "\n".join(lines).replace("  A reduction, scan or fused", "  " + _planted("Trigger").replace('"', "'") + " A reduction, scan or fused", 1)
    page.write_text(text + f"\n\nBody {_planted('Body')}\n\n<div>\n{_planted('Block')}\n</div>\n")
    for name, tag in (("ROUTER.md", "Router"), ("CONTRACT.md", "Contract")):
        (root / name).write_text((root / name).read_text() + f"\n\nText {_planted(tag)}\n")
    glossary = root / "kb" / "glossary.yaml"
    glossary.write_text(glossary.read_text().replace("aliases: [strided,", "aliases: [" + json.dumps(_planted("Glossary")) + ", strided,", 1))
    spec = root / "ops" / "mean.yaml"
    spec.write_text(spec.read_text().replace("description: >-\n", "description: >-\n  " + _planted("Desc") + " ", 1))


@pytest.fixture(scope="module")
def planted_site(tmp_path_factory):
    import shutil

    root = tmp_path_factory.mktemp("repo") / "kb"
    shutil.copytree(REPO, root, ignore=shutil.ignore_patterns(".venv", ".git", "build", "__pycache__", ".pytest_cache"))
    _plant(root)
    out = tmp_path_factory.mktemp("site") / "site"
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        assert build_site(root, load_kb(root), out, None, root / "ops") == 0
    return out


def test_planted_markup_is_text_on_every_page(planted_site):
    pages = sorted(planted_site.rglob("*.html"))
    shown = "".join(p.read_text("utf-8", errors="replace") for p in pages)
    assert not re.search(r"<img[^>]*onerror", shown)
    for tag in PLACES:  # each planted fragment is on the site, as the text the user wrote
        assert f"document.body.dataset.pwned{tag}=1" in shown, tag
    assert re.search(r"&lt;img src=.x. onerror=.document", (planted_site / "router.html").read_text())  # as text


def test_every_page_carries_a_policy_without_inline_script(planted_site):
    for page in planted_site.rglob("*.html"):
        head = page.read_text("utf-8", errors="replace").split("</head>", 1)[0]
        policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', head)
        assert policy, page
        script = next(d for d in policy.group(1).split(";") if d.strip().startswith("script-src"))
        assert "'unsafe-inline'" not in script and "'unsafe-eval'" not in script


def test_the_sites_own_markup_is_kept(planted_site):
    assert '<details class="opkb-fold"' in (planted_site / "operators" / "mean.html").read_text()
    assert '<form id="opkb-ask"' in (planted_site / "ask.html").read_text()
    assert re.search(r'<script src="_static/[^"]+"', (planted_site / "ask.html").read_text())


def test_no_planted_handler_runs_in_a_browser(planted_site):
    from real_browser import browser_page

    pages = ["operators.html", "constraints.html", "router.html", "CONTRACT.html", "glossary.html",
             "kb/constraints/accumulator-precision.html", "operators/mean.html"]
    with browser_page() as tab:
        for name in pages:
            tab.goto((planted_site / name).as_uri())
            tab.wait_for_load_state("load")
            tab.wait_for_timeout(300)
            ran = tab.evaluate("Object.keys(document.body.dataset).filter(k => k.startsWith('pwned'))")
            assert ran == [], (name, ran)
            assert tab.evaluate("document.querySelectorAll('img[onerror]').length") == 0, name
        tab.goto((planted_site / "operators" / "mean.html").as_uri())
        assert tab.evaluate("document.querySelectorAll('details.opkb-fold').length") > 0  # control: the folds are elements
