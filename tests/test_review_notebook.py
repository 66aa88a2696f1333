"""``kbt review --format notebook``: the review as a notebook whose checks run.

The worked example's review executes clean with every selected page, pandas tables and one
verdict per check; inputs the review cannot use become MISSING verdicts in the cells that
needed them while the rest still runs, and the command says so in one line.
"""

from __future__ import annotations

import shutil

import nbformat
import pytest

from conftest import REPO
from kb_tools.contract.selection import select
from kb_tools.contract.specs import load_spec
from kb_tools.kb.pages import load_kb
from kb_tools.outputs.review_checks import ReviewSession
from kb_tools.outputs.review_notebook import verdicts_of

pytestmark = pytest.mark.notebook


def _outputs(nb, kind):
    return [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.get("output_type") == kind]


def _html_tables(nb) -> int:
    return sum("dataframe" in o.get("data", {}).get("text/html", "") for o in _outputs(nb, "execute_result"))


def test_worked_example_review_executes_clean(kbt, tmp_path):
    target = tmp_path / "reviews" / "softmax.ipynb"
    result = kbt("review", REPO / "ops" / "softmax.yaml", "--format", "notebook", "--execute", "-o", target)
    assert result.code == 0, result.out + result.err
    assert "all 5 checks pass" in result.out
    nb = nbformat.read(target, as_version=4)
    assert not _outputs(nb, "error")
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    sel = select(load_kb(REPO), load_spec(REPO / "ops" / "softmax.yaml"))
    for verdict in sel.references:
        assert f"### {verdict.page.title}" in markdown and verdict.reason in markdown
        link = markdown.split(f"[`{verdict.page.rel_path}`](")[1].split(")")[0]
        assert (target.parent / link).resolve().is_file(), link  # page links resolve from the notebook
    verdicts = verdicts_of(nb)
    assert [v[1] for v in verdicts] == ["wrapper audit", "claims", "comparison float16", "comparison bfloat16", "comparison float32"]
    assert all(v[0] == "PASS" for v in verdicts)
    # operator, tolerances, properties; the claims of every page; metrics per dtype; exclusions
    assert _html_tables(nb) == 3 + len(sel.references) + 3 + 1
    html = [o["data"]["text/html"] for o in _outputs(nb, "execute_result") if "text/html" in o.get("data", {})]
    assert sum(h.count('src="data:image/png;base64,') for h in html) == 3  # one error distribution per dtype
    assert not [o for o in _outputs(nb, "display_data") if "image/png" in o.get("data", {})], "a figure is shown twice"
    # each page's invariants, each comparison's evidence and the excluded pages fold under one line
    # each, closed when all is well (the clean audit and claims have no table to show)
    folds = [h.split("</summary>")[0] for h in html if h.startswith('<details class="opkb-fold"><summary>')]
    assert len(folds) == len(sel.references) + 3 + 1, len(folds)
    pages = [f.split("<summary>")[1] for f in folds if " invariants: " in f]
    assert [p.split(" ")[0] for p in pages] == [str(len(v.page.invariants)) for v in sel.references], pages
    claims = _claims_column(nb)
    assert len(claims) == sum(len(v.page.invariants) for v in sel.references) and "open" not in claims


def _claims_column(nb) -> list[str]:
    """The claim cells of the page tables (a cell holding exactly one status word)."""
    html = "".join(c.outputs[0]["data"]["text/html"] for c in nb.cells
                   if c.cell_type == "code" and c.source.startswith("review.page("))
    return [s for s in ("implemented", "deviated", "not_applicable", "open") for _ in range(html.count(f"<td>{s}</td>"))]


def test_written_notebook_is_deterministic_and_py_is_percent(kbt, tmp_path):
    a, b, py = tmp_path / "a" / "r.ipynb", tmp_path / "b" / "r.ipynb", tmp_path / "a" / "r.py"
    for target in (a, b, py):
        assert kbt("review", REPO / "ops" / "softmax.yaml", "--format", "notebook", "-o", target).code == 0
    assert a.read_bytes() == b.read_bytes()
    # the cells repeated per page and per dtype show on the site without their code
    cells = nbformat.read(a, as_version=4).cells
    tagged = [c.source.split("(")[0] for c in cells if "remove-input" in c.metadata.get("tags", [])]
    sel = select(load_kb(REPO), load_spec(REPO / "ops" / "softmax.yaml"))
    assert sorted(tagged) == sorted(["review.compare"] * 3 + ["review.page"] * len(sel.references))
    import jupytext

    assert py.read_text().count("# %%") == len(nbformat.read(a, as_version=4).cells)
    assert len(jupytext.read(py).cells) == len(nbformat.read(a, as_version=4).cells)


