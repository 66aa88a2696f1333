"""The browsable site: the KB pages with their facts, ROUTER.md, the executed notebooks and
one review per catalog operator, rendered offline by Sphinx with MyST-NB.

The source tree is generated in a private working folder with the repository's own layout
(``kb/constraints/…``, ``notebooks/…``), so the relative links written in the pages and in
ROUTER.md resolve unchanged; only links to notebook sources (``.py``) are pointed at the
executed notebooks (``.ipynb``).
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

from kb_tools.contract.selection import select
from kb_tools.contract.specs import OpSpec, load_spec, spec_files
from kb_tools.kb.glossary import glossary_markdown, load_glossary
from kb_tools.kb.pages import KnowledgeBase, Page
from kb_tools.kb.sources import load_sources
from kb_tools.outputs.page_facts import applies_by_page, fact_table, invariant_table
from kb_tools.outputs.review import render_review, review_inputs

# furo: a well-kept theme (sphinx-doc's own recommendation list, pip's and attrs' docs) that is
# light (no Bootstrap, no icon font: the site builds within make run's budget), has a search box
# on every page, a sidebar that folds and dark mode; opkb.css lets its content column take the
# window. The search indexes kb_tools.search.tokens (site_search.py).
CONF = '''\
project = "opkb"
author = "opkb"
extensions = ["myst_nb", "kb_tools.outputs.site_search", "kb_tools.outputs.site_safety"]
nb_execution_mode = "off"
nb_render_markdown_format = "myst"  # a notebook's Markdown output (rules_shown): tables, page links resolved
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
html_theme = "furo"
html_title = "opkb"
html_static_path = ["_static"]
html_css_files = ["opkb.css"]
html_show_copyright = False
html_show_sphinx = False
html_search_language = "opkb"
exclude_patterns = ["_build"]
suppress_warnings = ["myst.header", "misc.highlighting_failure"]
'''
STATIC = Path(__file__).resolve().parent / "site_static"

_NOTEBOOK_LINK = re.compile(r"\]\(((?:\.\./)*notebooks/[a-z0-9_]+)\.py\)")


def _fact_box(page: Page, applies_to: list[str], seeds: dict, rel_of: dict[str, str]) -> str:
    facts = fact_table(page, applies_to, seeds, rel_of, "../../", "../../")
    return f":::{{admonition}} Facts\n:class: note\n\n{facts}:::\n\n{invariant_table(page)}"


def _page_markdown(page: Page, applies_to: list[str], seeds: dict, rel_of: dict[str, str]) -> str:
    body = _NOTEBOOK_LINK.sub(r"](\1.ipynb)", page.body)
    lines = body.lstrip("\n").splitlines()
    if lines and lines[0].startswith("# "):
        head, rest = lines[0], "\n".join(lines[1:])
    else:
        head, rest = f"# {page.title}", "\n".join(lines)
    return f"{head}\n\n{_fact_box(page, applies_to, seeds, rel_of)}\n{rest}\n"


def _notebook(source: Path, executed_dir: Path | None, dest: Path) -> None:
    executed = executed_dir / f"{source.stem}.ipynb" if executed_dir else None
    if executed and executed.is_file():
        shutil.copy(executed, dest)
        return
    import jupytext
    import nbformat

    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}  # the code cells' highlighting
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(
        "*This notebook has not been executed for this site: run `kbt notebooks` and rebuild to see its outputs.*"))
    nbformat.write(nb, dest)


# Reading order for a newcomer: the host boundary first (the most common mistake), then what
# the golden and the metrics compare, integer narrowing, then memory and randomness.
# Notebooks not named here follow in name order.
READING_ORDER = ("wrapper_boundary", "promote", "precision_metrics", "narrowing", "wave_expansion", "random_statistics")
_GROUPS = (("constraint", "constraints", "Constraints", "rules every operator they route to must follow"),
           ("pattern", "patterns", "Patterns", "designs that apply when their preconditions hold"),
           ("playbook", "playbooks", "Playbooks", "procedures for a task: what to do, in which order"))


def _toctree(entries: list[str], caption: str | None = None, depth: int = 1) -> str:
    """A hidden toctree: it shapes the sidebar (the root's reach two levels, so the group
    of the page being read opens there) while each page's body lists its entries itself."""
    options = [f":maxdepth: {depth}"] + ([f":caption: {caption}"] if caption else []) + [":hidden:"]
    return "```{toctree}\n" + "\n".join(options) + "\n\n" + "\n".join(entries) + "\n```\n"


def _cell_text(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "/")


def reading_order(names: list[str]) -> list[str]:
    first = [n for n in READING_ORDER if n in names]
    return first + sorted(n for n in names if n not in READING_ORDER)


