"""The short form of the select and usage answers an agent reads (issue 38 item 7): one line
of facts per obligation (its id, the rule that checks it, what is left to fill, where), not
the whole file. The full file is one argument away (``form="full"``); a catalog operator's
compact answer stays under ``COMPACT_LIMIT`` bytes."""

from __future__ import annotations

from pathlib import Path

COMPACT_LIMIT = 8 * 1024
FILLED_BY = ("status", "file", "symbol")


def usage_compact(path: Path, kb) -> dict:
    """The obligations of a written KB_USAGE.json: ``[id, rule, fill, line]`` rows, where id is
    ``page-id/invariant-id``, rule the audit code (or the check kind: runtime, review), fill
    the fields still empty and line the record's line in the file."""
    from kb_tools.files.jsonio import load_json

    doc = load_json(Path(path), code_prefix="US")
    rows, done = [], 0
    for record in doc.get("invariants", []) if isinstance(doc.get("invariants"), list) else []:
        if not isinstance(record, dict):
            continue
        page = kb.by_path(record.get("reference")) if isinstance(record.get("reference"), str) else None
        inv = next((x for x in page.invariants if x.id == record.get("invariant_id")), None) if page else None
        impl = record.get("implementation") if isinstance(record.get("implementation"), dict) else {}
        fill = [k for k in FILLED_BY if not impl.get(k)]
        if impl.get("status") in ("deviated", "not_applicable"):
            fill = [k for k in fill if k == "status"] + ([] if record.get("justification") else ["justification"])
        if not fill:
            done += 1
            continue
        ident = f"{page.id if page else record.get('reference')}/{record.get('invariant_id')}"
        rule = (inv.rule or inv.check) if inv is not None else "?"
        rows.append([ident, rule, "+".join(fill), record.line])
    return {"file": str(path), "op": doc.get("op"), "open": len(rows), "filled": done,
            "columns": ["obligation", "rule", "fill", "line"], "obligations": rows,
            "how": "set implementation.status (implemented|deviated|not_applicable), file and symbol at each line; "
                   "a deviated or not_applicable record needs a justification; page(id) reads an obligation's page; "
                   "form=full returns the whole file"}


def selection_compact(path: Path) -> dict:
    """A written KB_SELECTION.json without its per-page reasons: the pages by list, with the
    wrapper and the counts."""
    from kb_tools.files.jsonio import load_json

    sel = load_json(Path(path), code_prefix="SE")

    def pages(key):
        return [ref.get("path") for ref in sel.get(key, []) if isinstance(ref, dict)] if isinstance(sel.get(key), list) else []

    excluded = sel.get("excluded")
    return {"file": str(path), "op": sel.get("op"), "class_id": sel.get("class_id"), "target": sel.get("target"),
            "wrapper": sel.get("wrapper"), "required_constraints": pages("required_constraints"),
            "optional_patterns": pages("optional_patterns"), "playbooks": pages("playbooks"),
            "excluded": len(excluded) if isinstance(excluded, list) else 0,
            "how": "each page's invariants become KB_USAGE.json records (tool usage); form=full returns the whole file"}
