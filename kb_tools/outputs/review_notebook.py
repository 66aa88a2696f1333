"""``kbt review --format notebook``: one operator's design review as a notebook that runs its checks.

Markdown cells hold what the selection knows when the notebook is written (each page, why it
applies, its trigger, the pages excluded, the checklist); code cells call
:mod:`kb_tools.outputs.review_checks`, so the facts tables, the claims, the wrapper audit, the saved
tensors' comparisons and the memory plan are computed each time the notebook runs, and shown
folded under one line each (:mod:`kb_tools.outputs.folds`). Paths in the
notebook are relative to its own folder, where a kernel starts, so a review can be moved with
the tree it reviews. The same inputs give the same bytes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kb_tools.outputs.review import NO_IMPLEMENTATION, checklist, markdown_text, page_intro
from kb_tools.outputs.review_checks import VERDICT_LINE, has_memory_checks


@dataclass
class ReviewPlan:
    """What one review notebook is about; paths as the caller gave them."""

    kb: object
    spec: object
    selection: object
    spec_path: Path
    root: Path
    usage_path: Path | None
    kb_root: Path
    link_base: str  # prefix that turns a KB-relative page path into a link from the notebook


def _rel(path: Path, where: Path) -> str:
    return Path(os.path.relpath(Path(path).resolve(), where.resolve())).as_posix()


def _page_markdown(plan: ReviewPlan, verdict) -> str:
    return "\n".join(page_intro(verdict, f"{plan.link_base}{verdict.page.rel_path}")).rstrip()


def _checklist(plan: ReviewPlan) -> str:
    items = checklist(plan.spec, plan.selection, "every check above prints PASS (the wrapper audit, the claims, each comparison)")
    return "## Reviewer checklist\n\n" + "\n".join(items)


def _repeated(cell):
    """A cell repeated per page or per dtype, one call that the cells above explain: the site
    (MyST-NB's ``remove-input`` tag) shows its verdict and fold without its code, as the Markdown
    review reads; JupyterLab shows the code as ever."""
    cell.metadata["tags"] = ["remove-input"]
    return cell


def build_notebook(plan: ReviewPlan, where: Path):
    """The review as an nbformat notebook whose paths are relative to the folder ``where``."""
    import nbformat

    spec, sel = plan.spec, plan.selection
    md, code = nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    usage = repr(_rel(plan.usage_path, where)) if plan.usage_path else "None"
    n_invariants = sum(len(v.page.invariants) for v in sel.references)
    cells = [
        md(f"# Design review: {spec.op}{'' if spec.wrapper or getattr(spec, 'golden', '') else ' (' + NO_IMPLEMENTATION + ')'}\n\n{markdown_text(spec.description)}\n\n"
           f"{len(sel.constraints)} required constraints, {len(sel.patterns)} patterns and {n_invariants} invariants apply. "
           "The code cells run the checks live through `kb_tools`; each prints one verdict line "
           "(`[PASS]`, `[FAIL]`, or `[MISSING]` when an input it needs is absent); its evidence, and each page's "
           "invariants, are folded under one line (open when something in them failed). Re-run it with "
           f"`kbt review {plan.spec_path.as_posix()} --format notebook --execute -o FILE.ipynb`, or open it in JupyterLab."),
        code("import pandas as pd\n\nfrom kb_tools.outputs.review_checks import ReviewSession\n\n"
             'pd.set_option("display.max_colwidth", None)\n'
             f"review = ReviewSession.open(spec={_rel(plan.spec_path, where)!r}, root={_rel(plan.root, where)!r},\n"
             f"                            usage={usage}, kb_root={_rel(plan.kb_root, where)!r}{_given(spec)})\n"
             "review.operator_table()"),
        md("## The operator's facts\n\nPer dtype: the declared criterion and the numbers it applies, the DUT's accumulate "
           "type, and what the golden and the third-party leg compute in (seed 000 §3, §5)."),
        code("review.tolerance_table()"),
        md("Every routing fact that holds, with its evidence; `derived` facts come from the dtypes and criteria."),
        code("review.properties_table()"),
        md("## Live checks\n\n### Wrapper audit\n\n`kbt audit` of the spec's `wrapper:` file: every operation outside "
           "the wrapper boundary, with its line (seed 003)."),
        code("review.audit().folded"),
        md("### Claims\n\n`kbt verify` of the KB_USAGE.json: each claim against the contract, the selection beside it "
           "and the wrapper audit (no claim can waive a static invariant the audit finds broken)."),
        code("review.claims().folded"),
        md("### Saved tensors\n\nFor each dtype, the legs saved under the spec's `tensors:` folder judged by the "
           "declared criterion, with every metric and the distribution of relative errors against the golden."),
    ]
    cells += [_repeated(code(f"review.compare({dtype!r}).folded")) for dtype in spec.dtypes]
    if has_memory_checks(spec):
        cells += [md("### Memory plan\n\nThe high-to-low wave plan of the in-place mask expansion and the tiling and "
                     "UB budget of its kernel, per dtype (seed 001 §3.3, §3.4)."),
                  code("review.memory().folded")]
    cells.append(md("## Required constraints\n\nEach page that applies, why, and its invariants with the coder's claim "
                    "and, for static invariants, what the audit found."))
    for verdict in sel.constraints:
        cells += [md(_page_markdown(plan, verdict)), _repeated(code(f"review.page({verdict.page.rel_path!r})"))]
    cells.append(md("## Optional patterns" + ("" if sel.patterns else
                    "\n\nNo pattern applies (`no_matching_pattern`); the constraints above still do.")))
    for verdict in sel.patterns:
        cells += [md(_page_markdown(plan, verdict)), _repeated(code(f"review.page({verdict.page.rel_path!r})"))]
    if sel.playbooks:
        cells.append(md("## Playbooks to read\n\n" + "\n".join(
            f"- [{v.page.title}]({plan.link_base}{v.page.rel_path}) — {v.reason}" for v in sel.playbooks)))
    cells += [md("## Pages that do not apply\n\nEach with the predicate that failed."), code("review.excluded()"),
              md(_checklist(plan)), code("print(review.summary())")]
    for i, cell in enumerate(cells):
        cell.id = f"review-{i:03d}"  # stable ids: the same inputs give the same bytes
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    nb.metadata["opkb"] = {"op": spec.op, "link_base": plan.link_base}
    return nb


def relink(nb, link_base: str):
    """Point the review's page links at ``link_base`` (the site moves a review next to its pages)."""
    old = nb.metadata.get("opkb", {}).get("link_base")
    if old and old != link_base:
        for cell in nb.cells:
            if cell.cell_type == "markdown":
                cell.source = cell.source.replace(f"]({old}", f"]({link_base}")
    nb.metadata.setdefault("opkb", {})["link_base"] = link_base
    return nb


def write_notebook(nb, output: Path) -> None:
    """``.py`` as a jupytext percent script, anything else as ``.ipynb``; written whole or not at all."""
    import jupytext
    import nbformat

    from kb_tools.files.jsonio import write_atomic

    output = Path(output)
    text = jupytext.writes(nb, fmt="py:percent") if output.suffix == ".py" else nbformat.writes(nb) + "\n"
    write_atomic(output, text)


@dataclass
class ReviewRun:
    executed: Path
    error: str | None  # "cell N: ..." when a cell raised
    verdicts: list[tuple[str, str, str]]  # (status, check, why) in the order the cells printed them


def verdicts_of(nb) -> list[tuple[str, str, str]]:
    found = []
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                found += VERDICT_LINE.findall(output.get("text", ""))
    return found


def execute_review(output: Path) -> ReviewRun:
    """Run the written review with the notebooks' runner; the executed ``.ipynb`` lands beside it."""
    import nbformat

    from kb_tools.outputs.notebook_runner import execute

    result = execute(Path(output), Path(output).parent, html=False)
    return ReviewRun(result.ipynb, result.error, verdicts_of(nbformat.read(result.ipynb, as_version=4)))


def _given(spec) -> str:
    """``, topology=..., target=...`` where --topology / --target set a CANN folder's facts, so
    the notebook reads the folder as the command did."""
    given = {fact: value for fact, value, _, note in getattr(spec, "inferred", ())
             if note not in spec.description}  # a replaced note: the flag's value is the spec's
    shown = {"topology": spec.topologies[0] if spec.topologies else None, "target": spec.target}
    return "".join(f", {fact}={shown[fact]!r}" for fact in given)
