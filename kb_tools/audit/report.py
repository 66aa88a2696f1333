"""The audit's three output formats: text lines, a JSON document, and SARIF 2.1.0.

Text ends with the fix of each code it reported, once (as ruff prints its help). JSON lists
the wrappers too, so that a clean wrapper is told apart from one that was never found.
SARIF rule ids are the fixed WB codes, URIs are relative to ``%SRCROOT%`` (the directory
the audit ran in) and every result carries a fingerprint of its code, file, wrapper and
source text, so a code-scanning service keeps a finding's history when lines move; a
helper's finding appears once, with the wrappers that reach it as related locations.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from urllib.parse import quote

import orjson

from kb_tools import __version__
from kb_tools.audit.codes import RULES
from kb_tools.audit.engine import AuditResult
from kb_tools.audit.policies import DEFAULT_POLICY

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "kbtAuditFinding/v1"
FAMILY_TAGS = {"WB": "wrapper-boundary", "GD": "golden", "TS": "test", "KN": "kernel"}


def text_report(results: list[AuditResult]) -> str:
    """One ``path:line:col: CODE message`` line per finding, the suppression summary, then
    how to fix each reported code."""
    from kb_tools.diagnostics import one_line_safe  # a newline in a file name must not start a line of its own

    findings = [f for r in results for f in r.findings]
    lines = [one_line_safe(f) for f in findings]
    suppressed = [f for r in results for f in r.suppressed]
    if suppressed:
        lines.append(f"suppressed by `# kbt: ignore[...]` ({len(suppressed)}):")
        lines.extend(f"  {one_line_safe(f)}" for f in suppressed)
    codes = sorted({f.code for f in findings})
    if codes:
        lines.append("how to fix:")
        lines.extend(f"  {c} {RULES[c].name}: {RULES[c].fix}" for c in codes)
    return "\n".join(lines)


def _policy(results: list[AuditResult]) -> str:
    return results[0].policy if results else DEFAULT_POLICY


def json_report(results: list[AuditResult]) -> str:
    doc = {
        "files": len(results),
        "policy": _policy(results),
        "wrappers": [w.to_json() for r in results for w in r.wrapper_info],
        "findings": [f.to_json() for r in results for f in r.findings],
    }
    try:  # json.dumps(indent=2)'s very text at C speed: the standard encoder indents in Python (0.06 s on FlagGems)
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode("utf-8")
    except orjson.JSONEncodeError:  # a lone surrogate (an undecodable byte of a file name): as the standard encoder writes it
        return json.dumps(doc, indent=2, ensure_ascii=False)


def relative_uri(path: str, root: Path) -> tuple[str, bool]:
    """(URI, under %SRCROOT%?): a normalised relative POSIX path under the root, else a
    ``file://`` URI of the absolute path."""
    absolute = Path(os.path.abspath(path))
    try:
        relative = absolute.relative_to(root).as_posix()
    except ValueError:
        return absolute.as_uri(), False
    return quote(os.fsencode(relative), safe="/"), True  # a URI reference: a name's odd bytes as %XX, as as_uri() writes them


def fingerprint(code: str, uri: str, wrapper: str | None, source_line: str, occurrence: int) -> str:
    key = "\0".join([code, uri, wrapper or "", " ".join(source_line.split()), str(occurrence)])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _location(uri: str, under_root: bool, line: int, col: int | None = None) -> dict:
    artifact = {"uri": uri, **({"uriBaseId": "%SRCROOT%"} if under_root else {})}
    region = {"startLine": line, **({"startColumn": col} if col else {})}
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def _sarif_results(result: AuditResult, root: Path, index: dict[str, int], seen: dict, elsewhere: dict) -> list[dict]:
    uri, under_root = relative_uri(result.path, root)
    wrapper_lines = elsewhere  # (file, name) -> location: a helper's wrappers may sit in other files
    out = []
    for f, suppressed in [(f, False) for f in result.findings] + [(f, True) for f in result.suppressed]:
        source = result.source_lines.get(f.line, "")
        key = (f.code, uri, f.wrapper, " ".join(source.split()))
        seen[key] = seen.get(key, -1) + 1
        entry = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": RULES[f.code].level,
            "message": {"text": f.message + (f" [wrapper `{f.wrapper}`]" if f.wrapper else "")},
            "locations": [_location(uri, under_root, f.line, f.col)],
            "partialFingerprints": {FINGERPRINT_KEY: fingerprint(f.code, uri, f.wrapper, source, seen[key])},
        }
        related = [(i, pair) for i, pair in enumerate(f.reached_from) if pair in wrapper_lines]
        if f.helper and related:
            entry["relatedLocations"] = [
                {"id": i, **_location(*wrapper_lines[pair]), "message": {"text": f"reached from wrapper `{pair[1]}`"}}
                for i, pair in related]
        if suppressed:
            entry["suppressions"] = [{"kind": "inSource", "justification": f"# kbt: ignore[{f.code}]"}]
        out.append(entry)
    return out


def sarif_report(results: list[AuditResult], root: Path | None = None) -> str:
    root = Path(os.path.abspath(root or os.getcwd()))
    codes = sorted(RULES)
    index = {c: i for i, c in enumerate(codes)}
    rules = [{
        "id": c,
        "name": RULES[c].name,
        "shortDescription": {"text": RULES[c].summary},
        "help": {"text": RULES[c].fix or RULES[c].summary},
        "defaultConfiguration": {"level": RULES[c].level},
        "properties": {"tags": [FAMILY_TAGS[c[:2]]]},
    } for c in codes]
    seen: dict = {}
    elsewhere: dict = {}
    for r in results:
        for w in r.wrapper_info:
            elsewhere.setdefault((r.path, w.name), (*relative_uri(r.path, root), w.line))
    sarif_results = [x for r in results for x in _sarif_results(r, root, index, seen, elsewhere)]
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "kbt-audit", "version": __version__,
                                "informationUri": "https://gitcode.com/cann/pypto-gym", "rules": rules}},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
            "columnKind": "unicodeCodePoints",
            "properties": {"policy": _policy(results)},
            "results": sarif_results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


REPORTERS = {"text": text_report, "json": json_report, "sarif": sarif_report}
