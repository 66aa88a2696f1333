"""``kbt lint``: the KB integrity check.

Each check is a small function that returns how many things it examined and what it found;
a check that examined nothing is reported as such and never counted as passed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from kb_tools.audit.codes import RULES
from kb_tools.contract.specs import load_spec, spec_files
from kb_tools.diagnostics import Diagnostic, KbError, KbErrors, shortened
from kb_tools.kb import vocabulary as V
from kb_tools.kb.facts import fact_drift, load_facts
from kb_tools.kb.repeats import repeat_drift
from kb_tools.kb.values import load_values, value_drift
from kb_tools.kb.glossary import glossary_path, load_glossary, source_problems
from kb_tools.kb.page_code import page_blocks, section_blocks
from kb_tools.kb.pages import BODY_SECTIONS, KnowledgeBase, body_sections, load_kb, shown_path
from kb_tools.kb.router import Task, parse_router
from kb_tools.kb.sources import load_sources, seeds_dir

_NON_DURABLE = re.compile(r"(^|-)(v\d+|\d{6,8}|\d{4}-\d{2}(-\d{2})?|new|old|final|tmp|temp|draft|copy|wip|backup)(-|$)")
# Link text holds no bracket: with [^\]]* a run of 100,000 '[' was rescanned from each one (quadratic).
_MD_LINK = re.compile(r"(?<!!)\[[^\[\]\n]*\]\(([^)\s]+)\)")


@dataclass
class LintContext:
    root: Path
    kb: KnowledgeBase
    tasks: list[Task] = field(default_factory=list)
    load_diags: list[Diagnostic] = field(default_factory=list)

    @cached_property
    def values(self) -> tuple[list | None, list[Diagnostic]]:
        """kb/values.yaml, read once for the two checks that need it: (its values, the
        diagnostics of a broken file)."""
        return _loaded(load_values, self.kb.kb_dir)


@dataclass
class CheckResult:
    name: str
    examined: int
    diagnostics: list[Diagnostic]

    @property
    def status(self) -> str:
        if self.examined == 0:
            return "examined nothing"
        return "failed" if any(d.severity == "error" for d in self.diagnostics) else "passed"


def _loaded(load, *args):
    """What ``load(*args)`` returns, and the diagnostics it raised instead: a check reports a
    broken file as findings, never as an exception."""
    try:
        return load(*args), []
    except KbErrors as exc:
        return None, exc.diagnostics
    except KbError as exc:
        return None, [exc.diagnostic]


def _page_loc(page, key=None):
    return shown_path(page.path), page.lines.get(key) if key else None


def check_front_matter(ctx):
    n = len(ctx.kb.pages) + len({d.path for d in ctx.kb.diagnostics})
    return n, list(ctx.kb.diagnostics)


def check_router(ctx):
    diags = list(ctx.load_diags)
    for task in ctx.tasks:
        for ref in task.references:
            if not ctx.kb.exists(ref):
                diags.append(Diagnostic(shown_path(ctx.root / "ROUTER.md"), task.line, "LN010", f"task {task.id!r} points to {ref}, which is not a page"))
    return len(ctx.tasks), diags


def check_reachable(ctx):
    routed = {ref for t in ctx.tasks for ref in t.references}
    index = ctx.kb.kb_dir / "README.md"
    indexed = set()
    if index.is_file():
        indexed = {m.removeprefix("./") for m in _MD_LINK.findall(index.read_text("utf-8", errors="replace"))}
    diags = []
    for page in ctx.kb.pages.values():
        r = page.routing
        selectable = bool(r.mandatory_for) or r.topologies == "all" or bool(r.topologies)
        if page.rel_path not in routed and page.rel_path not in indexed and not selectable:
            diags.append(Diagnostic(*_page_loc(page, "routing"), "LN020", "page is unreachable: no ROUTER.md row, index link or routing field selects it"))
    return len(ctx.kb.pages), diags


def check_body(ctx):
    diags = []
    for page in ctx.kb.pages.values():
        found = body_sections(page.body)
        missing = [s for s in BODY_SECTIONS if s not in found]
        if missing:
            diags.append(Diagnostic(shown_path(page.path), page.body_line, "LN030", f"body lacks section(s): {', '.join(missing)}"))
        elif [s for s in found if s in BODY_SECTIONS] != list(BODY_SECTIONS):
            diags.append(Diagnostic(shown_path(page.path), page.body_line, "LN031", f"body sections out of order; expected {' / '.join(BODY_SECTIONS)}"))
    return len(ctx.kb.pages), diags


def check_invariant_checkers(ctx):
    diags, n = [], 0
    for page in ctx.kb.pages.values():
        for inv in page.invariants:
            n += 1
            path = shown_path(page.path)
            if inv.check == "static" and inv.rule not in RULES:
                diags.append(Diagnostic(path, inv.line, "LN040", f"invariant {inv.id!r} names rule {inv.rule!r}, which the verifier does not define"))
            if inv.check == "runtime":
                missing = _missing(ctx.root / inv.evidence, ctx.root) if inv.evidence else None
                if missing:
                    diags.append(Diagnostic(path, inv.line, "LN041", f"invariant {inv.id!r} evidence {inv.evidence} {missing}"))
                if not inv.evidence and not page.demonstrated_by:
                    diags.append(Diagnostic(path, inv.line, "LN042", f"runtime invariant {inv.id!r} has no evidence and the page no demonstrated_by notebook"))
    return n, diags


def check_rule_codes(ctx):
    """Every audit rule code is enforced by a page (a static invariant names it) and proven
    by fixtures (``<CODE>_bad.py`` and ``<CODE>_good.py`` under tests/fixtures/, where the
    checkout has tests)."""
    named = {i.rule for p in ctx.kb.pages.values() for i in p.invariants if i.check == "static"}
    fixtures = ctx.root / "tests" / "fixtures"
    files = {p.name for p in fixtures.rglob("*.py")} if fixtures.is_dir() else None
    where = shown_path(ctx.root / "kb_tools" / "audit" / "codes.py")
    diags = []
    for code, rule in sorted(RULES.items()):
        if code not in named and not ctx.kb.unloadable:  # a page that failed to load may name it
            diags.append(Diagnostic(where, None, "LN043", f"rule {code} ({rule.name}) is named by no static invariant of any page"))
        missing = [f for f in (f"{code}_bad.py", f"{code}_good.py") if files is not None and f not in files]
        if missing:
            diags.append(Diagnostic(where, None, "LN044", f"rule {code} ({rule.name}) has no fixture {' or '.join(missing)} under tests/fixtures/"))
    from kb_tools.audit.kernel_rules import INVENTORY, read_inventory  # on use: lint imports no audit engine

    try:  # KN103's table: a broken one would switch the rule off without a word
        read_inventory(ctx.root / "kb" / INVENTORY)
    except KbError as exc:
        diags.append(exc.diagnostic)
    return len(RULES), diags


def check_notebooks(ctx):
    diags, n = [], 0
    for page in ctx.kb.pages.values():
        for nb in page.demonstrated_by:
            n += 1
            if not (ctx.root / nb).is_file():
                diags.append(Diagnostic(*_page_loc(page, "demonstrated_by"), "LN050", f"demonstrated_by {nb} does not exist"))
    return n, diags


def check_links(ctx):
    diags, n = [], 0
    for page in ctx.kb.pages.values():
        for offset, line in enumerate(page.body.splitlines()):
            for target in _MD_LINK.findall(line):
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue
                n += 1
                missing = _missing(page.path.parent / target.split("#", 1)[0], ctx.root)
                if missing:
                    diags.append(Diagnostic(shown_path(page.path), page.body_line + offset, "LN060", f"link target {shortened(target)} {missing}"))
        for rel in page.related:
            n += 1
            if rel not in ctx.kb.pages and not any(Path(u).stem == rel for u in ctx.kb.unloadable):
                diags.append(Diagnostic(*_page_loc(page, "related"), "LN061", f"related page {rel!r} does not exist"))
    return n, diags


def _missing(path: Path, root: Path) -> str | None:
    """None when ``path`` exists inside the repository ``root``, else what a link finding says
    about it: a link to /etc/passwd resolves on this machine and is broken everywhere else."""
    from kb_tools.files.confine import OutsideRoot, resolve_inside

    try:
        resolve_inside(root, path)
    except OutsideRoot:
        return "leaves the repository (links followed); link to a file inside it"
    try:
        return None if path.exists() else "does not exist"
    except OSError as exc:  # a name too long to look up cannot be a page
        return f"cannot be looked up ({exc.strerror or exc})"


def check_citations(ctx):
    seeds, broken = _loaded(load_sources, ctx.kb.kb_dir)
    if broken:
        return 1, broken
    here = seeds_dir(ctx.root)
    diags, n = [], 0
    for page in ctx.kb.pages.values():
        for src in page.sources:
            n += 1
            seed = seeds.get(src["seed"])
            where = _page_loc(page, "sources")
            if seed is None:
                diags.append(Diagnostic(*where, "LN070", f"cites unknown seed {src['seed']!r} (see kb/sources.yaml)"))
            elif src["section"] not in seed.sections:
                diags.append(Diagnostic(*where, "LN071", f"cites section {src['section']!r}, which {src['seed']} does not have (see kb/sources.yaml)"))
            elif here is not None and not (here / src["seed"]).is_file():
                diags.append(Diagnostic(*where, "LN072", f"seed file {src['seed']} is not in {here}"))
    return n, diags


def check_file_names(ctx):
    diags = []
    for page in ctx.kb.pages.values():
        if _NON_DURABLE.search(page.path.stem):
            diags.append(Diagnostic(shown_path(page.path), None, "LN080", f"file name {page.path.name!r} is not durable (dates, versions or words like new/final do not belong in it)"))
    return len(ctx.kb.pages), diags


def check_demonstrated(ctx):
    """Every constraint and pattern is demonstrated by a notebook, or its page says why nothing
    of it runs (``undemonstrated``: a procedure, a table of platform facts); lint names those.
    A constraint whose invariants are checked at run time needs the notebook."""
    diags, n = [], 0
    for page in ctx.kb.pages.values():
        if page.kind not in ("constraint", "pattern"):
            continue
        n += 1
        runtime = page.kind == "constraint" and any(i.check == "runtime" for i in page.invariants)
        if page.demonstrated_by and page.undemonstrated:
            diags.append(Diagnostic(*_page_loc(page, "undemonstrated"), "LN092", "page has demonstrated_by notebooks and an undemonstrated reason; keep the one that is true"))
        elif page.demonstrated_by:
            continue
        elif runtime:
            diags.append(Diagnostic(*_page_loc(page, "invariants"), "LN090", "constraint with a runtime claim has no demonstrated_by notebook"))
        elif page.undemonstrated:
            diags.append(Diagnostic(*_page_loc(page, "undemonstrated"), "LN091", f"undemonstrated: {page.undemonstrated}", severity="note"))
        else:
            diags.append(Diagnostic(*_page_loc(page, "demonstrated_by"), "LN093", f"{page.kind} has no demonstrated_by notebook and no undemonstrated reason on the page", severity="warning"))
    return n, diags


def check_page_code(ctx):
    """Every Python block under Do / Don't is run by a test or says why it cannot be
    (kb_tools.kb.page_code); where the checkout has the page-code tests, each tested block
    has its check there (tests/test_kb_page_code.py registers it under the block's key)."""
    tests = ctx.root / "tests" / "test_kb_page_code.py"
    registered = tests.read_text("utf-8", errors="replace") if tests.is_file() else None
    diags, n = [], 0
    for page in ctx.kb.pages.values():
        path = shown_path(page.path)
        n += len(section_blocks(page.body, page.body_line))
        blocks, problems = page_blocks(page, RULES)
        diags += [Diagnostic(path, p.line, p.code, p.message) for p in problems]
        for block in blocks:
            for used in block.uses:  # a page that failed to load has its own finding
                if used not in ctx.kb.pages and used not in {Path(u).stem for u in ctx.kb.unloadable}:
                    diags.append(Diagnostic(path, block.line, "LN134", f"block uses page {used!r}, which does not exist"))
            if block.tested and registered is not None and f'"{block.key}"' not in registered:
                diags.append(Diagnostic(path, block.line, "LN135", f"no test runs this block: {shown_path(tests)} has no check for {block.key!r}"))
    return n, diags


def check_specs(ctx):
    """Operator specs load, each operator class has one spec, and every registered dtype
    declares its criterion (seed 000 §7)."""
    diags, files = [], spec_files(ctx.root / "ops")
    first_of: dict[tuple[str, str], Path] = {}
    for path in files:
        spec, broken = _loaded(load_spec, path)
        if broken:
            diags.extend(broken)
            continue
        first = first_of.setdefault((spec.op, spec.class_id), path)
        if first != path:
            diags.append(Diagnostic(shown_path(path), None, "LN101", f"op {spec.op!r} class {spec.class_id!r} is already specified by "
                                    f"{shown_path(first)}; kbt build writes one folder per class, so give one of them another op or class_id"))
        for dtype in spec.uncovered_dtypes():
            diags.append(Diagnostic(shown_path(path), spec.dtype_lines.get(dtype), "LN100", f"dtype {dtype} has no declared criterion; TTK would judge it by its default {V.undeclared_criterion(dtype)}"))
    return len(files), diags


def _squash(text: str) -> str:
    """Lower-cased with whitespace removed, so that 动态 shape and 动态shape match alike."""
    return re.sub(r"\s+", "", text).lower()


def check_glossary(ctx):
    """Every page the glossary names exists and carries the Chinese term beside the English one,
    every search string of a term is on at least one of the term's pages, and every gloss cites
    a seed section or a public file."""
    terms, broken = _loaded(load_glossary, ctx.root)
    if broken:
        return 1, broken
    shown = shown_path(glossary_path(ctx.root))
    seeds, _ = _loaded(load_sources, ctx.kb.kb_dir)  # a broken sources.yaml is reported by "seed citations"
    sections = {name: set(seed.sections) for name, seed in (seeds or {}).items()}
    texts: dict[str, str] = {}
    diags, n = [], 0
    for term in terms:
        diags.extend(Diagnostic(shown, term.line, "LN114", problem) for problem in source_problems(term, sections))
        for page_id in term.pages:
            n += 1
            page = ctx.kb.pages.get(page_id)
            if page is None and any(Path(u).stem == page_id for u in ctx.kb.unloadable):
                continue  # the page exists but failed to load; front matter reports it
            if page is None:
                diags.append(Diagnostic(shown, term.line, "LN110", f"term {term.zh!r} names page {page_id!r}, which does not exist"))
                continue
            if page_id not in texts:
                texts[page_id] = _squash(page.title + "\n" + page.trigger + "\n" + page.body)
            text = texts[page_id]
            if _squash(term.zh) not in text:
                diags.append(Diagnostic(shown, term.line, "LN111", f"page {page_id!r} does not carry the Chinese term {term.zh!r}"))
            if not any(_squash(name) in text for name in (term.en, *term.aliases)):
                diags.append(Diagnostic(shown, term.line, "LN112", f"page {page_id!r} carries neither {term.en!r} nor an alias of it"))
        for error in term.errors:
            n += 1
            on = [p for p in term.pages if p in texts and _squash(error) in texts[p]]
            if not on and any(p in texts for p in term.pages):
                diags.append(Diagnostic(shown, term.line, "LN113", f"search string {error!r} of term {term.zh!r} is on none of its pages ({', '.join(term.pages)}): a search for it would land on a page without it"))
    return n, diags


def check_facts(ctx):
    """A fact several pages need is stated once, on its home page, and quoted as written there."""
    facts, broken = _loaded(load_facts, ctx.kb.kb_dir)
    if broken:
        return 1, broken
    unloadable = tuple(Path(u).stem for u in ctx.kb.unloadable)
    return len(facts) * len(ctx.kb.pages), fact_drift(ctx.kb.pages, facts, unloadable)


def check_values(ctx):
    """A number, choice or list several places state is stated as its home page states it."""
    values, broken = ctx.values
    if broken:
        return 1, broken
    others = [(shown_path(p), p.read_text(encoding="utf-8")) for p in sorted((ctx.root / "notebooks").glob("*.py"))]
    if (ctx.root / "CONTRACT.md").is_file():
        others.append((shown_path(ctx.root / "CONTRACT.md"), (ctx.root / "CONTRACT.md").read_text(encoding="utf-8")))
    unloadable = tuple(Path(u).stem for u in ctx.kb.unloadable)
    return len(values) * (len(ctx.kb.pages) + len(others)), value_drift(ctx.kb.pages, values, others, unloadable)


def check_repeats(ctx):
    """A significant number two pages state is registered, linked to its home, or declared own.
    With a broken values file it examines nothing: the values check reports the file's errors."""
    values, broken = ctx.values
    if broken:
        return 0, []
    registered = {key for v in values if v.kind == "number" for key in v.value.keys}
    return len(ctx.kb.pages), repeat_drift(ctx.kb.pages, registered)


CHECKS = (
    ("front matter", check_front_matter),
    ("router targets", check_router),
    ("pages reachable", check_reachable),
    ("body sections", check_body),
    ("invariant checkers", check_invariant_checkers),
    ("rule codes enforced and proven", check_rule_codes),
    ("demonstrated_by notebooks", check_notebooks),
    ("links", check_links),
    ("seed citations", check_citations),
    ("durable file names", check_file_names),
    ("runtime claims demonstrated", check_demonstrated),
    ("page code run by tests", check_page_code),
    ("operator specs", check_specs),
    ("glossary", check_glossary),
    ("registered facts", check_facts),
    ("registered values", check_values),
    ("repeated numbers", check_repeats),
)


def run_lint(root: Path) -> list[CheckResult]:
    root = Path(root)
    ctx = LintContext(root, load_kb(root))
    tasks, ctx.load_diags = _loaded(parse_router, root / "ROUTER.md")
    ctx.tasks = tasks or []
    return [CheckResult(name, *fn(ctx)) for name, fn in CHECKS]