def test_bad_inputs_are_missing_verdicts_and_the_rest_runs(kbt, tmp_path):
    """No wrapper in the spec, a usage file for another operator and a missing saved tensor,
    at once: each cell that needed one says so; the checklist still runs; one line, exit 1."""
    spec = tmp_path / "softmax.yaml"
    spec.write_text("\n".join(line for line in (REPO / "ops" / "softmax.yaml").read_text().splitlines()
                              if not line.startswith("wrapper:")) + "\n")
    root = tmp_path / "src"
    shutil.copytree(REPO / "examples" / "softmax", root, ignore=shutil.ignore_patterns("__pycache__"))
    (root / "tensors" / "bfloat16" / "dut.pt").unlink()
    assert kbt("usage", REPO / "ops" / "add.yaml", "-o", tmp_path / "add").code == 0
    target = tmp_path / "out" / "r.ipynb"
    result = kbt("review", spec, "--format", "notebook", "--execute", "--root", root,
                 "--usage", tmp_path / "add" / "KB_USAGE.json", "-o", target)
    assert result.code == 1 and len((result.out + result.err).strip().splitlines()) == 1
    assert "3 of 5 checks did not pass" in result.out and "Traceback" not in result.out + result.err
    nb = nbformat.read(target, as_version=4)
    assert not _outputs(nb, "error")
    verdicts = {v[1]: v for v in verdicts_of(nb)}
    assert verdicts["wrapper audit"][0] == "MISSING" and "names no wrapper" in verdicts["wrapper audit"][2]
    assert verdicts["claims"][0] == "MISSING" and "for operator 'add', not 'softmax'" in verdicts["claims"][2]
    assert verdicts["comparison bfloat16"][0] == "MISSING" and "no dut" in verdicts["comparison bfloat16"][2]
    assert verdicts["comparison float16"][0] == "PASS"
    assert "5 checks: 2 PASS, 0 FAIL, 3 MISSING" in nb.cells[-1].outputs[0]["text"]
    # unexecuted, the same inputs are reported before anything runs
    unexecuted = kbt("review", spec, "--format", "notebook", "--root", root, "--usage", tmp_path / "add" / "KB_USAGE.json",
                     "-o", tmp_path / "out" / "u.ipynb")
    assert unexecuted.code == 1 and "missing input" in unexecuted.out


def test_audit_findings_fail_the_review(tmp_path):
    root = tmp_path / "src"
    shutil.copytree(REPO / "examples" / "softmax", root, ignore=shutil.ignore_patterns("__pycache__"))
    wrapper = root / "ops" / "wrappers" / "softmax_wrapper.py"
    allocation = "    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n"
    text = wrapper.read_text()
    assert allocation in text
    wrapper.write_text(text.replace(allocation, "    x = x.contiguous()\n" + allocation))
    review = ReviewSession.open(REPO / "ops" / "softmax.yaml", root, root / "KB_USAGE.json", REPO)
    audit = review.audit()
    assert audit.status == "FAIL" and "WB102" in audit.summary and list(audit.table["code"]) == ["WB102"]
    claims = review.claims()
    assert claims.status == "FAIL" and "VF010" in set(claims.table["code"])
    row = review.page_table("constraints/wrapper-boundary.md").set_index("invariant").loc["no-host-layout-change"]
    assert row["claim"] == "implemented" and row["audit"].startswith("FAIL at line")
    # what failed is shown open: the audit's findings, and the page whose invariant it breaks
    assert audit.folded.opened and audit.folded._repr_html_().startswith('<details class="opkb-fold" open><summary>1 finding, each with its line</summary>')
    page = review.page("constraints/wrapper-boundary.md")
    assert page.opened and page.summary.endswith("; the audit breaks 1")
    assert not review.page("constraints/accumulator-precision.md").opened


def test_memory_specs_get_the_wave_plan_and_tiling(kbt, tmp_path):
    review = ReviewSession.open(REPO / "ops" / "bernoulli.yaml", REPO, None, REPO)
    check = review.memory()
    assert check.status == "PASS" and list(check.table["dtype"]) == list(review.spec.dtypes)
    assert (check.table["UB used (B)"] <= check.table["UB (B)"]).all() and (check.table["waves"] > 1).all()
    target = tmp_path / "b.ipynb"
    assert kbt("review", REPO / "ops" / "bernoulli.yaml", "--format", "notebook", "-o", target).code == 0  # every input there
    sources = [c.source for c in nbformat.read(target, as_version=4).cells]
    assert "review.memory().folded" in sources
    softmax = tmp_path / "s.ipynb"
    kbt("review", REPO / "ops" / "softmax.yaml", "--format", "notebook", "-o", softmax)
    assert "review.memory().folded" not in [c.source for c in nbformat.read(softmax, as_version=4).cells]


def test_usage_errors(kbt, tmp_path):
    wrong = kbt("review", REPO / "ops" / "softmax.yaml", "--format", "notebook", "-o", tmp_path / "r.txt")
    assert wrong.code == 2 and "RV003" in wrong.err
    markdown = kbt("review", REPO / "ops" / "softmax.yaml", "--execute")
    assert markdown.code == 2 and "RV002" in markdown.err
    blocked = tmp_path / "file"
    blocked.write_text("mine")
    assert kbt("review", REPO / "ops" / "softmax.yaml", "--format", "notebook", "-o", blocked / "r.ipynb").code == 2
    assert blocked.read_text() == "mine"
