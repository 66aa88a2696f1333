"""Audit one source text or file: parse with ``ast`` (never import, never run), walk each
wrapper, apply the ``# kbt: ignore`` waivers, and report a helper's line once with every
wrapper that reaches it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from pathlib import Path

from kb_tools.audit import reach
from kb_tools.audit.checker import WrapperAudit
from kb_tools.audit.codes import RULES, SELECT_EXAMPLE
from kb_tools.audit.family_context import one_run
from kb_tools.audit.findings import RawFinding
from kb_tools.audit.kinds import is_tensor
from kb_tools.audit.module import DEFAULT_WRAPPER_GLOB, ModuleInfo
from kb_tools.audit.package import Parsed
from kb_tools.audit.policies import DEFAULT_POLICY, POLICIES, Policy, strict_only
from kb_tools.audit.rules import wb109_launch_count as wb109, wb111_multiple_jit_kernels as wb111
from kb_tools.audit.suppress import suppressions
from kb_tools.diagnostics import EXIT_USAGE, fail
from kb_tools.files.text import read_text

# A wrapper file is a few kilobytes; anything this large is not one (and is refused clearly).
MAX_AUDIT_BYTES = 2 * 1024 * 1024
# Python's parser holds about half a kilobyte per token while it builds the tree, so a file of
# short tokens under the byte limit (a 1.8 MB list literal: 1.8 million tokens) took 900 MB.
# Real code has about 0.3 tokens per byte; 300,000 tokens is 1 MB of it. At 450,000 a list literal
# audited at 357 MB peak; at 298,000 it is 256 MB (repro hostile-4/07, /usr/bin/time), under 300 MB.
MAX_AUDIT_TOKENS = 300_000
_TOKEN = re.compile(r"\w+|[^\w\s]")
STRICT_ONLY = " [strict policy: the lenient readings let this pass]"


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
    homes: tuple[str, ...] = ()  # the file of each wrapper in ``wrappers`` (a helper's may be another's)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"

    @property
    def fix(self) -> str:
        return RULES[self.code].fix

    @property
    def wrappers(self) -> tuple[str, ...]:
        return ((self.wrapper,) if self.wrapper else ()) + self.also

    @property
    def reached_from(self) -> tuple[tuple[str, str], ...]:
        """(file, name) of each wrapper reaching the line: names alone repeat across files."""
        return tuple(zip(self.homes or (self.path,) * len(self.wrappers), self.wrappers))

    def to_json(self) -> dict:
        doc = {"path": self.path, "line": self.line, "col": self.col, "code": self.code,
               "message": self.message, "wrapper": self.wrapper, "fix": self.fix}
        if self.also:  # a helper's line reached from several wrappers
            doc["also"] = list(self.also)
        return doc


@dataclass(frozen=True)
class Placed:
    """A finding placed in its file: whether a waiver there covers it, and its line's text."""
    finding: Finding
    suppressed: bool
    source: str


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
    starred: tuple[str, ...] = ()  # "file:line" of each star import a wrapper's call may come from (not followed)
    unfollowed: tuple[str, ...] = ()  # "file:line `callee` (why)" of each helper call the walk did not follow
    policy: str = DEFAULT_POLICY  # the reading the findings were made under (kb_tools/audit/policies.py)

    @property
    def wrappers(self) -> list[str]:
        return [w.name for w in self.wrapper_info]

    def add_reached(self, placed: list[Placed]) -> None:
        """Findings on this file's lines, from its own wrappers or from another file's that
        reach a helper here: one per (line, column, code), the wrappers reaching it merged
        (a line that is its own wrapper's keeps that wrapper first)."""
        if not placed:
            return
        index = {(f.line, f.col, f.code): (f, False) for f in self.findings}
        index.update({(f.line, f.col, f.code): (f, True) for f in self.suppressed})
        for p in placed:
            f = p.finding
            key = (f.line, f.col, f.code)
            self.source_lines[f.line] = p.source
            if key not in index:
                index[key] = (f, p.suppressed)
                continue
            old, waived = index[key]
            mine, theirs = (f, old) if f.helper is None and old.helper is not None else (old, f)
            first = mine.reached_from  # built once: a helper's line may be reached from hundreds of wrappers
            known = set(first)
            pairs = list(first) + [p for p in theirs.reached_from if p not in known]
            index[key] = (replace(mine, wrapper=pairs[0][1] if pairs else None, also=tuple(n for _, n in pairs[1:]),
                                  homes=tuple(h for h, _ in pairs)), waived)
        ordered = [index[k] for k in sorted(index)]
        self.findings = [f for f, waived in ordered if not waived]
        self.suppressed = [f for f, waived in ordered if waived]


