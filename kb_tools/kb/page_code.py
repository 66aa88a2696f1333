"""The Python printed under a page's "Do / Don't", as blocks a test can run.

Code printed on a page is code, so every such block opens with one marker line. Either it
says what the page-code tests run it as::

    # tested: do op_wrapper; edges: empty, 0-d, one, strided, bool; uses: wrapper-boundary
    # tested: dont op_wrapper; fails: <audit code>, <audit code>
    # tested: dont; fails: wrong result

(the role, the names the block defines that the test calls, the edge inputs it is given,
for a Don't the failure it must show: an audit code or a wrong result, and the pages whose
Do blocks it builds on), or it says why it cannot run::

    # not run: PyPTO-Pro kernel pseudo-code (pl.load, pl.cast have no CPU runtime)

which only kernel pseudo-code may say: a block that calls nothing but Python, torch, kernel
launches and what it defines itself has no excuse not to run. This module only reads pages; the runner
lives with the tests (tests/test_kb_page_code.py), since running needs torch.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import re

SECTION = "Do / Don't"
MARKERS = ("# tested:", "# not run:")
ROLES = ("do", "dont")
# The edge inputs a block may be run on. For integer arguments "empty" is 0, "one" is 1 and
# "extremes" the largest values; for tensors "extremes" is each dtype's limits (min, max,
# and for floats inf, nan, -0.0), or for a block that reads only metadata, each dtype's limit
# where its behaviour changes.
EDGES = ("empty", "0-d", "one", "strided", "bool", "extremes")
WRONG_RESULT = "wrong result"
FIELDS = ("edges", "fails", "uses")
# Names a runnable block may call without defining them; a *_kernel name is a launch, which
# the tests stand in for with a recorder.
_PROVIDED = frozenset(dir(builtins)) | {"torch", "math", "np", "numpy"}
KERNEL_NAME = re.compile(r"\b([A-Za-z_]\w*_kernel)\b")

_FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
_HEADING = re.compile(r"^##\s+(.+?)\s*$", re.M)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


@dataclasses.dataclass(frozen=True)
class Problem:
    line: int
    code: str
    message: str


@dataclasses.dataclass(frozen=True)
class PageBlock:
    page: str  # page id
    line: int  # file line of the marker (the block's first line)
    source: str  # the block, marker included
    tested: bool
    role: str = ""  # "do" or "dont"; "" for a block not run
    entries: tuple[str, ...] = ()
    edges: tuple[str, ...] = ()
    fails: tuple[str, ...] = ()
    uses: tuple[str, ...] = ()
    reason: str = ""  # why a block is not run
    ordinal: int = 1  # 2 for the second block of the page with the same role and entries

    @property
    def key(self) -> str:
        """What the tests register a block's check under: page, role, entry points."""
        key = f"{self.page}:{self.role}:{'+'.join(self.entries) or 'block'}"
        return key if self.ordinal == 1 else f"{key}#{self.ordinal}"


def section_blocks(body: str, body_line: int) -> list[tuple[int, str]]:
    """(file line of the block's first line, text) of each ```python block in the body's
    Do / Don't section."""
    headings = [(m.start(), m.group(1)) for m in _HEADING.finditer(body)]
    spans = [(start, headings[i + 1][0] if i + 1 < len(headings) else len(body))
             for i, (start, title) in enumerate(headings) if title == SECTION]
    found = []
    for start, end in spans:
        for m in _FENCE.finditer(body, start, end):
            if m.group(1).strip().split(" ")[0] == "python":
                found.append((body_line + body.count("\n", 0, m.start(2)), m.group(2)))
    return found


def _split_fields(rest: str, line: int) -> tuple[dict, list[Problem]]:
    parts = [p.strip() for p in rest.split(";")]
    head, fields, problems = parts[0].split(), {}, []
    fields["role"] = head[0] if head else ""
    fields["entries"] = tuple(n.strip() for n in " ".join(head[1:]).split(",") if n.strip())
    for part in parts[1:]:
        name, sep, value = part.partition(":")
        name = name.strip()
        if not sep or name not in FIELDS or name in fields:
            problems.append(Problem(line, "LN131", f"marker field {part!r} is not one of {', '.join(FIELDS)} (each once, as 'name: a, b')"))
            continue
        fields[name] = tuple(v.strip() for v in value.split(",") if v.strip())
    return fields, problems


