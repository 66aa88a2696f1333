"""Text from a spec, a usage file or a file name is escaped for the format it lands in
(hostile-3 repros 01 and 17): HTML shows markup as text, a Markdown table cell stays one
cell, and a SARIF URI is a URI whatever bytes the file name holds."""

from __future__ import annotations

import json
import os
import shutil
from html.parser import HTMLParser

from conftest import REPO
from hostile_support import spec_with

PAYLOAD = '<img src=x onerror="document.body.dataset.pwned=1"> <script>alert(1)</script> a | b'


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.attributes = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [name for name, _ in attrs]


def _spec_with_description(tmp_path, text):
    spec = tmp_path / "hostile.yaml"
    spec.write_text(spec_with("description: >-\n  A row reduction with half inputs, accumulated in float32.\n",
                              "description: " + json.dumps(text) + "\n"))
    return spec


def test_markup_in_a_spec_description_stays_text_in_the_html_review(kbt, tmp_path):
    """Repro 01: an <img onerror> in `description:` ran its script when the review was opened."""
    spec = _spec_with_description(tmp_path, PAYLOAD)
    out = tmp_path / "review.html"
    result = kbt("review", spec, "--format", "html", "-o", out, root=REPO)
    assert result.code == 0, result.err
    html = out.read_text()
    tags = _Tags()
    tags.feed(html)
    assert "img" not in tags.tags and "script" not in tags.tags
    assert not any(name.startswith("on") for name in tags.attributes)
    assert "&lt;img src=x onerror=" in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_markup_in_a_spec_description_stays_text_in_the_markdown_review(kbt, tmp_path):
    spec = _spec_with_description(tmp_path, PAYLOAD)
    result = kbt("review", spec, root=REPO)
    assert result.code == 0, result.err
    (row,) = [line for line in result.out.splitlines() if line.startswith("| what it does |")]
    assert "<img" not in row and "<script" not in row and "&lt;img" in row
    assert row.count(" | ") == 1 and row.endswith(" |") and "a \\| b" in row


def test_sarif_of_a_file_name_that_is_not_utf8(kbt, tmp_path, monkeypatch):
    """Repro 17: `kbt audit . --format sarif` crashed in the fingerprint on a name holding \\xff."""
    folder = tmp_path / "a"
    folder.mkdir()
    target = os.fsdecode(os.fsencode(folder) + b"/bad\xff_wrapper.py")
    shutil.copy(REPO / "ops" / "wrappers" / "softmax_antipattern.py", target)
    monkeypatch.chdir(tmp_path)
    result = kbt("audit", "a", "--format", "sarif", root=REPO)
    assert result.code == 1, result.err
    sarif = json.loads(result.out)
    uris = {loc["physicalLocation"]["artifactLocation"]["uri"]
            for run in sarif["runs"] for res in run["results"] for loc in res["locations"]}
    assert uris == {"a/bad%FF_wrapper.py"}
