"""Audit one source text or file: parse with ``ast`` (never import, never run), walk each
wrapper, apply the ``# kbt: ignore`` waivers, and report a helper's line once with every
wrapper that reaches it.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path

from kb_tools.audit.checker import WrapperAudit
from kb_tools.audit.codes import RULES
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.kinds import is_tensor
from kb_tools.audit.module import DEFAULT_WRAPPER_GLOB, ModuleInfo
from kb_tools.audit.suppress import suppressions
from kb_tools.diagnostics import EXIT_USAGE, fail
from kb_tools.files.text import read_text

# A wrapper file is a few kilobytes; anything this large is not one (and is refused clearly).
MAX_AUDIT_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int  # 1-based
    col: int  # 1-based, in characters
    code: str
    message: str
    wrapper: str | None  # the first wrapper (by line) that reaches this line
    also: tuple[str, ...] = ()  # the other wrappers that reach it (a shared helper)
    helper: str | None = None  # the helper the line sits in, None when in a wrapper itself

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    @property
    def fix(self) -> str:
        return RULES[self.code].fix

    @property
    def wrappers(self) -> tuple[str, ...]:
        return ((self.wrapper,) if self.wrapper else ()) + self.also

    def to_json(self) -> dict:
        return {"path": self.path, "line": self.line, "col": self.col, "code": self.code,
                "message": self.message, "wrapper": self.wrapper, "fix": self.fix}


@dataclass(frozen=True)
class Wrapper:
    path: str
    name: str
    line: int
    launches: int  # the most launches on any path that returns normally (2: two or more)

    def to_json(self) -> dict:
        return {"path": self.path, "name": self.name, "line": self.line, "launches": self.launches}


@dataclass
class AuditResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    suppressed: list[Finding] = field(default_factory=list)
    wrapper_info: list[Wrapper] = field(default_factory=list)
    source_lines: dict[int, str] = field(default_factory=dict)  # the text of each reported line
    roles: frozenset[str] | None = None  # impl/golden/test when the families ran (kb_tools/audit/roles.py)
    note: str | None = None  # one line when the file's role cannot be told

    @property
    def wrappers(self) -> list[str]:
        return [w.name for w in self.wrapper_info]


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


def _is_wrapper(module: ModuleInfo, fn, audit: WrapperAudit) -> bool:
    """A ``*_wrapper`` is a wrapper by convention. Any other function chosen by name is one
    when it launches or does tensor work on the host; one that only computes Python values
    (``block_size_forward``) is a helper."""
    if fnmatchcase(fn.name, DEFAULT_WRAPPER_GLOB):
        return True
    return bool(module.launches(fn) or audit.launch_sites or audit.findings or any(is_tensor(k) for k in audit.returns))


def audit_source(text: str, path: str = "<source>", *, wrapper_patterns=(), launchers=(),
                 select: set[str] | None = None, families=None) -> AuditResult:
    """Findings for one source text. A syntax error raises KbError (exit 2) with its position.
    ``families`` (a ``FamilyOptions``) adds the golden, test and kernel rules on the same tree."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        col = f", column {exc.offset}" if exc.offset else ""
        fail(path, exc.lineno, "AU010", f"cannot parse: {exc.msg} (line {exc.lineno}{col})", EXIT_USAGE)
    except (ValueError, RecursionError, MemoryError) as exc:
        fail(path, None, "AU010", f"cannot parse: {type(exc).__name__}", EXIT_USAGE)
    module = ModuleInfo(tree, wrapper_patterns, launchers, text=text)
    # One finding per (line, column, code), with every wrapper that reaches it; a line that
    # is its own wrapper's is told without "in helper" even when another wrapper calls it.
    reached: dict[tuple, tuple[RawFinding, list[str]]] = {}
    result = AuditResult(path)
    for fn in module.wrappers:
        try:
            audit = WrapperAudit(module, fn)
        except RecursionError:
            fail(path, fn.lineno, "AU013", f"`{fn.name}` is nested too deeply to audit", EXIT_USAGE)
        if not _is_wrapper(module, fn, audit):
            continue
        result.wrapper_info.append(Wrapper(path, fn.name, fn.lineno, audit.most_launches))
        raw = list(audit.findings)
        if not module.launches(fn) and not audit.launch_sites:
            hint = "" if module.launchers else " (no kernel is defined in this file; name an imported one with --launcher)"
            raw.append(RawFinding(fn.lineno, fn.col_offset, "WB109", f"wrapper `{fn.name}` launches no kernel{hint}"))
        for f in raw:
            key = (f.line, f.col, f.code)
            first, names = reached.setdefault(key, (f, []))
            if fn.name in names:
                continue
            if f.helper is None:  # the line is this wrapper's own: it comes first
                reached[key] = (f, names)
                names.insert(0, fn.name)
            else:
                names.append(fn.name)
    kernels = module.pl_kernels
    if result.wrapper_info:  # a file that delivers a wrapper delivers one @pl.jit kernel
        for extra in kernels[1:]:
            reached[(extra.lineno, extra.col_offset, "WB111")] = (RawFinding(
                extra.lineno, extra.col_offset, "WB111",
                f"second @pl.jit kernel `{extra.name}` in this file (the first is `{kernels[0].name}`)"), [])
    if families is not None:
        from kb_tools.audit.families import family_findings

        result.roles, beyond, result.note = family_findings(tree, module, path, families, select)
        for f in beyond:
            reached.setdefault((f.line, f.col, f.code), (f, []))
    if not reached:
        return result
    lines = text.splitlines()
    waived = suppressions(text)
    select = set(RULES) if select is None else select
    for key in sorted(reached):
        f, names = reached[key]
        if f.code not in select:
            continue
        finding = Finding(path, f.line, _char_col(lines, f.line, f.col), f.code, f.message,
                          names[0] if names else None, tuple(names[1:]), f.helper)
        result.source_lines[f.line] = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        (result.suppressed if f.code in waived.get(f.line, ()) else result.findings).append(finding)
    return result


def audit_path(path: Path | str, **options) -> AuditResult:
    """Read a file (one clear error if it cannot be used) and audit it; never imports it.
    An empty file holds no wrapper and is fine."""
    shown = str(path)
    text = read_text(Path(path), code_prefix="AU", limit=MAX_AUDIT_BYTES)
    return audit_source(text, shown, **options)
