"""The browsable site: the KB pages with their facts, ROUTER.md, the executed notebooks and
one review per catalog operator, rendered offline by Sphinx with MyST-NB.

The source tree is generated under ``<out>-src`` with the repository's own layout
(``kb/constraints/…``, ``notebooks/…``), so the relative links written in the pages and in
ROUTER.md resolve unchanged; only links to notebook sources (``.py``) are pointed at the
executed notebooks (``.ipynb``).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from kb_tools.glossary import glossary_markdown, load_glossary
from kb_tools.pages import KnowledgeBase, Page
from kb_tools.review import render_review, review_inputs
from kb_tools.selection import select
from kb_tools.sources import load_sources
from kb_tools.specs import OpSpec, load_spec, spec_files

CONF = '''\
project = "opkb"
author = "opkb"
extensions = ["myst_nb"]
nb_execution_mode = "off"
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3
html_theme = "alabaster"
html_theme_options = {"page_width": "1180px", "sidebar_width": "260px"}
html_title = "opkb — the operator knowledge base"
exclude_patterns = ["_build"]
suppress_warnings = ["myst.header", "misc.highlighting_failure"]
'''

_NOTEBOOK_LINK = re.compile(r"\]\(((?:\.\./)*notebooks/[a-z0-9_]+)\.py\)")


def _fact_box(page: Page, applies_to: list[str], seeds: dict, rel_of: dict[str, str]) -> str:
    up = "../../"
    r = page.routing
    if r.mandatory_for:
        routing = f"mandatory for {', '.join(r.mandatory_for)}"
    else:
        topo = "every topology" if r.topologies == "all" else ", ".join(r.topologies) or "router tasks only"
        triggers = list(r.properties) + ([f"target {r.target_gate}"] if r.target_gate else [])
        routing = topo + (f"; when any of: {', '.join(triggers)}" if triggers else "")
    ops = ", ".join(f"[{op}]({up}operators/{op}.md)" for op in applies_to) or "no catalog operator (reached from ROUTER.md tasks)"
    notebooks = ", ".join(f"[{Path(nb).stem}]({up}{Path(nb).with_suffix('.ipynb').as_posix()})" for nb in page.demonstrated_by) or "—"
    by_seed: dict[str, list[str]] = {}
    for src in page.sources:
        by_seed.setdefault(src["seed"], []).append(src["section"])
    sources = "; ".join(f"{seeds[name].title if name in seeds else name}: {', '.join(keys)}" for name, keys in by_seed.items())
    related = ", ".join(f"[{rid}]({up}kb/{rel_of[rid]})" for rid in page.related if rid in rel_of) or "—"
    rows = [("kind", f"{page.kind}, area {page.area}"), ("routing", routing), ("applies to", ops),
            ("trigger", page.trigger), ("demonstrated by", notebooks), ("sources", sources), ("related", related)]
    table = "\n".join(f"| {k} | {v.replace('|', '/')} |" for k, v in rows)
    invariants = "\n".join(f"| `{i.id}` | {i.check}{f' ({i.rule})' if i.rule else ''} | {i.text.replace('|', '/')} |" for i in page.invariants)
    return (f":::{{admonition}} Facts\n:class: note\n\n| fact | value |\n|---|---|\n{table}\n:::\n\n"
            f"| invariant | check | text |\n|---|---|---|\n{invariants}\n")


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
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(
        "*This notebook has not been executed for this site: run `kbt notebooks` and rebuild to see its outputs.*"))
    nbformat.write(nb, dest)


def _index(kb: KnowledgeBase, specs: list[OpSpec], notebooks: list[str]) -> str:
    def toc(caption, entries):
        return "```{toctree}\n:maxdepth: 1\n:caption: " + caption + "\n\n" + "\n".join(entries) + "\n```\n"

    kinds = {"constraint": [], "pattern": [], "playbook": []}
    for page in kb.pages.values():
        kinds[page.kind].append(f"kb/{page.rel_path[:-3]}")
    return ("# opkb — the operator knowledge base\n\n"
            "The rules operator developers keep breaking, each as a page with its routing, its invariants and the "
            "notebook that proves it; the router from what you set out to do to the pages to read; and, for every "
            "operator of the catalog, the design-review walkthrough of the pages that apply to it.\n\n"
            "Start from [the router](router.md), from a rule below, or from an operator.\n\n"
            + toc("Start here", ["router", "CONTRACT", "glossary"])
            + toc("Constraints", kinds["constraint"]) + toc("Patterns", kinds["pattern"])
            + toc("Playbooks", kinds["playbook"])
            + toc("Notebooks", [f"notebooks/{n}" for n in notebooks])
            + toc("Operators", [f"operators/{s.op}" for s in specs]))


def write_sources(root: Path, kb: KnowledgeBase, src: Path, executed_dir: Path | None, ops_dir: Path) -> None:
    """Lay out the Sphinx source tree for the KB at ``root`` in ``src``."""
    if src.exists():
        shutil.rmtree(src)
    src.mkdir(parents=True)
    (src / "conf.py").write_text(CONF)
    seeds = load_sources(kb.kb_dir)
    specs = [load_spec(p) for p in spec_files(ops_dir)]
    applies: dict[str, list[str]] = {pid: [] for pid in kb.pages}
    selections = {}
    for spec in specs:
        selections[spec.op] = select(kb, spec)
        for verdict in selections[spec.op].references + selections[spec.op].playbooks:
            applies[verdict.page.id].append(spec.op)
    rel_of = {pid: page.rel_path for pid, page in kb.pages.items()}
    for page in kb.pages.values():
        target = src / "kb" / page.rel_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(_page_markdown(page, applies[page.id], seeds, rel_of))
    router = (root / "ROUTER.md").read_text()
    (src / "router.md").write_text(router)
    (src / "CONTRACT.md").write_text((root / "CONTRACT.md").read_text())
    (src / "glossary.md").write_text(glossary_markdown(load_glossary(root), rel_of))
    (src / "notebooks").mkdir()
    from kb_tools.notebook_runner import notebook_sources

    names = []
    for source in notebook_sources(root):
        _notebook(source, executed_dir, src / "notebooks" / f"{source.stem}.ipynb")
        names.append(source.stem)
    (src / "operators").mkdir()
    for spec in specs:
        inputs = review_inputs(kb, spec, selections[spec.op], None, root, link_base="../kb/")
        (src / "operators" / f"{spec.op}.md").write_text(render_review(inputs))
    (src / "index.md").write_text(_index(kb, specs, names))


def build_site(root: Path, kb: KnowledgeBase, out: Path, executed_dir: Path | None, ops_dir: Path) -> int:
    """Write the sources beside ``out`` and run Sphinx; returns Sphinx's exit status."""
    from sphinx.cmd.build import build_main

    src = Path(str(out).rstrip("/") + "-src")
    write_sources(Path(root), kb, src, executed_dir, ops_dir)
    return build_main(["-b", "html", "-q", "-j", "1", str(src), str(out)])
