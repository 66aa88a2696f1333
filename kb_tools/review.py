"""``kbt review``: one Markdown document that walks a reviewer through one operator.

It puts together what the other tools know — the spec's facts, the selection and why each
page applies, each invariant with the coder's claim from KB_USAGE.json, the audit of the
delivered wrapper, the notebooks that prove the rules, the pages excluded and why — and ends
with a checklist to tick. The same inputs give the same bytes.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kb_tools.pages import KnowledgeBase
from kb_tools.selection import Selection, Verdict
from kb_tools.specs import OpSpec
from kb_tools import vocabulary as V


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


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ") if text not in (None, "") else "—"


def _claims(usage: dict | None) -> dict[tuple[str, str], dict]:
    claims = {}
    for record in (usage or {}).get("invariants", []) if isinstance(usage, dict) else []:
        if isinstance(record, dict) and record.get("invariant_id"):
            claims[(record.get("reference"), record["invariant_id"])] = record
    return claims


def _audit_by_code(audit) -> dict[str, list]:
    found: dict[str, list] = {}
    for f in getattr(audit, "findings", []) if audit else []:
        found.setdefault(f.code, []).append(f)
    return found


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


def _reference(inputs: ReviewInputs, verdict: Verdict, claims, by_code) -> list[str]:
    page = verdict.page
    link = _link(inputs, page)
    out = [f"### {page.title}", "", f"[`{page.rel_path}`]({link}) — {page.kind}, area {page.area}", "",
           f"**Why it applies:** {verdict.reason}", ""]
    if page.trigger not in verdict.reason:
        out += [f"**Trigger:** {page.trigger}", ""]
    if page.demonstrated_by:
        nbs = ", ".join(f"`{nb}`" for nb in page.demonstrated_by)
        out += [f"**Demonstrated by:** {nbs}", ""]
    out += ["| invariant | check | claim | location | justification | audit |", "|---|---|---|---|---|---|"]
    for inv in page.invariants:
        record = claims.get((page.rel_path, inv.id))
        impl = (record or {}).get("implementation") or {}
        status = impl.get("status") or "open"
        location = f"`{impl['file']}` : `{impl['symbol']}`" if impl.get("file") and impl.get("symbol") else "—"
        check = f"{inv.check} ({inv.rule})" if inv.rule else inv.check
        if inv.check == "static" and inputs.audit is not None:
            hits = by_code.get(inv.rule, [])
            audit = f"**FAIL** {len(hits)}: " + ", ".join(f"line {f.line}" for f in hits) if hits else "clean"
        elif inv.check == "static":
            audit = "not audited"
        else:
            audit = "—"
        text = f"`{inv.id}`: {inv.text}"
        out.append(f"| {_cell(text)} | {check} | {status} | {location} | {_cell((record or {}).get('justification'))} | {audit} |")
    return out + [""]


def render_review(inputs: ReviewInputs) -> str:
    spec, sel = inputs.spec, inputs.selection
    claims = _claims(inputs.usage)
    by_code = _audit_by_code(inputs.audit)
    invariants = [(v.page, inv) for v in sel.references for inv in v.page.invariants]
    statuses = Counter(((claims.get((p.rel_path, i.id)) or {}).get("implementation") or {}).get("status") or "open"
                       for p, i in invariants)
    n_findings = len(getattr(inputs.audit, "findings", []) or [])
    lines = [f"# Design review: {spec.op}", "",
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
        lines += _reference(inputs, verdict, claims, by_code)
    lines += ["## Optional patterns", ""]
    if not sel.patterns:
        lines += ["No pattern applies (`no_matching_pattern`); the constraints above still do.", ""]
    for verdict in sel.patterns:
        lines += _reference(inputs, verdict, claims, by_code)
    if sel.playbooks:
        lines += ["## Playbooks to read", ""]
        lines += [f"- [{v.page.title}]({_link(inputs, v.page)}) — {v.reason}" for v in sel.playbooks]
        lines.append("")
    lines += ["## Pages that do not apply", "", "| page | why not |", "|---|---|"]
    lines += [f"| [`{v.page.rel_path}`]({_link(inputs, v.page)}) | {_cell(v.reason)} |" for v in sel.excluded]
    lines += ["", "## Reviewer checklist", ""]
    uncovered = spec.uncovered_dtypes()
    lines.append(f"- [ ] every registered dtype declares a criterion{'' if not uncovered else ' (missing: ' + ', '.join(uncovered) + ')'}")
    lines.append("- [ ] the wrapper audit is clean and `kbt verify` passes")
    for verdict in sel.references:
        lines.append(f"- [ ] {verdict.page.title} — every invariant implemented, or deviated / not applicable with a justification I accept")
    lines.append("- [ ] the demonstrating notebooks were run on every backend the operator ships on")
    return "\n".join(lines) + "\n"


def render_html(markdown: str, title: str) -> str:
    """A standalone HTML page of the review (tables kept), for sharing outside a terminal."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark").enable("table").render(markdown)
    style = ("body{font-family:system-ui,sans-serif;max-width:72rem;margin:2rem auto;padding:0 1rem;line-height:1.45}"
             "table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.25rem .5rem;vertical-align:top}"
             "code{background:#f4f4f4;padding:0 .2rem}")
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>"
            f"<style>{style}</style></head><body>\n{body}</body></html>\n")


def review_inputs(kb: KnowledgeBase, spec: OpSpec, selection: Selection, usage_path: Path | None,
                  source_root: Path, link_base: str = "", link_ext: str = ".md") -> ReviewInputs:
    """Gather the usage claims and the wrapper audit for one operator."""
    from kb_tools.usage_shape import load_usage

    usage = load_usage(usage_path) if usage_path and Path(usage_path).is_file() else None
    audit, note = None, "The spec names no wrapper file (`wrapper:` in the spec), so the static invariants were not audited."
    if spec.wrapper:
        path = Path(source_root) / spec.wrapper
        if path.is_file():
            from kb_tools.audit import audit_path

            audit = audit_path(path)
            note = f"`kbt audit {spec.wrapper}`: {len(audit.findings)} findings in {', '.join(audit.wrappers) or 'no wrapper'}."
        else:
            note = f"The spec names `{spec.wrapper}`, which does not exist under `{source_root}`; nothing was audited."
    return ReviewInputs(kb, spec, selection, usage, audit, note, link_base, link_ext)
