"""KB_USAGE.json: the skeleton a coder fills, its merge, and its contract check.

A regenerated skeleton never loses what a person wrote: records are matched by
(reference, invariant_id); filled records are kept as they are, new invariants are added,
and records whose page or invariant vanished move to ``stale`` rather than disappearing.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from kb_tools import CONTRACT_VERSION
from kb_tools.contract import upstream
from kb_tools.contract.code_names import Unreadable, code_names
from kb_tools.contract.selection import SELECTION_FILENAME, Selection
from kb_tools.contract.usage_shape import load_usage
from kb_tools.diagnostics import EXIT_USAGE, Diagnostic, KbError, KbErrors, capped
from kb_tools.files.jsonio import MAX_JSON_BYTES, dump_bytes, folder_lock, load_json, write_together, written_already
from kb_tools.files.schema_check import schema_diagnostics
from kb_tools.files.text import read_bytes
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
    restored: int = 0  # records taken back from ``stale`` because their page or invariant is back


def _untouched(record) -> bool:
    """A record nobody has written in: status, file, symbol and justification all empty."""
    impl = record.get("implementation")
    return (isinstance(impl, dict) and not any(impl.get(k) for k in ("file", "symbol", "status"))
            and not record.get("justification"))


def repeated_records(records) -> list[tuple[dict, dict]]:
    """(first, later) pairs of different records that answer one (reference, invariant_id):
    a merge keeps one record per invariant, so the later one would be lost."""
    first, repeated = {}, []
    for record in records:
        if isinstance(record, dict) and isinstance(record.get("invariant_id"), str) and isinstance(record.get("reference"), (str, type(None))):
            key = (record.get("reference"), record["invariant_id"])
            if key not in first:
                first[key] = record
            elif record != first[key]:
                repeated.append((first[key], record))
    return repeated


def merge_usage(selection: Selection, existing: dict | None) -> tuple[dict, MergeReport]:
    """The new KB_USAGE document and what changed. ``existing`` is never mutated. A record in
    ``stale`` whose page and invariant are selected again comes back in place of the blank
    skeleton it would otherwise get (nothing a person wrote stays parked once it applies)."""
    report = MergeReport()
    spec = selection.spec
    old_records = list(existing.get("invariants", [])) if existing else []
    by_key = {}
    for record in old_records:
        if isinstance(record, dict) and record.get("invariant_id"):
            by_key.setdefault((record.get("reference"), record["invariant_id"]), record)
    parked = list(existing.get("stale", [])) if existing else []
    parked_by_key = {}
    for i, record in enumerate(parked):
        if isinstance(record, dict) and isinstance(record.get("invariant_id"), str) and not _untouched(record):
            parked_by_key.setdefault((record.get("reference"), record["invariant_id"]), i)
    taken_back = set()
    selected = {v.page.rel_path for v in selection.references}
    wanted_keys, records = set(), []
    for verdict in selection.references:
        page = verdict.page
        for inv in page.invariants:
            key = (page.rel_path, inv.id)
            wanted_keys.add(key)
            live = by_key.get(key)
            if key in parked_by_key and (live is None or _untouched(live)):
                index = parked_by_key.pop(key)
                taken_back.add(index)
                records.append({k: v for k, v in parked[index].items() if k != "stale_reason"})
                report.restored += 1
            elif live is not None:
                records.append(live)
                report.kept += 1
            else:
                records.append(skeleton_record(page.rel_path, inv))
                report.added += 1
        # records a coder added by hand for this reference (no invariant_id) stay beside it
        for record in old_records:
            if isinstance(record, dict) and record.get("reference") == page.rel_path and not record.get("invariant_id"):
                records.append(record)
                report.kept += 1
    stale = [record for i, record in enumerate(parked) if i not in taken_back]
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
    doc.pop("stale", None)
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


def write_operator(selection: Selection, out_dir: Path, skeletons: dict | None = None, *,
                   with_usage: bool = True) -> tuple[Path, MergeReport | None]:
    """Write ``out_dir``'s KB_SELECTION.json and, ``with_usage``, write or merge its
    KB_USAGE.json: both or neither. Everything that can refuse (a usage file that cannot be
    read, belongs to another operator, holds two different records for one invariant, or
    would grow past what kbt reads back) is decided before either file is touched, under a
    lock on the folder so that a second kbt writing there waits and then sees this one's
    files. A usage file still exactly the skeleton this selection gives is kept without
    being parsed (a rebuild of an untouched catalog reads, never writes)."""
    out_dir = Path(out_dir)
    usage_path = out_dir / USAGE_FILENAME
    with folder_lock(out_dir):
        files = [(out_dir / SELECTION_FILENAME, dump_bytes(selection.to_json()))]
        report = None
        if with_usage:
            data, report = _usage_bytes(selection, usage_path, skeletons)
            files.append((usage_path, data))
        else:
            _owned_by(selection, usage_path)
        write_together(files, keep_equal=True)
    return usage_path, report


def write_usage(selection: Selection, out_dir: Path, skeletons: dict | None = None) -> tuple[Path, MergeReport]:
    """``write_operator``: a usage file is never written without its selection."""
    return write_operator(selection, out_dir, skeletons)


def _usage_bytes(selection: Selection, path: Path, skeletons: dict | None) -> tuple[bytes, MergeReport]:
    skeleton = fresh_usage(selection, skeletons)
    data = dump_bytes(skeleton)
    if written_already(path, data):
        return data, MergeReport(kept=len(skeleton["invariants"]))
    if not path.exists():
        return _readable(data, path, "the usage skeleton"), MergeReport(added=len(skeleton["invariants"]))
    existing = load_usage(path)
    _owned_by(selection, path, existing)
    repeated = repeated_records(existing.get("invariants", []))
    if repeated:
        first, later = repeated[0]
        more = f" ({len(repeated) - 1} more such pairs)" if len(repeated) > 1 else ""
        raise KbError(Diagnostic(str(path), later.line, "US023",
                                 f"{later.get('reference')} {later['invariant_id']}: a second, different record for this "
                                 f"invariant (the first is at line {first.line}){more}; the merge keeps one record per "
                                 "invariant, so merge the two into one (or drop one) and re-run; left untouched"), EXIT_USAGE)
    doc, report = merge_usage(selection, existing)
    return _readable(dump_bytes(doc), path, "the merged file"), report


def _owned_by(selection: Selection, path: Path, existing: dict | None = None) -> None:
    """Refuse (US021, exit 2) a usage file of another operator or class in the folder: its
    selection beside it must stay the one it was filled against. Only a usage file that can
    be read is judged here; ``kbt select`` leaves one that cannot be read to ``kbt usage``."""
    if existing is None:
        if not path.exists():
            return
        try:
            existing = load_json(path, code_prefix="US")
        except (KbError, KbErrors):
            return
        if not isinstance(existing, dict):
            return
    spec = selection.spec
    for key, want in (("op", spec.op), ("class_id", spec.class_id)):
        if key in existing and existing[key] != want:
            raise KbError(Diagnostic(str(path), existing.line_of(key), "US021",
                                     f"existing file is for {key} {existing[key]!r}, not {want!r}; it and the "
                                     f"{SELECTION_FILENAME} beside it are left untouched (write elsewhere with -o)"), EXIT_USAGE)


def _readable(data: bytes, path: Path, what: str) -> bytes:
    """``data``, unless it is more than kbt's JSON reader takes: a file kbt writes is one it can read back."""
    if len(data) > MAX_JSON_BYTES:
        raise KbError(Diagnostic(str(path), None, "US024",
                                 f"{what} would be {len(data)} bytes, over the {MAX_JSON_BYTES}-byte limit kbt reads back; "
                                 "left untouched: move hand-added records or stale ones out of it"), EXIT_USAGE)
    return data