def _check_tested(fields: dict, line: int, known_codes) -> list[Problem]:
    problems = []
    role, fails = fields["role"], fields.get("fails", ())
    if role not in ROLES:
        problems.append(Problem(line, "LN131", f"marker role {role!r} is not 'do' or 'dont'"))
    for name in fields["entries"]:
        if not _WORD.match(name):
            problems.append(Problem(line, "LN131", f"entry point {name!r} is not a Python name"))
    unknown = [e for e in fields.get("edges", ()) if e not in EDGES]
    if unknown:
        problems.append(Problem(line, "LN131", f"edge input(s) {', '.join(unknown)} not among {', '.join(EDGES)}"))
    if role == "dont" and not fails:
        problems.append(Problem(line, "LN131", "a Don't block names the failure it shows: 'fails: WBxxx' or 'fails: wrong result'"))
    if role == "do" and fails:
        problems.append(Problem(line, "LN131", "a Do block shows no failure; 'fails:' belongs to Don't blocks"))
    bad = [f for f in fails if f != WRONG_RESULT and f not in known_codes]
    if bad:
        problems.append(Problem(line, "LN131", f"fails names {', '.join(bad)}: neither an audit rule code nor {WRONG_RESULT!r}"))
    return problems


def _defined_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            names.update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def _called_roots(tree: ast.Module) -> set[str]:
    """The first name of each call's callee: ``pl.cast(...)`` -> pl, ``f(...)`` -> f."""
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            while isinstance(func, (ast.Attribute, ast.Subscript, ast.Call)):
                func = func.value if not isinstance(func, ast.Call) else func.func
            if isinstance(func, ast.Name):
                roots.add(func.id)
    return roots


def _top_level_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def parse_block(page: str, line: int, text: str, known_codes=frozenset()) -> tuple[PageBlock | None, list[Problem]]:
    """The block's marker, read and checked; None with the problems when it has none.
    ``known_codes`` are the audit's rule codes a Don't may name."""
    first = text.split("\n", 1)[0].strip()
    marker = next((m for m in MARKERS if first.startswith(m)), None)
    if marker is None:
        return None, [Problem(line, "LN130", "Do/Don't Python block has no first line '# tested: ...' or '# not run: REASON'; no test runs it")]
    rest = first[len(marker):].strip()
    try:
        tree = ast.parse(text)
        compile(tree, "<page block>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:  # ValueError: a NUL byte
        tree, error = None, f"{type(exc).__name__}: {getattr(exc, 'msg', exc)}"
    if marker == "# not run:":
        if not rest:
            return None, [Problem(line, "LN133", "'# not run:' needs the reason the block cannot run")]
        primitives = {n for n in _called_roots(tree) - _defined_names(tree) - _PROVIDED if not KERNEL_NAME.fullmatch(n)} if tree else {"?"}
        if not primitives:
            return None, [Problem(line, "LN133", "the block calls only Python, torch, kernel launches and its own names, so a test can run it: mark it '# tested:'")]
        return PageBlock(page, line, text, tested=False, reason=rest), []
    fields, problems = _split_fields(rest, line)
    problems += _check_tested(fields, line, known_codes)
    if tree is None:
        problems.append(Problem(line, "LN132", f"a tested block must be Python; it does not compile ({error})"))
    else:
        missing = [n for n in fields["entries"] if n not in _top_level_names(tree)]
        if missing:
            problems.append(Problem(line, "LN132", f"entry point(s) {', '.join(missing)} not defined at the block's top level"))
    if problems:
        return None, problems
    return PageBlock(page, line, text, True, fields["role"], fields["entries"], fields.get("edges", ()),
                     fields.get("fails", ()), fields.get("uses", ())), []


def page_blocks(page, known_codes=frozenset()) -> tuple[list[PageBlock], list[Problem]]:
    """The marked blocks of one page (an object with ``id``, ``body`` and ``body_line``) and
    the problems of those whose marker is missing or wrong."""
    blocks, problems = [], []
    for line, text in section_blocks(page.body, page.body_line):
        block, found = parse_block(page.id, line, text, known_codes)
        problems += found
        if block is not None:
            same = sum(b.tested and (b.role, b.entries) == (block.role, block.entries) for b in blocks)
            blocks.append(dataclasses.replace(block, ordinal=same + 1) if block.tested and same else block)
    return blocks, problems


def run_before(block: PageBlock, blocks_of) -> list[PageBlock]:
    """The blocks that run, in this order, into ``block``'s namespace before it: the Do blocks of
    the pages its marker ``uses``, then the earlier blocks of its own page with its role (a
    second Do block builds on the first). ``blocks_of(page_id)`` gives a page's blocks."""
    before = [b for used in block.uses for b in blocks_of(used) if b.tested and b.role == "do"]
    return before + [b for b in blocks_of(block.page) if b.tested and b.role == block.role and b.line < block.line]