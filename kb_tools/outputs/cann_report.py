"""One report for a whole CANN operator repository: per operator its facts (``kbt spec``'s),
its findings (``kbt audit``'s, on every Python file in its folder) and its coverage, totals per
category, worst offenders first; written as JSON, Markdown and HTML. The repository is read in
one run (``kb_tools.audit.cann_repository``).
"""

from __future__ import annotations

import html
import json
from pathlib import Path, PurePosixPath

from kb_tools.audit.codes import RULES
from kb_tools.cann.folder import GOLDEN, find_operators
from kb_tools.audit.cann_repository import read_repository

REPORT_NAMES = ("cann-report.json", "cann-report.md", "cann-report.html")


def is_cann_repository(path: Path) -> bool:
    """True when ``path`` holds operator folders in the CANN layout (op_host + tests/assets/golden.py).
    Found by the operator walk, which stops at each operator folder (a walk of every folder for
    golden.py took 0.1 s on ops-math, before the report itself began)."""
    return path.is_dir() and any((f / GOLDEN).is_file() and not (f / GOLDEN).is_symlink() for f in find_operators(path))


def _relative(path: str, root: Path) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return path


def _finding(f, root: Path) -> dict:
    return {"path": _relative(f.path, root), "line": f.line, "col": f.col, "code": f.code,
            "severity": RULES[f.code].level, "message": f.message, "fix": f.fix}


def _owner(rel: str, folders: set[str]) -> str | None:
    """The operator folder a file (relative to the root) lies in, None outside every one: the
    nearest of its folders that is one."""
    return next((f for f in (p.as_posix() for p in PurePosixPath(rel).parents) if f in folders), None)


def _once(read: list[str], unusable: list[str]) -> list[str]:
    """The folder's problem lines, a file the audit could not use said once (by the audit), not
    again by the facts' reading of the same ``path:line``."""
    said = {line.split(": ", 1)[0] for line in unusable}
    return [p for p in read if p.split(": ", 1)[0] not in said] + unusable


def build_report(root: Path, *, jobs: int | None = None, progress=None) -> dict:
    """The report's data: operators worst first, totals per category, and the findings in files
    outside every operator folder."""
    reading = read_repository(root, jobs=jobs, progress=progress)
    folders = {f.folder for f in reading.facts}
    findings: dict[str | None, list[dict]] = {}
    for result in reading.results:
        rel = _relative(result.path, root)
        findings.setdefault(_owner(rel, folders), []).extend(_finding(f, root) for f in result.findings)
    unusable: dict[str | None, list[str]] = {}
    for diagnostic in reading.errors:
        unusable.setdefault(_owner(_relative(diagnostic.path, root), folders), []).append(str(diagnostic))
    rows = []
    for facts in reading.facts:
        own = findings.get(facts.folder, [])
        rows.append({
            "op": facts.op, "folder": facts.folder,
            "category": facts.folder.split("/")[0] if "/" in facts.folder else ".",
            "facts": {k: v for k, v in facts.as_json().items() if k not in ("op", "folder")},
            "mode": facts.mode,
            "findings": own,
            "errors": sum(f["severity"] == "error" for f in own),
            "warnings": sum(f["severity"] == "warning" for f in own),
            "problems": _once(facts.problems, unusable.get(facts.folder, [])),
        })
    rows.sort(key=lambda r: (-r["errors"], -r["warnings"], r["folder"]))
    totals: dict[str, dict] = {}
    for row in rows:
        t = totals.setdefault(row["category"], {"operators": 0, "with_findings": 0, "errors": 0, "warnings": 0,
                                                "three_party": 0, "uncovered": 0, "untested": 0, "problems": 0})
        t["operators"] += 1
        t["with_findings"] += bool(row["findings"])
        t["errors"] += row["errors"]
        t["warnings"] += row["warnings"]
        t["three_party"] += row["facts"]["three_party"]
        t["uncovered"] += bool(row["facts"]["uncovered"])
        t["untested"] += bool(row["facts"]["untested"])
        t["problems"] += bool(row["problems"])
    return {"root": root.as_posix(), "operators": rows, "categories": dict(sorted(totals.items())),
            "outside": {"findings": findings.get(None, []), "problems": unusable.get(None, [])},
            "unusable": len(reading.errors)}