def _group_page(kb: KnowledgeBase, kind: str, heading: str, what: str) -> str:
    """One page per kind: a table of its rules (title, area, trigger) and the sidebar's short entries."""
    pages = sorted((p for p in kb.pages.values() if p.kind == kind), key=lambda p: (p.area, p.id))
    rows = [f"| [{_cell_text(p.title)}](kb/{p.rel_path}) | {p.area} | {_cell_text(p.trigger)} |" for p in pages]
    return (f"# {heading}\n\n{len(pages)} {heading.lower()}: {what}.\n\n| page | area | applies when |\n|---|---|---|\n"
            + "\n".join(rows) + "\n\n" + _toctree([f"{p.id} <kb/{p.rel_path[:-3]}>" for p in pages]))


def _notebooks_page(titles: dict[str, str]) -> str:
    rows = [f"{i}. [{_cell_text(title)}](notebooks/{name}.ipynb) — `notebooks/{name}.py`"
            for i, (name, title) in enumerate(titles.items(), 1)]
    return ("# Notebooks\n\nEach proves a family of rules with numbers, on the CPU and on any accelerator present; "
            "read them in this order. `make lab` opens them in JupyterLab.\n\n" + "\n".join(rows) + "\n\n"
            + _toctree([f"{name} <notebooks/{name}>" for name in titles]))


def _operators_page(specs: list[OpSpec]) -> str:
    rows = [f"| [{s.op}](operators/{s.op}.md) | {', '.join(s.topologies)} | {', '.join(s.dtypes)} | {_cell_text(s.description) or '—'} |"
            for s in specs]
    return ("# Operators\n\nThe catalog in `ops/`: for each operator, the design review of the pages that apply to it "
            "and why (`kbt review ops/<op>.yaml`).\n\n| operator | topologies | dtypes | what it does |\n|---|---|---|---|\n"
            + "\n".join(rows) + "\n\n" + _toctree([f"{s.op} <operators/{s.op}>" for s in specs]))


def _notebook_title(source: Path) -> str:
    """The notebook's first heading (``# # Title`` in the percent format), else its name."""
    for line in source.read_text(encoding="utf-8").splitlines():
        if line.startswith("# # "):
            return line[4:].strip()
    return source.stem


def _executed_review(executed_dir: Path | None, op: str, src: Path) -> str:
    """The executed review notebook ``make run`` wrote for ``op``, copied beside its Markdown
    review with its page links re-pointed; the Markdown gains a link to it (nothing if none)."""
    executed = executed_dir / "reviews" / f"{op}.ipynb" if executed_dir else None
    if not (executed and executed.is_file()):
        return ""
    import nbformat

    from kb_tools.outputs.review_notebook import relink

    nb = relink(nbformat.read(executed, as_version=4), "../kb/")
    # its own title, so that the site's search does not list two pages as "Design review: <op>"
    head = nb.cells[0] if nb.cells and nb.cells[0].cell_type == "markdown" else None
    if head is not None and head.source.startswith("# Design review: "):
        first, _, rest = head.source.partition("\n")
        head.source = f"{first}, executed\n{rest}"
    nbformat.write(nb, src / "operators" / f"{op}-review.ipynb")
    return (f"\n## The review, executed\n\n[The review notebook]({op}-review.ipynb) ran these checks live "
            f"(`kbt review ops/{op}.yaml --format notebook --execute`).\n\n```{{toctree}}\n:hidden:\n\n{op}-review\n```\n")


def _index(kb: KnowledgeBase, specs: list[OpSpec], titles: dict[str, str]) -> str:
    """The first screen: the three jobs, the notebooks in reading order, the operators."""
    counts = {kind: sum(p.kind == kind for p in kb.pages.values()) for kind, *_ in _GROUPS}
    notebooks = "\n".join(f"{i}. [{_cell_text(title)}](notebooks/{name}.ipynb)" for i, (name, title) in enumerate(titles.items(), 1))
    operators = ", ".join(f"[{s.op}](operators/{s.op}.md)" for s in specs)
    return ("# opkb — the operator knowledge base\n\n"
            "The rules operator developers keep breaking, each a page with its routing, invariants and the notebook "
            "that proves it. Start with the job you came for:\n\n"
            "| you want to | start here | then run |\n|---|---|---|\n"
            "| learn the rules (onboarding) | the notebooks below, in order, with the rule pages they link | `make lab` |\n"
            "| review one operator's design | its page under [operators](operators.md) | `kbt review ops/<op>.yaml` |\n"
            "| fill a KB_USAGE skeleton | [the contract](CONTRACT.md) | `kbt usage ops/<op>.yaml`, then `kbt check-usage` |\n"
            "| bring your own operator | [the guide](bring-your-own-operator.md) | `kbt usage` in its folder |\n\n"
            f"**The notebooks, in reading order:**\n\n{notebooks}\n\n"
            f"**Operators:** {operators}\n\n"
            f"**Rules:** [{counts['constraint']} constraints](constraints.md), [{counts['pattern']} patterns](patterns.md), "
            f"[{counts['playbook']} playbooks](playbooks.md); [the router](router.md) maps a task to the pages to read; [the glossary](glossary.md) "
            "gives the terms in English and Chinese; [ask the KB](ask.md) in your own words, any language.\n\n"
            + _toctree(["router", "ask", "CONTRACT", "bring-your-own-operator",
                        "bring your own CANN operator <kb/playbooks/bring-your-own-cann-operator>", "glossary"], "Start here")
            + _toctree([group for _, group, *_ in _GROUPS], "Rules", depth=2)
            + _toctree(["notebooks", "operators", "triton-ascend findings <docs/triton-ascend-findings>"],
                       "Proofs and operators", depth=2))