# ---------------------------------------------------------------------------------------
# check-usage


# A symbol is a name, or names joined as a member is written (Class.method, ns::func).
_SYMBOL = re.compile(r"\w+(?:(?:\.|::)\w+)*")


def _symbol_occurs(names: set[str], symbol: str) -> bool:
    """Every part of the dotted symbol is a name the file's code defines or uses."""
    return all(part in names for part in re.split(r"\.|::", symbol))


def _named(record: dict) -> str:
    """How a message names a record: by its reference and invariant, not its place in a list."""
    return f"{record.get('reference')} {record.get('invariant_id') or '(record without invariant_id)'}"


def check_usage(usage_path: Path, kb: KnowledgeBase, source_root: Path) -> list[Diagnostic]:
    """Every contract violation in a filled KB_USAGE.json, judged against the
    KB_SELECTION.json beside it and the current pages. Unreadable input raises KbError;
    without a selection the file's own contract errors are raised with the missing one."""
    usage_path = Path(usage_path)
    shown = str(usage_path)
    doc = load_json(usage_path, code_prefix="US")
    if not isinstance(doc, dict):
        return [Diagnostic(shown, 1, "US020", "KB_USAGE.json must be a JSON object")]
    encoding, decoded = upstream.normalise(doc, shown)  # the public template's "[field:req_id | anchors] text"
    diags = own_contract(doc, shown) + encoding + upstream.not_verbatim(decoded, kb, shown)
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
        page = kb.by_path(reference)
        inv = next((x for x in page.invariants if x.id == record.get("invariant_id")), None) if page else None
        if page is not None and isinstance(record.get("invariant_id"), str) and inv is None:
            diags.append(_unknown_invariant(record, page, shown))
        impl = record.get("implementation") if isinstance(record.get("implementation"), dict) else {}
        status = impl.get("status")
        if status is None:  # reported once, by own_contract
            continue
        if inv is not None and inv.check == "static" and status in ("deviated", "not_applicable"):
            diags.append(Diagnostic(shown, impl.line_of("status"), "US044",
                                    f"{reference} {inv.id}: a static invariant cannot be {status}; the verifier enforces {inv.rule} whatever the justification says"))
        if status in ("implemented", "deviated") and isinstance(impl.get("file"), str) and isinstance(impl.get("symbol"), str):
            diags.extend(sources.check(record, impl, shown))
    for path in selected:
        if path not in covered:
            diags.append(Diagnostic(shown, doc.line_of("invariants"), "US047", f"selected reference {path} has no invariant record"))
    for record in doc.get("stale", []) if isinstance(doc.get("stale"), list) else []:
        if isinstance(record, dict):
            diags.append(Diagnostic(shown, record.line, "US050", f"stale record kept for you to resolve: {record.get('reference')} {record.get('invariant_id') or ''} ({record.get('stale_reason', 'stale')})".replace("  ", " "), "warning"))
    return capped(sorted(set(diags)), shown, "US060")


