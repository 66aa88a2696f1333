"""One report for a whole CANN operator repository: per operator facts, golden findings and
coverage, totals per category, worst offenders first; written as JSON, Markdown and HTML.

The facts here are the ones the golden rules read (entries, case mode, criteria, the kernel's
widening, registered float dtypes); each row says where its golden and kernel facts came from.
"""

from __future__ import annotations

import ast
import html
import json
from dataclasses import asdict
from pathlib import Path

from kb_tools.cann.golden_flow import GOLDEN, golden_files, judge_golden, kernel_facts
from kb_tools.cann.golden_reach import GoldenModule, entries

REPORT_NAMES = ("cann-report.json", "cann-report.md", "cann-report.html")


def is_cann_repository(path: Path) -> bool:
    """True when ``path`` holds operator folders in the CANN layout (op_host + tests/assets/golden.py)."""
    return path.is_dir() and any((g.parents[2] / "op_host").is_dir() for g in golden_files(path))


def _operator_row(root: Path, golden: Path) -> dict:
    folder = golden.parents[2]
    rel_folder = folder.relative_to(root).as_posix() or "."
    rel_golden = (Path(rel_folder) / GOLDEN).as_posix()
    findings, error = judge_golden(golden, rel_golden)
    kernel = kernel_facts(folder, rel_folder)
    row = {
        "op": folder.name,
        "folder": rel_folder,
        "category": rel_folder.split("/")[0] if "/" in rel_folder else ".",
        "registered_floats": sorted(kernel.float_dtypes),
        "kernel_widening": kernel.widening,
        "kernel_widening_at": kernel.widening_at,
        "entries": [],
        "coverage": {},
        "findings": [asdict(f) for f in findings],
        "errors": sum(f.severity == "error" for f in findings),
        "warnings": sum(f.severity == "warning" for f in findings),
        "unreadable": error,
    }
    if error is None:
        mod = GoldenModule(ast.parse(golden.read_bytes().decode("utf-8", "replace").lstrip("\ufeff")))
        for entry in entries(mod, folder.name):
            row["entries"].append({"role": entry.role, "key": entry.key, "mode": entry.mode,
                                   "criteria": {d: s for d, (s, _) in entry.criteria.items()},
                                   "at": f"{rel_golden}:{entry.line}"})
        declared = {d for e in row["entries"] if e["role"] == "golden" for d in e["criteria"]}
        row["coverage"] = {
            "uncovered_floats": sorted(kernel.float_dtypes - declared) if declared else [],
            "default_criterion": not declared,
        }
    return row


def build_report(root: Path) -> dict:
    """The report's data: operators worst first, totals per category."""
    rows = [_operator_row(root, g) for g in golden_files(root)]
    rows.sort(key=lambda r: (-r["errors"], -r["warnings"], r["folder"]))
    totals: dict[str, dict] = {}
    for row in rows:
        t = totals.setdefault(row["category"], {"operators": 0, "with_findings": 0, "errors": 0, "warnings": 0,
                                                "unreadable": 0, "three_party": 0})
        t["operators"] += 1
        t["with_findings"] += bool(row["findings"])
        t["errors"] += row["errors"]
        t["warnings"] += row["warnings"]
        t["unreadable"] += row["unreadable"] is not None
        t["three_party"] += any(e["mode"] == "three_party" for e in row["entries"])
    return {"root": root.as_posix(), "operators": rows, "categories": dict(sorted(totals.items()))}


def to_markdown(report: dict) -> str:
    lines = [f"# Golden report: {report['root']}", "", "## Totals per category", "",
             "| category | operators | with findings | errors | warnings | three-party | unreadable |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, t in report["categories"].items():
        lines.append(f"| {name} | {t['operators']} | {t['with_findings']} | {t['errors']} | {t['warnings']} "
                     f"| {t['three_party']} | {t['unreadable']} |")
    lines += ["", "## Operators, worst first", "",
              "| operator | modes | kernel widening | uncovered floats | errors | warnings |",
              "| --- | --- | --- | --- | ---: | ---: |"]
    for row in report["operators"]:
        modes = ", ".join(sorted({e["mode"] for e in row["entries"] if e["role"] == "golden"})) or "-"
        uncovered = ", ".join(row["coverage"].get("uncovered_floats", [])) or "-"
        lines.append(f"| {row['folder']} | {modes} | {row['kernel_widening']} | {uncovered} "
                     f"| {row['errors']} | {row['warnings']} |")
    lines += ["", "## Findings", ""]
    for row in report["operators"]:
        if row["unreadable"]:
            lines.append(f"- {row['unreadable']}")
        for f in row["findings"]:
            lines.append(f"- `{f['path']}:{f['line']}` {f['code']} ({f['severity']}): {f['message']}. Fix: {f['fix']}")
    return "\n".join(lines) + "\n"


def to_html(report: dict) -> str:
    esc = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>Golden report</title></head><body>",
           f"<h1>Golden report: {esc(report['root'])}</h1><h2>Totals per category</h2><table>",
           "<tr><th>category</th><th>operators</th><th>with findings</th><th>errors</th><th>warnings</th></tr>"]
    for name, t in report["categories"].items():
        out.append(f"<tr><td>{esc(name)}</td><td>{t['operators']}</td><td>{t['with_findings']}</td>"
                   f"<td>{t['errors']}</td><td>{t['warnings']}</td></tr>")
    out.append("</table><h2>Operators, worst first</h2><table><tr><th>operator</th><th>errors</th><th>warnings</th>"
               "<th>findings</th></tr>")
    for row in report["operators"]:
        items = "".join(f"<li><code>{esc(f['path'])}:{f['line']}</code> {esc(f['code'])}: {esc(f['message'])}. "
                        f"Fix: {esc(f['fix'])}</li>" for f in row["findings"])
        out.append(f"<tr><td>{esc(row['folder'])}</td><td>{row['errors']}</td><td>{row['warnings']}</td>"
                   f"<td><ul>{items}</ul></td></tr>")
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"


def write_report(report: dict, output: Path) -> list[Path]:
    """Write the three files under ``output`` together (umask modes; a FIFO or a file in the
    way is one line, exit 2, and nothing there is touched)."""
    from kb_tools.files.jsonio import make_folder, write_together

    make_folder(output)
    texts = (json.dumps(report, indent=1, sort_keys=True) + "\n", to_markdown(report), to_html(report))
    return write_together([(output / name, text) for name, text in zip(REPORT_NAMES, texts)])