def select_codes(spec: str | None) -> set[str]:
    """Codes (``XX101,XX103``) or prefixes (``XX10``); an unknown code is a usage error, and so
    is a --select that names no code at all (``''``, ``,,``): it would check nothing."""
    if spec is None:
        return set(RULES)
    if not any(p.strip() for p in spec.split(",")):
        fail("--select", None, "AU020", f"names no rule code ({spec!r}); give codes or prefixes such as {SELECT_EXAMPLE}, "
             "or leave the option out to check every rule", EXIT_USAGE)
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


def parse_source(text: str, path: str, *, wrapper_patterns=(), launchers=(), name: str | None = None) -> Parsed:
    """Parse and index one module (never import it). A syntax error raises KbError (exit 2)
    with its position, and so does a file of more tokens than the parser is given."""
    # Counted only when it could matter: a match is at least one character, so a text shorter
    # than the limit cannot exceed it (the count was a quarter of the audit's time on 4,000 files).
    short = len(text) + text.count("\n") <= MAX_AUDIT_TOKENS
    tokens = 0 if short else sum(1 for _ in _TOKEN.finditer(text)) + text.count("\n")  # Python's count or more
    if tokens > MAX_AUDIT_TOKENS:
        fail(path, None, "AU011", f"about {tokens} tokens, over the {MAX_AUDIT_TOKENS} the audit parses (a generated "
             "file? leave it out with --exclude)", EXIT_USAGE)
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        col = f", column {exc.offset}" if exc.offset else ""
        fail(path, exc.lineno, "AU010", f"cannot parse: {exc.msg} (line {exc.lineno}{col})", EXIT_USAGE)
    except (ValueError, RecursionError, MemoryError) as exc:
        fail(path, None, "AU010", f"cannot parse: {type(exc).__name__}", EXIT_USAGE)
    info = ModuleInfo(tree, wrapper_patterns, launchers, text=text)
    return Parsed(path, name or Path(path).stem, text, tree, info)


def parse_file(path: Path, name: str | None = None, **options) -> Parsed:
    """Read a file (one clear error if it cannot be used) and parse it."""
    text = read_text(path, code_prefix="AU", limit=MAX_AUDIT_BYTES)
    return parse_source(text, str(path), name=name, **options)


def audit_source(text: str, path: str = "<source>", *, wrapper_patterns=(), launchers=(), **options) -> AuditResult:
    """Findings for one source text, read alone. ``families`` (a ``FamilyOptions``) adds the
    golden, test and kernel rules on the same tree; ``policy`` names the reading (``policies``)."""
    parsed = parse_source(text, path, wrapper_patterns=wrapper_patterns, launchers=launchers)
    return audit_parsed(parsed, None, **options)[0]


Reached = dict[tuple, tuple[RawFinding, list[tuple[str, str]]]]  # (line, col, code) -> the finding, (file, wrapper) reaching it


def _reach(reached: Reached, f: RawFinding, wrapper: tuple[str, str]) -> None:
    """One finding per (line, column, code), with every wrapper that reaches it; a line that
    is its own wrapper's is told without "in helper" even when another wrapper calls it."""
    key = (f.line, f.col, f.code)
    first, names = reached.setdefault(key, (f, []))
    if wrapper in names:
        return
    if f.helper is None:  # the line is this wrapper's own: it comes first
        reached[key] = (f, names)
        names.insert(0, wrapper)
    else:
        names.append(wrapper)