def _unknown_invariant(record: dict, page, shown: str) -> Diagnostic:
    import difflib

    ids = [inv.id for inv in page.invariants]
    near = difflib.get_close_matches(record["invariant_id"], ids, n=1)
    hint = f"did you mean {near[0]!r}?" if near else f"its invariants are {', '.join(ids)}"
    return Diagnostic(shown, record.line_of("invariant_id"), "US054",
                      f"{record.get('reference')}: invariant_id {record['invariant_id']!r} is not on the page ({hint}); "
                      "kbt usage would move this record to stale")


def _records(doc: dict) -> list:
    records = doc.get("invariants") if isinstance(doc.get("invariants"), list) else []
    return [record for record in records if isinstance(record, dict)]


def own_contract(doc: dict, shown: str) -> list[Diagnostic]:
    """What the usage file breaks on its own, with no selection to compare: the schema
    (``verified``, a missing justification, wrong types) and one line per unfilled record,
    then a note counting them ("69 of 69 records unfilled")."""
    from kb_tools.contract import schemas  # on use, as in check_usage

    records = _records(doc)
    diags = [_record_named(_verified_message(d), records)
             for d in schema_diagnostics(doc, schemas.load("kb_usage"), shown, "US030", skip=_is_unfilled_status)]
    unfilled = [r for r in records if isinstance(r.get("implementation"), dict)
                and "status" in r["implementation"] and r["implementation"]["status"] is None]
    for record in unfilled:
        diags.append(Diagnostic(shown, record["implementation"].line_of("status"), "US043",
                                f"{record.get('reference')} {record.get('invariant_id') or ''}: implementation.status is not filled in".replace(" :", ":")))
    for first, later in repeated_records(records):
        diags.append(Diagnostic(shown, later.line, "US049", f"{_named(later)}: a second, different record for this invariant "
                                f"(the first is at line {first.line}); keep one record per invariant"))
    for record in records:
        impl = record.get("implementation") if isinstance(record.get("implementation"), dict) else {}
        if impl.get("status") in ("deviated", "not_applicable") and isinstance(record.get("justification"), str) \
                and record["justification"] and not record["justification"].strip():
            diags.append(Diagnostic(shown, record.line_of("justification"), "US053",
                                    f"{_named(record)}: the justification is blank; say why the invariant is {impl['status']}"))
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
    records name it, and only under the source root."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.texts: dict[str, tuple[set[str], str | None]] = {}

    def check(self, record: dict, impl: dict, shown: str) -> list[Diagnostic]:
        """What is wrong with the claimed location: the symbol and the file are judged
        apart, so a record wrong in both says both at once."""
        name, symbol = impl["file"], impl["symbol"]
        found = []
        if not _SYMBOL.fullmatch(symbol):
            found.append(Diagnostic(shown, impl.line_of("symbol"), "US051",
                                    f"{_named(record)}: symbol {symbol!r} is not a name; give the function, class or constant "
                                    f"as it is written in {name} (a member as Class.method)"))
        if name not in self.texts:
            self.texts[name] = self._read(name)
        names, problem = self.texts[name]
        if problem:
            found.append(Diagnostic(shown, impl.line_of("file"), "US045", f"{_named(record)}: implementation.file {name!r} {problem}"))
        elif not found and not _symbol_occurs(names, symbol):
            found.append(Diagnostic(shown, impl.line_of("symbol"), "US046", f"{_named(record)}: symbol {symbol!r} does not occur "
                                    f"in the code of {name} (a comment or a string does not count)"))
        return found

    def _read(self, name: str) -> tuple[set[str], str | None]:
        """(the names the file's code uses, None), or (empty, why it cannot be the implementation)."""
        from kb_tools.files.confine import OutsideRoot, resolve_inside

        try:
            target = resolve_inside(self.root, name, "implementation.file")
        except OutsideRoot:
            if "\x00" in name:
                return set(), "holds a NUL byte; no file can be named so"
            return set(), f"is outside the source root {self.root} (links followed); name a file under it (or pass --root)"
        try:
            data = read_bytes(Path(target), code_prefix="US")
        except KbError as exc:
            why = exc.diagnostic.message.removeprefix("file ")  # "file is N bytes, over ..." reads "'x' is N bytes"
            if why == "no such file":
                return set(), f"does not exist under {self.root}"
            return set(), why if why.startswith(("is ", "cannot ")) else f"is a {why}"  # "is a symbolic link loop"
        if b"\x00" in data:
            return set(), "is a binary file, not source text"
        try:
            return code_names(name, data.decode("utf-8", errors="replace")), None
        except Unreadable as exc:
            return set(), str(exc)


