"""The house: kb_tools' packages stand on each other one way, with no circle of modules.

Every import a module makes, at its top or inside a function, is read from its source. An
import may go down to a lower floor or sideways within its own package; a circle of modules
(even through imports made on first use) and an import that runs up a floor both fail here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import REPO

PACKAGE = REPO / "kb_tools"
# floor of each top-level room, lowest first; a module may import its own room or lower floors
FLOORS = {
    "__init__": 0, "diagnostics": 0, "limits": 0,
    "syntax": 1,  # walking a Python syntax tree: the audit and the CANN golden reader both read Python
    "files": 1, "runtime": 1, "numerics": 1,
    "kb": 2,
    "cann": 3,  # a CANN operator folder's facts, read statically; the spec and audit views stand above
    "contract": 4, "search": 4, "memory": 4, "kernels": 4,
    "audit": 5,
    "outputs": 6, "lint": 6,
    "commands": 7,
    "agents": 8,
    "cli": 9, "__main__": 10,
}
TOP_LEVEL_LIMIT = 8  # modules beside __init__, __main__ and cli
NO_SCIENCE = ("kb", "cann", "contract", "audit", "files", "search")  # rooms that never pull in torch or numpy
HEAVY = ("torch", "numpy", "scipy", "pandas", "numba", "triton")
PURE_TABLES = {"kb_tools.numerics", "kb_tools.numerics.tolerances"}  # TTK's thresholds: data, no imports (tested below)


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _imports(path: Path, name: str) -> set[str]:
    """The absolute module names ``path`` imports, wherever in the file."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: {m for m in _imports(path, name) if m in modules and m != name and m != "kb_tools"}
            for name, path in modules.items()}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_every_room_has_a_floor():
    rooms = {_room(m) for m in _modules()}
    assert rooms <= set(FLOORS), rooms - set(FLOORS)


def test_the_top_level_is_short():
    top = [p.stem for p in PACKAGE.glob("*.py") if p.stem not in ("__init__", "__main__", "cli")]
    assert len(top) <= TOP_LEVEL_LIMIT, top


def test_imports_never_run_up_a_floor():
    upward = []
    for module, targets in _graph().items():
        for target in targets:
            room, other = _room(module), _room(target)
            if room != other and FLOORS[other] >= FLOORS[room]:
                upward.append(f"{module} -> {target}")
    assert not upward, upward


def test_no_circle_of_modules():
    graph = _graph()
    # a package's __init__ is not a module the others import for its code
    graph = {m: {t for t in ts if not (_modules()[t].name == "__init__.py" and t.count(".") == 1)} for m, ts in graph.items()}
    state: dict[str, int] = {}
    circles = []

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                circles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not circles, circles


def _science_below(module: str, modules: dict[str, Path], seen: set[str]) -> str | None:
    """The first heavy library ``module`` brings in, through any chain of kb_tools imports made
    anywhere in a file (at first use too), or None: a torch-free table in numerics is fine to read."""
    if module in seen:
        return None
    seen.add(module)
    for target in _imports(modules[module], module):
        if target.split(".")[0] in HEAVY:
            return f"{module} -> {target}"
        if target in modules and target != "kb_tools":
            found = _science_below(target, modules, seen)
            if found:
                return found
    return None


@pytest.mark.parametrize("room", NO_SCIENCE)
def test_kb_contract_and_audit_never_import_torch_or_numerics(room):
    modules = _modules()
    heavy = []
    for name in modules:
        if _room(name) == room:
            found = _science_below(name, modules, set())
            if found:
                heavy.append(f"{name}: {found}")
    assert not heavy, heavy


def test_the_tables_the_audit_reads_import_nothing():
    for name in PURE_TABLES:
        path = _modules()[name]
        assert _imports(path, name) <= {"__future__", "__future__.annotations", "dataclasses", "dataclasses.dataclass"}, name
