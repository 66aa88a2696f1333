"""Every constraint and pattern is demonstrated by a notebook or records on its page why
nothing of it runs; kbt lint names the undemonstrated ones (negative controls on a KB copy)."""

from __future__ import annotations

from pathlib import Path

from kb_tools.lint import run_lint

PGC = "kb/constraints/platform-gated-conversion.md"
CAT = "kb/patterns/cat-lowering.md"


def _findings(root: Path) -> dict[tuple[str, str], tuple[str, str]]:
    return {(Path(d.path).name, d.code): (d.severity, d.message) for r in run_lint(root) for d in r.diagnostics}


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, (rel, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_undemonstrated_page_is_named_with_its_reason(repo_copy):
    found = _findings(repo_copy)
    severity, message = found["platform-gated-conversion.md", "LN091"]
    assert severity == "note" and message.startswith("undemonstrated: Nothing of it runs off the target")
    assert not [key for key in found if key[1] in ("LN090", "LN092", "LN093")]


def test_a_pattern_with_neither_notebook_nor_reason_is_named(repo_copy):
    _edit(repo_copy, CAT, "demonstrated_by: [notebooks/launch_shapes.py]\n", "")
    severity, message = _findings(repo_copy)["cat-lowering.md", "LN093"]
    assert severity == "warning" and "no demonstrated_by notebook and no undemonstrated reason" in message


def test_notebooks_and_a_reason_together_are_an_error(repo_copy):
    _edit(repo_copy, CAT, "sources:\n", "undemonstrated: nothing to run here, it is said twice\nsources:\n")
    assert _findings(repo_copy)["cat-lowering.md", "LN092"][0] == "error"


def test_a_reason_must_say_something(repo_copy):
    text = (repo_copy / PGC).read_text(encoding="utf-8")
    start = text.index("undemonstrated: >-")
    end = text.index("sources:", start)
    (repo_copy / PGC).write_text(text[:start] + "undemonstrated: none\n" + text[end:], encoding="utf-8")
    assert ("platform-gated-conversion.md", "PG010") in _findings(repo_copy)