def audit_parsed(parsed: Parsed, tree, *, select: set[str] | None = None, families=None,
                 policy: str | None = None) -> tuple[AuditResult, dict[str, list[Placed]], set[str]]:
    """(the module's result, the findings its wrappers reach in other modules of ``tree`` by
    path, the modules outside the tree its wrappers call). ``tree`` is a ``package.Tree``,
    or None to read the module alone."""
    path, module = parsed.path, parsed.info
    chosen = POLICIES[policy or DEFAULT_POLICY]
    reached: Reached = {}
    elsewhere: dict[str, Reached] = {}
    opaque: set[str] = set()
    starred: set[tuple[str | None, int]] = set()
    unfollowed: set[tuple[str | None, int, str, str]] = set()
    result = AuditResult(path, policy=chosen.name)
    for fn, launches in reach.wrappers(parsed, tree):
        try:
            audit = WrapperAudit(module, fn, tree, parsed if tree is not None else None, launches=launches)
        except RecursionError:
            fail(path, fn.lineno, "AU013", f"`{fn.name}` is nested too deeply to audit", EXIT_USAGE)
        if not (launches or _is_wrapper(module, fn, audit)):
            continue
        result.wrapper_info.append(Wrapper(path, fn.name, fn.lineno, audit.most_launches))
        opaque |= audit.opaque
        starred |= audit.starred
        unfollowed |= audit.unfollowed
        raw = list(audit.findings)
        if not launches and not audit.launch_sites:
            hint = "" if module.launchers else " (no kernel is defined in this file; name an imported one with --launcher)"
            raw.append(RawFinding(fn.lineno, fn.col_offset, *wb109.no_launch(fn.name, hint)))
        for f in raw:
            _reach(reached if f.path is None else elsewhere.setdefault(f.path, {}), f, (path, fn.name))
    if result.wrapper_info:  # a file that delivers a wrapper delivers one @pl.jit kernel
        for extra in wb111.extra_kernels(module.pl_kernels):
            reached[(extra.line, extra.col, extra.code)] = (extra, [])
    if families is not None:
        from kb_tools.audit.families import family_findings

        result.roles, beyond, result.note = family_findings(parsed.tree, module, path, families, select,
                                                               delivers=bool(result.wrapper_info))
        for f in beyond:
            reached.setdefault((f.line, f.col, f.code), (f, []))
    result.starred = tuple(sorted({f"{where or path}:{line}" for where, line in starred}))
    result.unfollowed = tuple(sorted({f"{where or path}:{line} `{name}` ({why})" for where, line, name, why in unfollowed}))
    result.add_reached(place(path, parsed.text, reached, select, chosen))
    foreign = {}
    for other, found in elsewhere.items():
        owner = tree.module(Path(other))
        foreign[other] = place(other, owner.text, found, select, chosen)
    return result, foreign, opaque


def place(path: str, text: str, reached: Reached, select: set[str] | None, policy: Policy) -> list[Placed]:
    """The findings of one file, in line order, with their columns in characters, whether a
    ``# kbt: ignore`` waives each, and their line's text; those the policy lets pass dropped."""
    if not reached:
        return []
    lines = text.splitlines()
    waived = suppressions(text)
    select = set(RULES) if select is None else select
    out = []
    for key in sorted(reached):
        f, names = reached[key]
        if f.code not in select or policy.allowed(f.code, f.op):
            continue
        message = f.message + (STRICT_ONLY if policy.name == "strict" and strict_only(f.code, f.op) else "")
        finding = Finding(path, f.line, _char_col(lines, f.line, f.col), f.code, message,
                          names[0][1] if names else None, tuple(n for _, n in names[1:]), f.helper,
                          tuple(h for h, _ in names))
        source = lines[f.line - 1] if 0 < f.line <= len(lines) else ""
        out.append(Placed(finding, f.code in waived.get(f.line, ()), source))
    return out


def audit_path(path: Path | str, **options) -> AuditResult:
    """Read a file (one clear error if it cannot be used) and audit it; never imports it.
    An empty file holds no wrapper and is fine."""
    shown = str(path)
    text = read_text(Path(path), code_prefix="AU", limit=MAX_AUDIT_BYTES)
    with one_run():  # what it reads of other files (a local module, a spec) is read for this audit
        return audit_source(text, shown, **options)
