"""``kbt review``: one Markdown document that walks a reviewer through one operator.

It puts together what the other tools know — the spec's facts, the selection and why each
page applies, each invariant with the coder's claim from KB_USAGE.json, the audit of the
delivered wrapper, the notebooks that prove the rules, the pages excluded and why — and ends
with a checklist to tick. The same inputs give the same bytes.
"""

from __future__ import annotations

import html
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kb_tools.contract.selection import Selection, Verdict
from kb_tools.contract.specs import OpSpec
from kb_tools.files.text import is_file
from kb_tools.kb import vocabulary as V
from kb_tools.kb.pages import KnowledgeBase


@dataclass
class ReviewInputs:
    kb: KnowledgeBase
    spec: OpSpec
    selection: Selection
    usage: dict | None  # KB_USAGE.json, when the coder has one
    audit: object | None  # kb_tools.audit AuditResult of the spec's wrapper
    audit_note: str  # why there is no audit, or which file was audited
    link_base: str = ""  # prefix that turns a KB-relative page path into a link target
    link_ext: str = ".md"  # the linked page's extension: the Markdown source, or the site's .html


# Where `make run` and `kbt site` put the site, under the repository.
SITE_DIR = Path("build") / "site"
# What a review of a spec that names no wrapper says first: there is nothing to review yet.
NO_IMPLEMENTATION = "no implementation exists yet"


def page_links(kb_dir: Path, reader_dir: Path, html: bool) -> tuple[str, str]:
    """(link_base, link_ext) for links read from ``reader_dir``: an HTML review links the
    site's rendered pages when the site is built, anything else the pages' Markdown."""
    import os

    site_kb = Path(kb_dir).resolve().parent / SITE_DIR / "kb"
    if html and (site_kb.parent / "index.html").is_file():
        return Path(os.path.relpath(site_kb, reader_dir)).as_posix() + "/", ".html"
    return Path(os.path.relpath(Path(kb_dir).resolve(), reader_dir)).as_posix() + "/", ".md"


def _link(inputs: ReviewInputs, page) -> str:
    return f"{inputs.link_base}{page.rel_path.removesuffix('.md')}{inputs.link_ext}"


def markdown_text(text) -> str:
    """Text from a spec, a usage file or a page as Markdown that shows it as written: its
    markup (``<img onerror=...>``) escaped, so no renderer runs or hides any of it."""
    return html.escape(str(text), quote=False)


def _cell(text) -> str:
    """``markdown_text`` for one table cell: a ``|`` or a newline would end the cell early."""
    return markdown_text(text).replace("|", "\\|").replace("\n", " ") if text not in (None, "") else "—"


def claims_of(usage: dict | None) -> dict[tuple[str, str], dict]:
    """The coder's KB_USAGE records keyed by (page, invariant id); anything not a record is skipped."""
    claims = {}
    for record in (usage or {}).get("invariants", []) if isinstance(usage, dict) else []:
        if isinstance(record, dict) and record.get("invariant_id"):
            claims[(record.get("reference"), record["invariant_id"])] = record
    return claims


def implementation(record: dict | None) -> dict:
    impl = (record or {}).get("implementation")
    return impl if isinstance(impl, dict) else {}


def lines_by_code(findings) -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for f in findings:
        found.setdefault(f.code, []).append(f.line)
    return found


@dataclass(frozen=True)
class InvariantClaim:
    """One invariant of a selected page beside the coder's claim and, for a static one, the audit."""

    invariant: object  # kb_tools.kb.pages Invariant
    status: str  # the claimed status, "open" when there is no claim
    file: str | None  # where the coder says it is implemented (with symbol), or None
    symbol: str | None
    justification: str | None
    audit_lines: list[int] | None  # lines where the audit broke a static invariant; None: not audited or not static


