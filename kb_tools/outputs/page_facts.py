"""A KB page's fact box (kind, routing, the operators it applies to, trigger, the notebooks that
prove it, sources, related pages) and its invariants, as Markdown tables.

They live in the page's front matter, which JupyterLab hides when it opens a ``kb/*.md``: a
page opened from a notebook shows its body only. So the site puts them above the body
(site.py), and a notebook shows them for the pages it proves with one call, ``rules_shown``,
whose links work both in JupyterLab (beside ``notebooks/``) and on the site, which keeps the
repository's layout.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from kb_tools.contract.selection import Selection, select
from kb_tools.contract.specs import load_spec, spec_files
from kb_tools.kb.pages import KnowledgeBase, Page, load_kb
from kb_tools.kb.root import find_root
from kb_tools.kb.sources import load_sources


def applies_by_page(kb: KnowledgeBase, selections: dict[str, Selection]) -> dict[str, list[str]]:
    """page id -> the catalog operators whose selection takes the page (a reference or a playbook)."""
    applies: dict[str, list[str]] = {pid: [] for pid in kb.pages}
    for op, selection in selections.items():
        for verdict in selection.references + selection.playbooks:
            applies[verdict.page.id].append(op)
    return applies


def _routing(page: Page) -> str:
    r = page.routing
    if r.mandatory_for:
        return f"mandatory for {', '.join(r.mandatory_for)}"
    topo = "every topology" if r.topologies == "all" else ", ".join(r.topologies) or "router tasks only"
    triggers = list(r.properties) + ([f"target {r.target_gate}"] if r.target_gate else [])
    return topo + (f"; when any of: {', '.join(triggers)}" if triggers else "")


def fact_table(page: Page, applies_to: list[str], seeds: dict, rel_of: dict[str, str], kb_up: str, site_up: str | None) -> str:
    """The fact box as a two-column table. Related pages link to ``{kb_up}kb/...``; operators and
    notebooks link to their site pages under ``site_up``, or are named only when it is None."""
    if site_up is None:
        ops = ", ".join(f"`{op}`" for op in applies_to)
        notebooks = ", ".join(f"`{nb}`" for nb in page.demonstrated_by)
    else:
        ops = ", ".join(f"[{op}]({site_up}operators/{op}.md)" for op in applies_to)
        notebooks = ", ".join(f"[{Path(nb).stem}]({site_up}{Path(nb).with_suffix('.ipynb').as_posix()})" for nb in page.demonstrated_by)
    by_seed: dict[str, list[str]] = {}
    for src in page.sources:
        by_seed.setdefault(src["seed"], []).append(src["section"])
    sources = "; ".join(f"{seeds[name].title if name in seeds else name}: {', '.join(keys)}" for name, keys in by_seed.items())
    related = ", ".join(f"[{rid}]({kb_up}kb/{rel_of[rid]})" for rid in page.related if rid in rel_of) or "—"
    rows = [("kind", f"{page.kind}, area {page.area}"), ("routing", _routing(page)),
            ("applies to", ops or "no catalog operator (reached from ROUTER.md tasks)"),
            ("trigger", page.trigger), ("demonstrated by", notebooks or "—"), ("sources", sources), ("related", related)]
    return "| fact | value |\n|---|---|\n" + "\n".join(f"| {k} | {v.replace('|', '/')} |" for k, v in rows) + "\n"


def invariant_table(page: Page) -> str:
    rows = "\n".join(f"| `{i.id}` | {i.check}{f' ({i.rule})' if i.rule else ''} | {i.text.replace('|', '/')} |" for i in page.invariants)
    return f"| invariant | check | text |\n|---|---|---|\n{rows}\n"


class RulesShown:
    """What a notebook displays (Jupyter calls ``_repr_markdown_``): per page, its title linked
    to the page, then its fact box and invariants, folded to one line until opened."""

    def __init__(self, sections: list[str]):
        self.markdown = "\n".join(sections)

    def _repr_markdown_(self) -> str:
        return self.markdown

    def __repr__(self) -> str:  # a console, or a front end that shows plain text only
        return self.markdown


def rules_shown(notebook: str, root: Path | None = None) -> RulesShown:
    """The fact box and invariants of every KB page whose ``demonstrated_by`` names
    ``notebooks/<notebook>.py``, for the notebook's first cell; a name no page gives is a ValueError."""
    root = find_root(root)
    kb = load_kb(root)
    proved = [p for p in kb.pages.values() if any(Path(nb).stem == notebook for nb in p.demonstrated_by)]
    if not proved:
        raise ValueError(f"no KB page names notebooks/{notebook}.py in its demonstrated_by")
    seeds = load_sources(kb.kb_dir)
    applies = applies_by_page(kb, {spec.op: select(kb, spec) for spec in map(load_spec, spec_files(root / "ops"))})
    rel_of = {pid: page.rel_path for pid, page in kb.pages.items()}
    sections = [f"<details>\n<summary><b>{escape(p.title)}</b> ({p.kind} <code>{p.id}</code>): its facts and "
                f"{len(p.invariants)} invariants</summary>\n\n[kb/{p.rel_path}](../kb/{p.rel_path})\n\n"
                f"{fact_table(p, applies[p.id], seeds, rel_of, '../', None)}\n{invariant_table(p)}\n</details>\n"
                for p in proved]
    return RulesShown(sections)
