"""The public PyPTO-Pro KB's newest shapes (contract version 3), read and written beside ours.

Its coder template writes each invariant as one string that names where it came from::

    [<selection_field>:<req_id> | <source_anchors>] <invariant copied verbatim>

``selection_field`` is the KB_SELECTION.json list that holds the reference
(``required_constraints`` or ``optional_patterns``), ``req_id`` names the requirement (here the
page id and the invariant id, ``wrapper-boundary/no-host-cast``), and ``source_anchors`` the
sources the page cites (``003 §boundary-rule``). A usage file in that shape carries no
``invariant_id``: ``normalise`` recovers it from the string, so that the merge, the contract
check and the review read both shapes alike; ``encoded_usage`` writes it back.

Its verifier names failures by category; ``category`` maps each of our codes to that name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from kb_tools.diagnostics import Diagnostic

FIELDS = ("required_constraints", "optional_patterns")
_ENCODED = re.compile(r"^\[(?P<field>[a-z_]+):(?P<req>[^\s|\]]+)\s*\|\s*(?P<anchors>[^\]]*?)\s*\]\s+(?P<text>\S.*)$", re.S)


@dataclass(frozen=True)
class Encoded:
    field: str
    page_id: str
    invariant_id: str
    anchors: str
    text: str


def anchors_of(page) -> str:
    """The page's citations, short: the seed number and the section (``003 §boundary-rule``)."""
    return ", ".join(f"{s.get('seed', '?')[:3]} §{s.get('section', '?')}" for s in page.sources) or "opkb"


def encode(field: str, page, invariant_id: str, text: str, *, quoted: bool = False) -> str:
    """The encoded string; ``quoted`` spells it as the public template's v3 text does, the
    req_id and the anchors each written by ``json.dumps`` (a string and a list of strings)."""
    if quoted:
        anchors = [a for a in anchors_of(page).split(", ") if a]
        req = json.dumps(f"{page.id}/{invariant_id}", ensure_ascii=False)
        return f"[{field}:{req} | {json.dumps(anchors, ensure_ascii=False)}] {text}"
    return f"[{field}:{page.id}/{invariant_id} | {anchors_of(page)}] {text}"


def decode(value) -> Encoded | None:
    """The parts of an encoded invariant string, plain or quoted (``_decode_quoted``); None
    for a plain invariant."""
    if not isinstance(value, str):
        return None
    m = _ENCODED.match(value)
    if m is None or m["req"].startswith('"'):
        return _decode_quoted(value)
    if m["field"] not in FIELDS or "/" not in m["req"]:
        return None
    page_id, _, invariant_id = m["req"].partition("/")
    return Encoded(m["field"], page_id, invariant_id, m["anchors"], m["text"])


_JSON = json.JSONDecoder()
_QUOTED_HEAD = re.compile(r"^\[(?P<field>[a-z_]+):(?=\")")


def _decode_quoted(value: str) -> Encoded | None:
    """``[<field>:"<page-id>/<invariant-id>" | ["<anchor>", ...]] <text>``: the template's
    json.dumps spelling, read with a JSON decoder so that a ``]`` or ``|`` inside an anchor
    is the anchor's. The anchors come back joined by ", ", as the plain spelling holds them."""
    head = _QUOTED_HEAD.match(value)
    if head is None or head["field"] not in FIELDS:
        return None
    try:
        req, at = _JSON.raw_decode(value, head.end())
        bar = re.compile(r"\s*\|\s*").match(value, at)
        if bar is None:
            return None
        anchors, at = _JSON.raw_decode(value, bar.end())
    except (ValueError, RecursionError):  # RecursionError: anchors nested thousands deep
        return None
    close = re.compile(r"\s*\]\s+(?=\S)", re.S).match(value, at)
    if close is None or not isinstance(req, str) or "/" not in req:
        return None
    if isinstance(anchors, str):
        anchors = [anchors]
    if not isinstance(anchors, list) or not all(isinstance(a, str) for a in anchors):
        return None
    page_id, _, invariant_id = req.partition("/")
    return Encoded(head["field"], page_id, invariant_id, ", ".join(anchors), value[close.end():])


def spelling(data: bytes) -> str:
    """How a usage file's bytes spell its encoded invariants: ``upstream-v3`` (quoted),
    ``upstream`` (plain) or ``opkb`` (none); a look at the bytes, as ``holds_encoding``."""
    if not holds_encoding(data):
        return "opkb"
    fields = "|".join(FIELDS).encode()
    return "upstream-v3" if re.search(rb'"invariant"\s*:\s*"\[(?:' + fields + rb'):\\"', data) else "upstream"


def holds_encoding(data: bytes) -> bool:
    """Whether a usage file's bytes hold an encoded invariant: a look, not a parse, for a
    command that must not pay a strict JSON read (and its YAML import) to choose a format."""
    fields = "|".join(FIELDS).encode()
    return re.search(rb'"invariant"\s*:\s*"\[(?:' + fields + rb'):[^\s|\]]+/', data) is not None