def invariant_claims(page, claims: dict, findings_lines: dict[str, list[int]] | None) -> list[InvariantClaim]:
    """Each invariant of ``page`` with its claim; ``findings_lines`` is None when nothing was audited.
    The Markdown review and the review notebook both read their invariant tables from here."""
    rows = []
    for inv in page.invariants:
        record = claims.get((page.rel_path, inv.id))
        impl = implementation(record)
        located = bool(impl.get("file") and impl.get("symbol"))
        audited = inv.check == "static" and findings_lines is not None
        rows.append(InvariantClaim(inv, impl.get("status") or "open", impl["file"] if located else None,
                                   impl["symbol"] if located else None, (record or {}).get("justification"),
                                   findings_lines.get(inv.rule, []) if audited else None))
    return rows


def _facts(spec: OpSpec) -> list[str]:
    # "." is a flat operator, one class; only a named class is worth a word
    shown_class = f" (class `{spec.class_id}`)" if spec.class_id != "." else ""
    out = ["| fact | value |", "|---|---|", f"| operator | `{spec.op}`{shown_class} |"]
    if spec.description:
        out.append(f"| what it does | {_cell(spec.description)} |")
    out.append(f"| topologies | {', '.join(spec.topologies) or '—'} |")
    out.append(f"| target | {spec.target or '—'} |")
    flags = [k for k in V.PROPERTY_KEYS if k not in V.LIST_PROPERTY_KEYS and spec.properties.get(k)]
    out.append(f"| properties | {', '.join(flags) or '—'} |")
    if spec.properties.get("ranks"):
        out.append(f"| ranks | {', '.join(map(str, spec.properties['ranks']))} |")
    derived = [f"{k} ({why})" for k, why in spec.facts().items() if k in V.DERIVED_FACTS]
    out.append(f"| derived facts | {_cell('; '.join(derived))} |")
    out.append(f"| wrapper | {f'`{spec.wrapper}`' if spec.wrapper else '—'} |")
    return out


def _tolerance(spec: OpSpec) -> list[str]:
    out = ["| dtype | criterion | DUT accumulates in | mode |", "|---|---|---|---|"]
    for dtype in spec.dtypes:
        criterion = spec.criteria.get(dtype)
        mode = "three-party" if criterion == "cross_check" and dtype in V.FLOAT_DTYPES else "two-party"
        shown = f"`{criterion}`" if criterion else f"**missing: TTK's default {V.undeclared_criterion(dtype)}**"
        out.append(f"| {dtype} | {shown} | {spec.widening.get(dtype, dtype)} | {mode} |")
    return out


def page_intro(verdict: Verdict, link: str) -> list[str]:
    """A selected page's heading, link, reason, trigger and notebooks (both reviews open a page so),
    the facts one paragraph of short lines: a review is read page after page, and a paragraph's
    margin under each line made it a screen longer."""
    page = verdict.page
    facts = [f"[`{page.rel_path}`]({link}) — {page.kind}, area {page.area}", f"**Why it applies:** {verdict.reason}"]
    if page.trigger not in verdict.reason:
        facts.append(f"**Trigger:** {page.trigger}")
    if page.demonstrated_by:
        facts.append(f"**Demonstrated by:** {', '.join(f'`{nb}`' for nb in page.demonstrated_by)}")
    return [f"### {page.title}", "", "\\\n".join(facts), ""]


def _audit_cell(row: InvariantClaim) -> str:
    if row.audit_lines:
        return f"**FAIL** {len(row.audit_lines)}: " + ", ".join(f"line {n}" for n in row.audit_lines)
    if row.invariant.check != "static":
        return "—"
    return "clean" if row.audit_lines is not None else "not audited"


def _claim_cell(row: InvariantClaim) -> str:
    """The coder's claim in one cell: its status, where it is implemented, and why."""
    out = f"**{row.status}**"
    if row.file:
        out += f" at `{markdown_text(row.file)}` : `{markdown_text(row.symbol)}`"
    if row.justification not in (None, ""):
        out += f" — {_cell(row.justification)}"
    return out


