"""One operator folder in the CANN layout, read into the facts an ``ops/<op>.yaml`` would hold.

Each fact carries the ``path:line`` it was read from; what cannot be read is a problem line,
never a guess. Nothing from the folder is imported or run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from kb_tools.cann.cases import read_cases
from kb_tools.cann.kernel import kernel_facts
from kb_tools.cann.opdef import read_opdef
from kb_tools.cann.testspec import read_testspec

GOLDEN = Path("tests") / "assets" / "golden.py"


@dataclass
class OperatorFacts:
    """The facts of one operator folder (see the package docstring for each field)."""

    op: str
    folder: str
    dtypes: list[str] = field(default_factory=list)
    criteria: dict[str, str] = field(default_factory=dict)
    uncovered: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    three_party: bool = False
    untested: list[str] = field(default_factory=list)
    golden_framework: str = "none"
    sources: dict[str, str] = field(default_factory=dict)
    golden_path: str = ""
    outputs: dict[str, list[str]] = field(default_factory=dict)
    mode: str = "two_party"
    widening: str = "unknown"
    widening_at: str = ""
    socs: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        """The fields ``kbt spec --format json`` prints, in the issue's order."""
        return {"op": self.op, "folder": self.folder, "dtypes": self.dtypes, "criteria": self.criteria,
                "uncovered": self.uncovered, "stale": self.stale, "three_party": self.three_party,
                "untested": self.untested, "golden_framework": self.golden_framework, "sources": self.sources}


def _shown(path: Path, base: Path, given: str) -> str:
    rel = path.relative_to(base).as_posix() if path != base else ""
    return "/".join(p for p in (given.rstrip("/") if given not in ("", ".") else "", rel) if p) or "."


def read_operator(folder, shown: str | None = None, *, kernel: bool = True, golden_tree=None) -> OperatorFacts:
    """Read one operator folder (``<op>/`` with ``op_host/``); ``shown`` is how paths are printed.
    ``kernel=False`` skips the kernel's widening (left "unknown"), which ``kbt spec`` does not print;
    ``golden_tree`` is the golden's syntax tree when the caller parsed it already."""
    folder = Path(folder)
    shown = shown if shown is not None else str(folder)
    pre = "" if shown in ("", ".") else shown.rstrip("/") + "/"
    facts = OperatorFacts(folder.name, shown)
    host = folder / "op_host"
    defs = sorted(p for p in host.glob("*_def.cpp") if p.is_file()) if host.is_dir() else []  # no FIFO
    if not defs:
        facts.problems.append(f"{pre}op_host:1: no op_host/*_def.cpp; registered dtypes unknown")
    registered: dict[str, str] = {}
    unresolved_outputs = False
    for path in defs:
        od = read_opdef(path, f"{pre}op_host/{path.name}")
        facts.socs += [s for s in od.socs if s not in facts.socs]
        facts.problems += od.problems
        for t in od.outputs():
            unresolved_outputs |= bool(t.unresolved)
            facts.outputs.setdefault(t.name, [])
            for d in t.dtypes:
                if d not in facts.outputs[t.name]:
                    facts.outputs[t.name].append(d)
                registered.setdefault(d, f"{od.path}:{t.dtype_lines.get(d, t.line)}")
    facts.dtypes = sorted(registered)
    for d, at in registered.items():
        facts.sources[f"dtype {d}"] = at
    golden = folder / GOLDEN
    reached = {}
    if golden.is_file():
        facts.golden_path = f"{pre}{GOLDEN.as_posix()}"
        spec = read_testspec(golden, facts.golden_path, folder.name, golden_tree)
        facts.problems += spec.problems
        facts.golden_framework = spec.framework
        if spec.framework_line:
            facts.sources["golden_framework"] = f"{facts.golden_path}:{spec.framework_line}"
        reached = spec.criteria
    else:
        facts.golden_framework = "none"
    facts.criteria = {d: s for d, (s, _) in sorted(reached.items())}
    for d, (s, line) in reached.items():
        facts.sources[f"criterion {d}"] = f"{facts.golden_path}:{line}"
    facts.three_party = any(s == "cross_check" for s in facts.criteria.values())
    facts.mode = "three_party" if facts.three_party else "two_party"
    facts.uncovered = [d for d in facts.dtypes if d not in facts.criteria]
    facts.stale = [] if unresolved_outputs or not defs else sorted(d for d in facts.criteria if d not in registered)
    cases = read_cases(folder, shown if shown not in ("", ".") else ".")
    facts.problems += cases.problems
    facts.untested = [d for d in facts.dtypes if d not in cases.tested]
    for d, at in cases.tested.items():
        if d in registered:
            facts.sources[f"tested {d}"] = at
    if kernel:
        found = kernel_facts(folder, shown if shown not in ("", ".") else "")
        facts.widening, facts.widening_at = found.widening, found.widening_at
        facts.sources["widening"] = found.widening_at
    return facts


def listed_operators(path: str) -> list[tuple[Path, str, str]]:
    """(folder, the folder as printed, the folder relative to ``path`` in posix form) for each
    operator under ``path`` as the user gave it, sorted."""
    base = Path(path)
    items = []
    for folder in find_operators(base):
        rel = folder.relative_to(base).as_posix()
        shown = path.rstrip("/") or "/" if rel == "." else (f"{path.rstrip('/')}/{rel}" if path not in (".", "") else rel)
        items.append((folder, shown, rel))
    return items


def read_listed(item: tuple[Path, str, str], golden_tree=None) -> OperatorFacts:
    """The facts ``kbt spec`` prints for one ``listed_operators`` item: its folder relative to the
    path given (sources stay openable paths), no kernel widening."""
    folder, shown, rel = item
    facts = read_operator(folder, shown, kernel=False, golden_tree=golden_tree)
    facts.folder = rel
    return facts


def is_operator(folder: Path) -> bool:
    return (folder / "op_host").is_dir() and not (folder / "op_host").is_symlink()


def find_operators(path, limit: int = 100_000) -> list[Path]:
    """Operator folders under ``path`` (itself, a category, or a repository), sorted; symlinked
    folders are not followed, so a loop cannot trap the walk."""
    root = Path(path)
    if is_operator(root):
        return [root]
    found = []
    for dirpath, dirnames, _ in os.walk(root, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in ("build", "node_modules"))
        if "op_host" in dirnames and is_operator(here):
            found.append(here)
            dirnames[:] = []
            if len(found) >= limit:
                break
    return sorted(found)