def looks_encoded(value) -> bool:
    """Starts the way an encoded string does, whether or not the rest parses."""
    return isinstance(value, str) and value.startswith("[") and any(value.startswith(f"[{f}:") for f in FIELDS)


def normalise(doc, shown: str) -> tuple[list[Diagnostic], list]:
    """Decode every encoded invariant of ``doc`` in place (the plain text, its ``invariant_id``)
    and say what does not add up: a string that starts encoded but does not parse, a req_id
    whose page is not the record's reference, an invariant_id that disagrees with it. Returns
    those problems and the records that were encoded."""
    records = doc.get("invariants") if isinstance(doc, dict) else None
    if not isinstance(records, list):
        return [], []
    problems, decoded = [], []
    for record in records:
        if not isinstance(record, dict):
            continue
        value = record.get("invariant")
        found = decode(value)
        if found is None:
            if looks_encoded(value):
                problems.append(Diagnostic(shown, _line(record, "invariant"), "US070",
                                           f"{record.get('reference')}: invariant starts like the upstream encoding but is not "
                                           "'[<selection_field>:<page-id>/<invariant-id> | <anchors>] <text>'"))
            continue
        reference = record.get("reference")
        if isinstance(reference, str) and reference.rsplit("/", 1)[-1].removesuffix(".md") != found.page_id:
            problems.append(Diagnostic(shown, _line(record, "invariant"), "US071",
                                       f"{reference}: the encoded req_id names page {found.page_id!r}, not this reference"))
        given = record.get("invariant_id")
        if isinstance(given, str) and given != found.invariant_id:
            problems.append(Diagnostic(shown, _line(record, "invariant_id"), "US072",
                                       f"{reference}: invariant_id {given!r} but the encoded req_id says {found.invariant_id!r}"))
        elif given is None:
            record["invariant_id"] = found.invariant_id
        record["invariant"] = found.text
        decoded.append(record)
    return problems, decoded


def not_verbatim(decoded, kb, shown: str) -> list[Diagnostic]:
    """The template copies each invariant verbatim: an encoded record whose text is not the
    page's is a claim about some other rule."""
    problems = []
    for record in decoded:
        page = kb.by_path(record.get("reference")) if isinstance(record.get("reference"), str) else None
        inv = next((i for i in page.invariants if i.id == record.get("invariant_id")), None) if page else None
        if inv is not None and record.get("invariant") != inv.text:
            problems.append(Diagnostic(shown, _line(record, "invariant"), "US073",
                                       f"{page.rel_path} {inv.id}: the invariant is not the page's text copied verbatim; "
                                       "copy it from the page (kbt usage --invariant-format upstream writes it)"))
    return problems


def _line(record, key):
    line_of = getattr(record, "line_of", None)
    return line_of(key) if line_of else None


def encoded_usage(doc: dict, kb, selection_fields: dict[str, str], *, quoted: bool = False) -> dict:
    """``doc`` with every record's invariant in the upstream encoding (``selection_fields``:
    reference path -> the selection list holding it; ``quoted``: the v3 json.dumps spelling);
    records are otherwise unchanged."""
    out = dict(doc)
    records = []
    for record in doc.get("invariants", []):
        record = dict(record)
        page = kb.by_path(record.get("reference")) if isinstance(record.get("reference"), str) else None
        text = record.get("invariant")
        if page is not None and isinstance(record.get("invariant_id"), str) and isinstance(text, str) and decode(text) is None:
            field = selection_fields.get(page.rel_path, "required_constraints")
            record["invariant"] = encode(field, page, record["invariant_id"], text, quoted=quoted)
        records.append(record)
    out["invariants"] = records
    return out


def active_only(doc: dict) -> dict:
    """``doc`` as the v3 template keeps it: records only for the obligations that bind. A
    blank record (nothing written in it) is dropped where its reference already has a
    written one; a reference with none keeps all of its records, which a coder still fills."""
    records = [r for r in doc.get("invariants", []) if isinstance(r, dict)]
    written = {r.get("reference") for r in records if not _blank(r)}
    out = dict(doc)
    out["invariants"] = [r for r in doc.get("invariants", [])
                         if not (isinstance(r, dict) and _blank(r) and r.get("reference") in written)]
    return out


def _blank(record: dict) -> bool:
    impl = record.get("implementation")
    return isinstance(impl, dict) and not any(impl.get(k) for k in ("file", "symbol", "status")) \
        and not record.get("justification")


# The upstream verifier's failure categories, by the first letters of our codes.
CATEGORIES = (
    (("SE", "US040", "US041", "US001"), "kb_selection_invalid"),
    (("VF011",), "kb_usage_invalid"),  # a claim its golden, test or kernel breaks
    (("WB", "VF"), "wrapper_boundary_violation"),
    (("US",), "kb_usage_invalid"),
)


def category(code: str) -> str | None:
    for prefixes, name in CATEGORIES:
        if code.startswith(prefixes):
            return name
    return None


def categories(diagnostics) -> list[str]:
    """The categories of the errors among ``diagnostics``, in the order above."""
    found = {category(d.code) for d in diagnostics if d.severity == "error"}
    return [name for _, name in CATEGORIES if name in found]