def said(f: dict) -> str:
    """A finding's message with its fix, once (a CANN golden's message carries its own)."""
    return f["message"] if "Fix:" in f["message"] else f"{f['message']}. Fix: {f['fix']}"


def _named(row: dict) -> str:
    """The operator as a table names it: its folder under the root, or its name when the root is it."""
    return row["op"] if row["folder"] == "." else row["folder"]


def _listed(values: list[str]) -> str:
    return ", ".join(values) or "-"


def to_markdown(report: dict) -> str:
    lines = [f"# Operator report: {report['root']}", "", "## Totals per category", "",
             "| category | operators | with findings | errors | warnings | three-party | uncovered | untested | problems |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, t in report["categories"].items():
        lines.append(f"| {name} | {t['operators']} | {t['with_findings']} | {t['errors']} | {t['warnings']} "
                     f"| {t['three_party']} | {t['uncovered']} | {t['untested']} | {t['problems']} |")
    lines += ["", "## Operators, worst first", "",
              "| operator | mode | dtypes | uncovered | untested | golden | errors | warnings |",
              "| --- | --- | --- | --- | --- | --- | ---: | ---: |"]
    for row in report["operators"]:
        facts = row["facts"]
        lines.append(f"| {_named(row)} | {row['mode']} | {_listed(facts['dtypes'])} | {_listed(facts['uncovered'])} "
                     f"| {_listed(facts['untested'])} | {facts['golden_framework']} | {row['errors']} | {row['warnings']} |")
    lines += ["", "## Findings and problems", ""]
    for row in report["operators"]:
        lines += [f"- {p}" for p in row["problems"]]
        lines += [f"- `{f['path']}:{f['line']}` {f['code']} ({f['severity']}): {said(f)}" for f in row["findings"]]
    outside = report["outside"]
    if outside["findings"] or outside["problems"]:
        lines += ["", "## Outside every operator folder", ""]
        lines += [f"- {p}" for p in outside["problems"]]
        lines += [f"- `{f['path']}:{f['line']}` {f['code']} ({f['severity']}): {said(f)}" for f in outside["findings"]]
    return "\n".join(lines) + "\n"


def to_html(report: dict) -> str:
    esc = html.escape
    out = ["<!doctype html><html><head><meta charset='utf-8'><title>Operator report</title></head><body>",
           f"<h1>Operator report: {esc(report['root'])}</h1><h2>Totals per category</h2><table>",
           "<tr><th>category</th><th>operators</th><th>with findings</th><th>errors</th><th>warnings</th>"
           "<th>uncovered</th><th>untested</th></tr>"]
    for name, t in report["categories"].items():
        out.append(f"<tr><td>{esc(name)}</td><td>{t['operators']}</td><td>{t['with_findings']}</td>"
                   f"<td>{t['errors']}</td><td>{t['warnings']}</td><td>{t['uncovered']}</td><td>{t['untested']}</td></tr>")
    out.append("</table><h2>Operators, worst first</h2><table><tr><th>operator</th><th>mode</th><th>uncovered</th>"
               "<th>errors</th><th>warnings</th><th>findings and problems</th></tr>")
    for row in report["operators"]:
        items = "".join(f"<li>{esc(p)}</li>" for p in row["problems"])
        items += "".join(f"<li><code>{esc(f['path'])}:{f['line']}</code> {esc(f['code'])}: {esc(said(f))}</li>"
                         for f in row["findings"])
        out.append(f"<tr><td>{esc(_named(row))}</td><td>{esc(row['mode'])}</td>"
                   f"<td>{esc(_listed(row['facts']['uncovered']))}</td><td>{row['errors']}</td><td>{row['warnings']}</td>"
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
