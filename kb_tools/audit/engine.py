"""Audit one source text or file: parse with ``ast`` (never import, never run), walk each
wrapper, apply the launch rules and the ``# kbt: ignore`` waivers.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kb_tools.audit.checker import RawFinding, WrapperAudit
from kb_tools.audit.codes import RULES
from kb_tools.audit.module import ModuleInfo
from kb_tools.audit.suppress import suppressions
from kb_tools.diagnostics import EXIT_USAGE, fail
from kb_tools.textfile import read_text

# A wrapper file is a few kilobytes; anything this large is not one (and is refused clearly).
MAX_AUDIT_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int  # 1-based
    col: int  # 1-based, in characters
    code: str
    message: str
    wrapper: str | None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class AuditResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    wrappers: list[str] = field(default_factory=list)


def select_codes(spec: str | None) -> set[str]:
    """``WB101,WB103`` or a prefix such as ``WB10``; an unknown code is a usage error."""
    if not spec:
        return set(RULES)
    chosen = set()
    for part in (p.strip().upper() for p in spec.split(",") if p.strip()):
        matched = {c for c in RULES if c.startswith(part)}
        if not matched:
            fail("--select", None, "AU020", f"unknown rule code {part!r}; known: {', '.join(sorted(RULES))}", EXIT_USAGE)
        chosen |= matched
    return chosen


def _char_col(lines: list[str], line: int, byte_col: int) -> int:
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if text.isascii():
        return byte_col + 1
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")) + 1


def _launch_findings(module: ModuleInfo, audit: WrapperAudit, fn) -> list[RawFinding]:
    out = []
    name = audit.wrapper
    if not audit.launches:
        hint = "" if module.launchers else " (no @pl.jit or @triton.jit function in this file; name an imported kernel with --launcher)"
        out.append(RawFinding(fn.lineno, fn.col_offset, "WB109", f"wrapper `{name}` launches no kernel{hint}", name))
    for i, launch in enumerate(audit.launches):
        where = f" (in helper `{launch.helper}`, called by wrapper `{name}`)" if launch.helper else ""
        if launch.in_loop:
            out.append(RawFinding(launch.line, launch.col, "WB110", f"launches `{launch.kernel}` inside a loop or comprehension{where}", name))
        if i:
            out.append(RawFinding(launch.line, launch.col, "WB109",
                                  f"launch #{i + 1} of the wrapper (`{launch.kernel}`); a wrapper launches exactly one kernel once{where}", name))
    return out


def audit_source(text: str, path: str = "<source>", *, wrapper_pattern: str = "*_wrapper", launchers=(),
                 select: set[str] | None = None) -> AuditResult:
    """Findings for one source text. A syntax error raises KbError (exit 2) with its position."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        col = f", column {exc.offset}" if exc.offset else ""
        fail(path, exc.lineno, "AU010", f"cannot parse: {exc.msg} (line {exc.lineno}{col})", EXIT_USAGE)
    module = ModuleInfo(tree, wrapper_pattern, launchers)
    raw: list[RawFinding] = []
    for extra in module.pl_kernels[1:]:
        raw.append(RawFinding(extra.lineno, extra.col_offset, "WB111",
                              f"second @pl.jit kernel `{extra.name}` in this file (the first is `{module.pl_kernels[0].name}`)", None))
    result = AuditResult(path, wrappers=[fn.name for fn in module.wrappers])
    for fn in module.wrappers:
        audit = WrapperAudit(module, fn)
        raw.extend(audit.findings)
        raw.extend(_launch_findings(module, audit, fn))
    if not raw:
        return result
    lines = text.splitlines()
    waived = suppressions(text)
    select = set(RULES) if select is None else select
    for f in sorted(set(raw), key=lambda r: (r.line, r.col, r.code)):
        if f.code not in select:
            continue
        finding = Finding(path, f.line, _char_col(lines, f.line, f.col), f.code, f.message, f.wrapper)
        (result.suppressed if f.code in waived.get(f.line, ()) else result.findings).append(finding)
    return result


def audit_path(path: Path | str, **options) -> AuditResult:
    """Read a file (one clear error if it cannot be used) and audit it; never imports it."""
    shown = str(path)
    text = read_text(Path(path), code_prefix="AU", limit=MAX_AUDIT_BYTES)
    if not text.strip():
        fail(shown, None, "AU011", "empty file: there is no wrapper to audit", EXIT_USAGE)
    return audit_source(text, shown, **options)
