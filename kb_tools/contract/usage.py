"""KB_USAGE.json: the skeleton a coder fills, its merge, and its contract check.

A regenerated skeleton never loses what a person wrote: records are matched by
(reference, invariant_id); filled records are kept as they are, new invariants are added,
and records whose page or invariant vanished move to ``stale`` rather than disappearing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from kb_tools import CONTRACT_VERSION
from kb_tools.contract.selection import SELECTION_FILENAME, Selection
from kb_tools.contract.usage_shape import load_usage
from kb_tools.diagnostics import EXIT_USAGE, Diagnostic, KbError, KbErrors, capped
from kb_tools.files.jsonio import dump_bytes, load_json, write_atomic, written_already
from kb_tools.files.schema_check import schema_diagnostics
from kb_tools.files.text import MAX_TEXT_BYTES
from kb_tools.kb.pages import KnowledgeBase

USAGE_FILENAME = "KB_USAGE.json"


def skeleton_record(reference: str, invariant) -> dict:
    return {
        "reference": reference,
        "invariant_id": invariant.id,
        "invariant": invariant.text,
        "implementation": {"file": None, "symbol": None, "status": None},
        "justification": None,
    }


@dataclass
class MergeReport:
    added: int = 0
    kept: int = 0
    stale: list[str] = field(default_factory=list)


def merge_usage(selection: Selection, existing: dict | None) -> tuple[dict, MergeReport]:
    """The new KB_USAGE document and what changed. ``existing`` is never mutated."""
    report = MergeReport()
    spec = selection.spec
    old_records = list(existing.get("invariants", [])) if existing else []
    by_key = {}
    for record in old_records:
        if isinstance(record, dict) and record.get("invariant_id"):
            by_key.setdefault((record.get("reference"), record["invariant_id"]), record)
    selected = {v.page.rel_path for v in selection.references}
    wanted_keys, records = set(), []
    for verdict in selection.references:
        page = verdict.page
        for inv in page.invariants:
            key = (page.rel_path, inv.id)
            wanted_keys.add(key)
            if key in by_key:
                records.append(by_key[key])
                report.kept += 1
            else:
                records.append(skeleton_record(page.rel_path, inv))
                report.added += 1
        # records a coder added by hand for this reference (no invariant_id) stay beside it
        for record in old_records:
            if isinstance(record, dict) and record.get("reference") == page.rel_path and not record.get("invariant_id"):
                records.append(record)
                report.kept += 1
    stale = list(existing.get("stale", [])) if existing else []
    for record in old_records:
        if not isinstance(record, dict):
            stale.append({"record": record, "why": "not a JSON object"})
            continue
        key = (record.get("reference"), record.get("invariant_id"))
        if key in wanted_keys or (record.get("reference") in selected and not record.get("invariant_id")):
            continue
        why = ("reference no longer selected" if record.get("reference") not in selected
               else f"invariant {record.get('invariant_id')!r} no longer on the page")
        stale.append({**record, "stale_reason": why})
        report.stale.append(f"{record.get('reference')} {record.get('invariant_id') or ''}".strip() + f": {why}")
    doc = dict(existing) if existing else {}
    doc.update({"schema_version": CONTRACT_VERSION, "op": spec.op, "class_id": spec.class_id, "invariants": records})
    if stale:
        doc["stale"] = stale
    ordered = {k: doc[k] for k in ("schema_version", "op", "class_id", "invariants")}
    ordered.update({k: v for k, v in doc.items() if k not in ordered})
    return ordered, report


def fresh_usage(selection: Selection, skeletons: dict | None = None) -> dict:
    """The document ``merge_usage(selection, None)`` gives, built from ``skeletons`` (each
    page's skeleton records, filled on first use). A build shares one such dict between all
    its operators, so each page's records are made once; the document is then only
    serialised, never edited, and never handed out."""
    skeletons = {} if skeletons is None else skeletons
    records = []
    for verdict in selection.references:
        page = verdict.page
        key = (page.rel_path, page.sha256)
        page_records = skeletons.get(key)
        if page_records is None:
            page_records = skeletons[key] = [skeleton_record(page.rel_path, inv) for inv in page.invariants]
        records += page_records
    spec = selection.spec
    return {"schema_version": CONTRACT_VERSION, "op": spec.op, "class_id": spec.class_id, "invariants": records}


def write_usage(selection: Selection, out_dir: Path, skeletons: dict | None = None) -> tuple[Path, MergeReport]:
    """Write or merge ``out_dir/KB_USAGE.json``. An existing file that cannot be read, or
    that belongs to another operator, is left untouched and reported (exit 2). A file that
    is still exactly the skeleton this selection gives is what merging would write back, so
    it is kept without being parsed (a rebuild of an untouched catalog reads, never writes)."""
    path = Path(out_dir) / USAGE_FILENAME
    skeleton = fresh_usage(selection, skeletons)
    data = dump_bytes(skeleton)
    if written_already(path, data):
        return path, MergeReport(kept=len(skeleton["invariants"]))
    if not path.exists():
        write_atomic(path, data)
        return path, MergeReport(added=len(skeleton["invariants"]))
    existing = load_usage(path)
    spec = selection.spec
    for key, want in (("op", spec.op), ("class_id", spec.class_id)):
        if key in existing and existing[key] != want:
            raise KbError(Diagnostic(str(path), existing.line_of(key), "US021",
                                     f"existing file is for {key} {existing[key]!r}, not {want!r}; left untouched"), EXIT_USAGE)
    doc, report = merge_usage(selection, existing)
    write_atomic(path, dump_bytes(doc), keep_equal=True)
    return path, report


# ---------------------------------------------------------------------------------------
# check-usage


def _symbol_occurs(text: str, symbol: str) -> bool:
    last = symbol.split(".")[-1]
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(last)}(?![A-Za-z0-9_])", text) is not None


def check_usage(usage_path: Path, kb: KnowledgeBase, source_root: Path) -> list[Diagnostic]:
    """Every contract violation in a filled KB_USAGE.json, judged against the
    KB_SELECTION.json beside it and the current pages. Unreadable input raises KbError;
    without a selection the file's own contract errors are raised with the missing one."""
    usage_path = Path(usage_path)
    shown = str(usage_path)
    doc = load_json(usage_path, code_prefix="US")
    if not isinstance(doc, dict):
        return [Diagnostic(shown, 1, "US020", "KB_USAGE.json must be a JSON object")]
    diags = own_contract(doc, shown)
    selection_path = usage_path.parent / SELECTION_FILENAME
    if not selection_path.exists():
        missing = Diagnostic(str(selection_path), None, "US001", "no KB_SELECTION.json beside the usage file; run kbt select first")
        raise KbErrors([missing, *capped(sorted(set(diags)), shown, "US060")], EXIT_USAGE)
    sel = load_json(selection_path, code_prefix="SE")
    from kb_tools.contract import (
        schemas,  # on use: its importlib.resources and typing cost `kbt usage`, which only writes, ~7 ms of CPU
    )

    sel_diags = schema_diagnostics(sel, schemas.load("kb_selection"), selection_path, "SE020")
    if sel_diags:
        return sel_diags + capped(sorted(set(diags)), shown, "US060")
    for key in ("op", "class_id", "schema_version"):
        if key in doc and doc[key] != sel.get(key):
            diags.append(Diagnostic(shown, doc.line_of(key), "US031", f"{key} {doc[key]!r} differs from the selection's {sel.get(key)!r}"))
    selected = {ref["path"]: ref for ref in sel["required_constraints"] + sel["optional_patterns"]}
    for ref in selected.values():
        page = kb.by_path(ref["path"])
        if page is None:
            diags.append(Diagnostic(str(selection_path), ref.line, "US040", f"selected page {ref['path']} no longer exists in the KB"))
        elif page.sha256 != ref["sha256"]:
            diags.append(Diagnostic(str(selection_path), ref.line, "US041", f"stale selection: {ref['path']} changed since it was selected; re-run kbt select and kbt usage"))
    sources = _SourceTexts(source_root)
    covered = set()
    for record in _records(doc):
        reference = record.get("reference")
        if not isinstance(reference, str):  # the schema says what it should be
            continue
        if reference not in selected:
            diags.append(Diagnostic(shown, record.line_of("reference"), "US042", f"reference {reference!r} is not in KB_SELECTION.json"))
            continue
        covered.add(reference)
        impl = record.get("implementation") if isinstance(record.get("implementation"), dict) else {}
        status = impl.get("status")
        if status is None:  # reported once, by own_contract
            continue
        page = kb.by_path(reference)
        inv = next((x for x in page.invariants if x.id == record.get("invariant_id")), None) if page else None
        if inv is not None and inv.check == "static" and status in ("deviated", "not_applicable"):
            diags.append(Diagnostic(shown, impl.line_of("status"), "US044",
                                    f"{reference} {inv.id}: a static invariant cannot be {status}; the verifier enforces {inv.rule} whatever the justification says"))
        if status in ("implemented", "deviated") and isinstance(impl.get("file"), str) and isinstance(impl.get("symbol"), str):
            diags.extend(sources.check(impl, shown))
    for path in selected:
        if path not in covered:
            diags.append(Diagnostic(shown, doc.line_of("invariants"), "US047", f"selected reference {path} has no invariant record"))
    for record in doc.get("stale", []) if isinstance(doc.get("stale"), list) else []:
        if isinstance(record, dict):
            diags.append(Diagnostic(shown, record.line, "US050", f"stale record kept for you to resolve: {record.get('reference')} {record.get('invariant_id') or ''} ({record.get('stale_reason', 'stale')})".replace("  ", " "), "warning"))
    return capped(sorted(set(diags)), shown, "US060")


def _records(doc: dict) -> list:
    records = doc.get("invariants") if isinstance(doc.get("invariants"), list) else []
    return [record for record in records if isinstance(record, dict)]


def own_contract(doc: dict, shown: str) -> list[Diagnostic]:
    """What the usage file breaks on its own, with no selection to compare: the schema
    (``verified``, a missing justification, wrong types) and one line per unfilled record,
    then a note counting them ("69 of 69 records unfilled")."""
    from kb_tools.contract import schemas  # on use, as in check_usage

    diags = [_verified_message(d) for d in schema_diagnostics(doc, schemas.load("kb_usage"), shown, "US030", skip=_is_unfilled_status)]
    records = _records(doc)
    unfilled = [r for r in records if isinstance(r.get("implementation"), dict)
                and "status" in r["implementation"] and r["implementation"]["status"] is None]
    for record in unfilled:
        diags.append(Diagnostic(shown, record["implementation"].line_of("status"), "US043",
                                f"{record.get('reference')} {record.get('invariant_id') or ''}: implementation.status is not filled in".replace(" :", ":")))
    if unfilled:
        diags.append(Diagnostic(shown, doc.line_of("invariants"), "US048",
                                f"{len(unfilled)} of {len(records)} records unfilled: set implementation.status "
                                "(implemented, deviated or not_applicable) and its file and symbol", "note"))
    return diags


def _is_unfilled_status(error) -> bool:
    """The schema's complaint about a null status; US043 says it once per record instead."""
    return error.instance is None and list(error.absolute_path)[-2:] == ["implementation", "status"]


class _SourceTexts:
    """The implementation files a usage file names, each read once (bounded) however many
    records name it."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.texts: dict[str, str | Diagnostic] = {}

    def check(self, impl: dict, shown: str) -> list[Diagnostic]:
        name, symbol = impl["file"], impl["symbol"]
        if name not in self.texts:
            self.texts[name] = self._read(name)
        text = self.texts[name]
        if isinstance(text, Diagnostic):
            return [Diagnostic(shown, impl.line_of("file"), "US045", f"implementation.file {name!r} {text.message}")]
        if not _symbol_occurs(text, symbol):
            return [Diagnostic(shown, impl.line_of("symbol"), "US046", f"symbol {symbol!r} does not occur in {name}")]
        return []

    def _read(self, name: str) -> str | Diagnostic:
        target = self.root / name
        if not target.is_file():
            return Diagnostic(name, None, "US045", f"does not exist under {self.root}")
        try:
            with target.open("rb") as handle:
                return handle.read(MAX_TEXT_BYTES).decode("utf-8", errors="replace")
        except OSError as exc:
            return Diagnostic(name, None, "US045", f"cannot be read: {exc.strerror}")


def _verified_message(d: Diagnostic) -> Diagnostic:
    """The schema's enum error for `verified`, said the way the contract says it."""
    if "'verified' is not one of" in d.message:
        return Diagnostic(d.path, d.line, "US032", "status 'verified' is refused: only the verifier verifies; use implemented, deviated or not_applicable")
    return d
