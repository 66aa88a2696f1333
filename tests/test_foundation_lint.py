"""``kbt lint``: the real KB is clean, and each injected defect yields exactly its finding
(negative controls on a copy of the real KB)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kb_tools.lint import run_lint


WB = "kb/constraints/wrapper-boundary.md"


def findings(root: Path) -> set[tuple[str, str, str]]:
    return {(Path(d.path).name, d.code, d.message) for r in run_lint(root) for d in r.diagnostics}


def new_findings(before, after) -> set[tuple[str, str]]:
    """The (file, code) of each finding that the injected defect added."""
    return {(name, code) for name, code, _ in after - before}


def test_real_kb_is_clean(kbt):
    result = kbt("lint")
    assert result.code == 0, result.err
    assert "examined nothing" not in result.out


def _edit(root, rel, old, new):
    path = root / rel
    text = path.read_text()
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1))


CONTROLS = [
    ("wrong type", lambda r: _edit(r, WB, "kind: constraint", "kind: [constraint]"), ("wrapper-boundary.md", "PG010")),
    ("unknown key", lambda r: _edit(r, WB, "area: host", "area: host\nowner: someone"), ("wrapper-boundary.md", "PG010")),
    ("id != stem", lambda r: _edit(r, WB, "id: wrapper-boundary", "id: wrapper-boundary-rule"), ("wrapper-boundary.md", "PG011")),
    ("duplicate invariant id", lambda r: _edit(r, WB, "  - id: no-host-layout-change", "  - id: no-host-cast"), ("wrapper-boundary.md", "PG013")),
    ("router row to nowhere", lambda r: _edit(r, "ROUTER.md", "](kb/constraints/golden-promote.md)", "](kb/constraints/golden-promote-v2.md)"), ("ROUTER.md", "LN010")),
    ("missing body section", lambda r: _edit(r, WB, "## Pitfalls", "## Traps"), ("wrapper-boundary.md", "LN030")),
    ("unknown rule code", lambda r: _edit(r, WB, "rule: WB101", "rule: WB999"), ("wrapper-boundary.md", "LN040")),
    ("broken link", lambda r: _edit(r, WB, "## Pitfalls\n", "## Pitfalls\n\nSee [nothing](nothing-here.md).\n"), ("wrapper-boundary.md", "LN060")),
    ("unknown related", lambda r: _edit(r, WB, "related: [", "related: [no-such-page, "), ("wrapper-boundary.md", "LN061")),
    ("unknown seed", lambda r: _edit(r, WB, "{seed: 003_c3bf9396551a1c99.txt, section: cost}", "{seed: 009_unknown.txt, section: cost}"), ("wrapper-boundary.md", "LN070")),
    ("unknown section", lambda r: _edit(r, WB, "section: cost}", "section: costs}"), ("wrapper-boundary.md", "LN071")),
    ("undeclared criterion", lambda r: _edit(r, "ops/add.yaml", "  int64: binary_equal\n", ""), ("add.yaml", "LN100")),
]


@pytest.mark.parametrize("name,inject,expected", CONTROLS, ids=[c[0] for c in CONTROLS])
def test_negative_control(repo_copy, name, inject, expected):
    baseline = findings(repo_copy)
    inject(repo_copy)
    assert new_findings(baseline, findings(repo_copy)) == {expected}


def test_non_durable_file_name(repo_copy):
    baseline = findings(repo_copy)
    src = repo_copy / "kb/patterns/packed-mask-expansion.md"
    dst = src.with_name("packed-mask-expansion-v2.md")
    dst.write_text(src.read_text().replace("id: packed-mask-expansion", "id: packed-mask-expansion-v2"))
    src.unlink()
    assert ("packed-mask-expansion-v2.md", "LN080") in new_findings(baseline, findings(repo_copy))


def test_check_that_examines_nothing_is_not_passed(repo_copy):
    for spec in (repo_copy / "ops").glob("*.yaml"):
        spec.unlink()
    (result,) = [r for r in run_lint(repo_copy) if r.name == "operator specs"]
    assert result.examined == 0 and result.status == "examined nothing"


def test_lint_summary_counts(kbt):
    result = kbt("lint")
    m = re.search(r"kbt lint: (\d+)/(\d+) checks passed", result.out)
    assert m and m.group(1) == m.group(2)