def write_sources(root: Path, kb: KnowledgeBase, src: Path, executed_dir: Path | None, ops_dir: Path) -> None:
    """Lay out the Sphinx source tree for the KB at ``root`` in ``src``."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    (src / "conf.py").write_text(CONF)
    shutil.copytree(STATIC, src / "_static")
    seeds = load_sources(kb.kb_dir)
    specs = [load_spec(p) for p in spec_files(ops_dir)]
    selections = {spec.op: select(kb, spec) for spec in specs}
    applies = applies_by_page(kb, selections)
    rel_of = {pid: page.rel_path for pid, page in kb.pages.items()}
    for page in kb.pages.values():
        target = src / "kb" / page.rel_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_page_markdown(page, applies[page.id], seeds, rel_of))
    router = (root / "ROUTER.md").read_text()
    (src / "router.md").write_text(router)
    (src / "CONTRACT.md").write_text((root / "CONTRACT.md").read_text())
    (src / "bring-your-own-operator.md").write_text((root / "docs" / "bring-your-own-operator.md").read_text())
    (src / "docs").mkdir()  # where the pages' ../../docs/ links land
    (src / "docs" / "triton-ascend-findings.md").write_text((root / "docs" / "triton-ascend-findings.md").read_text())
    (src / "glossary.md").write_text(glossary_markdown(load_glossary(root), rel_of))
    from kb_tools.search.askpage import write_ask_page

    write_ask_page(root, src)  # ask.md and the scripts that answer it in the page
    (src / "notebooks").mkdir()
    from kb_tools.outputs.notebook_runner import notebook_sources

    sources = {source.stem: source for source in notebook_sources(root)}
    titles = {}
    for name in reading_order(list(sources)):
        _notebook(sources[name], executed_dir, src / "notebooks" / f"{name}.ipynb")
        titles[name] = _notebook_title(sources[name])
    (src / "operators").mkdir()
    for spec in specs:
        # the worked example (examples/<op>/) is the operator's delivery where there is one: its claims show
        example = root / "examples" / spec.op
        delivery, usage = (example, example / "KB_USAGE.json") if example.is_dir() else (root, None)
        inputs = review_inputs(kb, spec, selections[spec.op], usage, delivery, link_base="../kb/")
        (src / "operators" / f"{spec.op}.md").write_text(render_review(inputs, fold=True) + _executed_review(executed_dir, spec.op, src))
    for kind, group, heading, what in _GROUPS:
        (src / f"{group}.md").write_text(_group_page(kb, kind, heading, what))
    (src / "notebooks.md").write_text(_notebooks_page(titles))
    (src / "operators.md").write_text(_operators_page(specs))
    (src / "index.md").write_text(_index(kb, specs, titles))


def build_site(root: Path, kb: KnowledgeBase, out: Path, executed_dir: Path | None, ops_dir: Path) -> int:
    """Run Sphinx in a private working folder and copy the HTML into ``out``; returns
    Sphinx's exit status. Nothing but ``out`` is written: the Sphinx sources, its doctrees
    and MyST-NB's ``jupyter_execute/`` (made beside the HTML folder) stay in the working
    folder, which is removed."""
    from sphinx.cmd.build import build_main

    with tempfile.TemporaryDirectory(prefix="kbt-site-") as work:
        work = Path(work)
        write_sources(Path(root), kb, work / "src", executed_dir, ops_dir)
        status = build_main(["-b", "html", "-q", "-j", "1", "-d", str(work / "doctrees"),
                             str(work / "src"), str(work / "html")])
        if status == 0:
            shutil.copytree(work / "html", out, dirs_exist_ok=True)
    return status
