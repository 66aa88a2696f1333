"""The audit's three output formats: text lines, a JSON list, and SARIF 2.1.0.

SARIF rule ids are the fixed WB codes, so a code-scanning service keeps a finding's history
across runs; suppressed findings travel in SARIF as ``inSource`` suppressions.
"""

from __future__ import annotations

import json

from kb_tools import __version__
from kb_tools.audit.codes import RULES
from kb_tools.audit.engine import AuditResult

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def text_report(results: list[AuditResult]) -> str:
    """One ``path:line:col: CODE message`` line per finding, then the suppression summary."""
    lines = [str(f) for r in results for f in r.findings]
    suppressed = [f for r in results for f in r.suppressed]
    if suppressed:
        lines.append(f"suppressed by `# kbt: ignore[...]` ({len(suppressed)}):")
        lines.extend(f"  {f}" for f in suppressed)
    return "\n".join(lines)


def json_report(results: list[AuditResult]) -> str:
    return json.dumps([f.to_json() for r in results for f in r.findings], indent=2, ensure_ascii=False)


def _sarif_result(f, index: dict[str, int], suppressed: bool) -> dict:
    out = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": "error",
        "message": {"text": f.message + (f" [wrapper `{f.wrapper}`]" if f.wrapper else "")},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": f.path.replace("\\", "/")},
            "region": {"startLine": f.line, "startColumn": f.col},
        }}],
    }
    if suppressed:
        out["suppressions"] = [{"kind": "inSource", "justification": f"# kbt: ignore[{f.code}]"}]
    return out


def sarif_report(results: list[AuditResult]) -> str:
    codes = sorted(RULES)
    index = {c: i for i, c in enumerate(codes)}
    rules = [{
        "id": c,
        "name": RULES[c].name,
        "shortDescription": {"text": RULES[c].summary},
        "help": {"text": RULES[c].fix or RULES[c].summary},
        "defaultConfiguration": {"level": "error"},
        "properties": {"tags": ["wrapper-boundary"]},
    } for c in codes]
    sarif_results = [_sarif_result(f, index, False) for r in results for f in r.findings]
    sarif_results += [_sarif_result(f, index, True) for r in results for f in r.suppressed]
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "kbt-audit", "version": __version__,
                                "informationUri": "https://gitcode.com/cann/pypto-gym", "rules": rules}},
            "columnKind": "unicodeCodePoints",
            "results": sarif_results,
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


REPORTERS = {"text": text_report, "json": json_report, "sarif": sarif_report}