def _fold(summary: str, body: list[str], fold: bool, opened: bool = False) -> list[str]:
    """``body`` inside a <details> whose one-line ``summary`` (our own words) shows when
    folded, for the site; unchanged elsewhere. User text inside ``body`` is already escaped."""
    if not fold:
        return body
    return [f'<details class="opkb-fold"{" open" if opened else ""}>', f"<summary>{summary}</summary>", "", *body, "",
            "</details>", ""]


def _reference(inputs: ReviewInputs, verdict: Verdict, claims, findings_lines, fold: bool = False) -> list[str]:
    out = page_intro(verdict, _link(inputs, verdict.page))
    rows = invariant_claims(verdict.page, claims, findings_lines)
    table = ["| invariant | what it requires | claim | audit |", "|---|---|---|---|"]
    for row in rows:
        inv = row.invariant
        check = f"{inv.check} ({inv.rule})" if inv.rule else inv.check
        table.append(f"| `{_cell(inv.id)}` ({check}) | {_cell(inv.text)} | {_claim_cell(row)} | {_audit_cell(row)} |")
    return out + _fold(claims_summary(rows), table, fold, opened=audit_breaks(rows)) + [""]


def audit_breaks(rows: list[InvariantClaim]) -> bool:
    return any(row.audit_lines for row in rows)


def claims_summary(rows: list[InvariantClaim]) -> str:
    """One page's invariants in one line: how many, by claimed status, and how many the audit breaks
    (what a folded invariant table shows, in both reviews)."""
    statuses = Counter(row.status for row in rows)
    failing = sum(bool(row.audit_lines) for row in rows)
    return (f"{len(rows)} invariants: {', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))}"
            + (f"; the audit breaks {failing}" if failing else ""))


def checklist(spec: OpSpec, selection: Selection, evidence: str) -> list[str]:
    """The reviewer's items; ``evidence`` is the item that says which checks must pass."""
    uncovered = spec.uncovered_dtypes()
    items = [f"every registered dtype declares a criterion{' (missing: ' + ', '.join(uncovered) + ')' if uncovered else ''}",
             evidence]
    items += [f"{v.page.title} — every invariant implemented, or deviated / not applicable with a justification I accept"
              for v in selection.references]
    items.append("the demonstrating notebooks were run on every backend the operator ships on")
    return [f"- [ ] {item}" for item in items]


def render_review(inputs: ReviewInputs, fold: bool = False) -> str:
    """The review as Markdown; ``fold`` (the site) folds each page's invariants and the
    excluded pages into a <details> with a one-line summary."""
    spec, sel = inputs.spec, inputs.selection
    claims = claims_of(inputs.usage)
    # a `# kbt: ignore` waives nothing under `kbt verify`, so suppressed findings break their
    # invariant here too, as in the review notebook
    findings_lines = (lines_by_code([*inputs.audit.findings, *inputs.audit.suppressed])
                      if inputs.audit is not None else None)
    invariants = [row for v in sel.references for row in invariant_claims(v.page, claims, None)]
    statuses = Counter(row.status for row in invariants)
    n_findings = len(getattr(inputs.audit, "findings", []) or [])
    lines = [f"# Design review: {spec.op}{'' if spec.wrapper or getattr(spec, 'golden', '') else f' ({NO_IMPLEMENTATION})'}", "",
             f"{len(sel.constraints)} required constraints, {len(sel.patterns)} patterns, "
             f"{len(invariants)} invariants ({', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))}); "
             f"wrapper audit: {'not run' if inputs.audit is None else f'{n_findings} findings'}.", "",
             "## The operator", "", *_facts(spec), "",
             "## Tolerance coverage", "", *_tolerance(spec), ""]
    lines += ["## Wrapper audit", "", inputs.audit_note, ""]
    if inputs.audit is not None:
        if n_findings:
            lines += ["| line | code | finding |", "|---|---|---|"]
            lines += [f"| {f.line}:{f.col} | {f.code} | {_cell(f.message)} |" for f in inputs.audit.findings]
        else:
            lines.append("No operation outside the wrapper boundary was found.")
        if getattr(inputs.audit, "suppressed", None):
            lines += ["", f"Suppressed with `# kbt: ignore`: {len(inputs.audit.suppressed)} (they still fail `kbt verify`)."]
        lines.append("")
    lines += ["## Required constraints", ""]
    for verdict in sel.constraints:
        lines += _reference(inputs, verdict, claims, findings_lines, fold)
    lines += ["## Optional patterns", ""]
    if not sel.patterns:
        lines += ["No pattern applies (`no_matching_pattern`); the constraints above still do.", ""]
    for verdict in sel.patterns:
        lines += _reference(inputs, verdict, claims, findings_lines, fold)
    if sel.playbooks:
        lines += ["## Playbooks to read", ""]
        lines += [f"- [{v.page.title}]({_link(inputs, v.page)}) — {v.reason}" for v in sel.playbooks]
        lines.append("")
    excluded = ["| page | why not |", "|---|---|"]
    excluded += [f"| [`{v.page.rel_path}`]({_link(inputs, v.page)}) | {_cell(v.reason)} |" for v in sel.excluded]
    lines += ["## Pages that do not apply", "", *_fold(f"{len(sel.excluded)} pages, each with the predicate that failed",
                                                      excluded, fold)]
    lines += ["", "## Reviewer checklist", ""]
    lines += checklist(spec, sel, "the wrapper audit is clean and `kbt verify` passes")
    return "\n".join(lines) + "\n"


