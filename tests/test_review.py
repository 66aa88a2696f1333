"""``kbt review``: the walkthrough names every page with its reason, shows the coder's claims
and the wrapper audit, lists exclusions, and is deterministic."""

from __future__ import annotations

import json
import shutil

from conftest import REPO
from kb_tools.contract.selection import select
from kb_tools.contract.specs import load_spec
from kb_tools.kb.pages import load_kb


def test_review_covers_selection_and_is_deterministic(kbt):
    not_json = kbt("review", REPO / "ops" / "bernoulli.yaml", "--usage", REPO / "ops" / "bernoulli.yaml")
    assert not_json.code == 2 and "invalid JSON" in not_json.err and "Traceback" not in not_json.err
    a = kbt("review", REPO / "ops" / "bernoulli.yaml")
    b = kbt("review", REPO / "ops" / "bernoulli.yaml")
    assert a.code == 0 and a.out == b.out
    sel = select(load_kb(REPO), load_spec(REPO / "ops" / "bernoulli.yaml"))
    for verdict in sel.references:
        assert f"### {verdict.page.title}" in a.out
        assert verdict.reason in a.out
    for verdict in sel.excluded:
        assert verdict.page.rel_path in a.out
    assert "## Reviewer checklist" in a.out and a.out.count("- [ ] ") == len(sel.references) + 3
    assert "| float64 | `binary_equal` |" in a.out


def test_review_shows_claims_and_audit_findings(kbt, tmp_path):
    out = tmp_path / "u"
    assert kbt("usage", REPO / "ops" / "softmax.yaml", "-o", out).code == 0
    doc = json.loads((out / "KB_USAGE.json").read_text())
    record = next(r for r in doc["invariants"] if r["invariant_id"] == "no-host-cast")
    record["implementation"] = {"file": "ops/wrappers/softmax_wrapper.py", "symbol": "softmax_wrapper", "status": "implemented"}
    (out / "KB_USAGE.json").write_text(json.dumps(doc))
    # point the spec at the seed's anti-pattern: the audit must contradict the claim
    src = tmp_path / "src"
    (src / "ops" / "wrappers").mkdir(parents=True)
    shutil.copy(REPO / "ops" / "wrappers" / "softmax_antipattern.py", src / "ops" / "wrappers" / "softmax_wrapper.py")
    result = kbt("review", REPO / "ops" / "softmax.yaml", "--usage", out / "KB_USAGE.json", "--root", src)
    assert result.code == 0, result.err
    row = next(line for line in result.out.splitlines() if line.startswith("| `no-host-cast`"))
    assert "implemented" in row and "`ops/wrappers/softmax_wrapper.py` : `softmax_wrapper`" in row and "**FAIL**" in row
    assert "WB101" in result.out and "findings in" in result.out


def test_review_html(kbt, repo_copy, tmp_path):
    target = tmp_path / "r" / "add.html"
    assert kbt("review", repo_copy / "ops" / "add.yaml", "--format", "html", "-o", target, root=repo_copy).code == 0
    html = target.read_text()
    assert html.startswith("<!DOCTYPE html>") and "<table>" in html and "Design review: add" in html
    first_link = html.split('href="')[1].split('"')[0]
    # no site built yet: the links open the pages' Markdown
    assert first_link.endswith(".md") and (target.parent / first_link).resolve().is_file()
    assert "(class `.`)" not in html and "<code>.</code>" not in html


def test_review_html_links_the_built_site(kbt, repo_copy, tmp_path):
    site = repo_copy / "build" / "site"
    for page in (repo_copy / "kb").rglob("*.md"):
        rendered = site / "kb" / page.relative_to(repo_copy / "kb").with_suffix(".html")
        rendered.parent.mkdir(parents=True, exist_ok=True)
        rendered.write_text("<html></html>")
    (site / "index.html").write_text("<html></html>")
    target = tmp_path / "r" / "softmax.html"
    assert kbt("review", repo_copy / "ops" / "softmax.yaml", "--format", "html", "-o", target, root=repo_copy).code == 0
    links = [chunk.split('"')[0] for chunk in target.read_text().split('href="')[1:]]
    assert links and all(link.endswith(".html") and (target.parent / link).resolve().is_file() for link in links), links[:3]
    markdown = kbt("review", repo_copy / "ops" / "softmax.yaml", root=repo_copy).out
    assert "constraints/wrapper-boundary.md)" in markdown, "the Markdown review still links the pages' sources"


def test_review_bad_spec(kbt, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("op: [\n")
    result = kbt("review", bad)
    assert result.code == 1 and "bad.yaml" in result.err and "Traceback" not in result.err