def _verified_message(d: Diagnostic) -> Diagnostic:
    """The schema's enum error for `verified`, said the way the contract says it."""
    if "'verified' is not one of" in d.message:
        return Diagnostic(d.path, d.line, "US032", "status 'verified' is refused: only the verifier verifies; use implemented, deviated or not_applicable")
    return d


_AT_RECORD = re.compile(r"^invariants\.(\d+)(?:\.(\S+?))?: (.*)$")


def _record_named(d: Diagnostic, records: list) -> Diagnostic:
    """A schema error inside a record, named by the record (reference and invariant) rather
    than by its place in the list, and a missing justification said as the rule it breaks."""
    m = _AT_RECORD.match(d.message)
    if m is None or int(m[1]) >= len(records) or not isinstance(records[int(m[1])], dict):
        return d
    record, field_name, problem = records[int(m[1])], m[2], m[3]
    impl = record.get("implementation") if isinstance(record.get("implementation"), dict) else {}
    status = impl.get("status")
    if field_name == "justification" or (field_name is None and "'justification'" in problem):
        if status in ("deviated", "not_applicable"):
            return Diagnostic(d.path, d.line, d.code, f"{_named(record)}: a {status} record needs a justification: "
                              "say in a sentence what the code does instead, and why")
    where = f" {field_name}" if field_name else ""
    return Diagnostic(d.path, d.line, d.code, f"{_named(record)}:{where} {problem}")