def render_html(markdown: str, title: str) -> str:
    """A standalone HTML page of the review (tables kept), for sharing outside a terminal.
    Raw HTML is off: whatever markup reached the Markdown is shown as text, never run."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)
    style = ("body{font-family:system-ui,sans-serif;max-width:90rem;margin:2rem auto;padding:0 1rem;line-height:1.45}"
             "table{border-collapse:collapse;margin:.5rem 0;max-width:100%}"
             "td,th{border:1px solid #ccc;padding:.25rem .5rem;vertical-align:top;overflow-wrap:anywhere}"
             "td:nth-child(2){min-width:24rem}code{background:#f4f4f4;padding:0 .2rem}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(title)}</title>"
            f"<style>{style}</style></head><body>\n{body}</body></html>\n")


def review_inputs(kb: KnowledgeBase, spec: OpSpec, selection: Selection, usage_path: Path | None,
                  source_root: Path, link_base: str = "", link_ext: str = ".md") -> ReviewInputs:
    """Gather the usage claims and the wrapper audit for one operator."""
    from kb_tools.contract.usage_shape import load_usage

    usage = load_usage(usage_path) if usage_path and is_file(usage_path) else None
    audit, note = None, (f"{NO_IMPLEMENTATION.capitalize()}: the spec names no wrapper file (`wrapper:` in the spec), "
                         "so the static invariants were not audited.")
    golden = getattr(spec, "golden", "")  # a CANN folder: its golden is what the static rules judge
    if not spec.wrapper and golden and is_file(Path(golden)):
        from kb_tools.audit import audit_path
        from kb_tools.audit.families import FamilyOptions

        audit = audit_path(golden, families=FamilyOptions(roles=frozenset({"golden"})))
        note = f"`kbt audit {golden}` (the folder's golden): {len(audit.findings)} findings."
    elif spec.wrapper:
        path = Path(source_root) / spec.wrapper
        if is_file(path):
            from kb_tools.audit import audit_path

            audit = audit_path(path)
            note = f"`kbt audit {spec.wrapper}`: {len(audit.findings)} findings in {', '.join(audit.wrappers) or 'no wrapper'}."
        else:
            note = f"The spec names the wrapper `{spec.wrapper}`, but `{path}` does not exist; nothing was audited."
    return ReviewInputs(kb, spec, selection, usage, audit, note, link_base, link_ext)
