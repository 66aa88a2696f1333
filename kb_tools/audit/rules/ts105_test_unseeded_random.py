"""TS105 (numerical-error-localisation, a warning): a test draws random inputs and no seed
holds for it (in the test or what it calls, at module level, in a fixture or setup hook, or in
a conftest.py above); a seed in another test does not count.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding, call_pos
from kb_tools.audit.module import FUNCTION_DEFS
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.roles import TEST
from kb_tools.audit.suite_rules import collect_tests
from kb_tools.syntax import walk_nodes

CODE = "TS105"
ROLES = (TEST,)  # the file roles (kb_tools/audit/roles.py) the rule reads
RANDOM_TORCH = frozenset({"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "normal",
                          "bernoulli", "multinomial", "poisson"})


RANDOM_STDLIB = frozenset({"random", "randint", "uniform", "choice", "choices", "shuffle", "sample", "gauss", "randrange"})
SEED_CALL = re.compile(r"\b(manual_seed|seed_everything|set_seed|seed_all|random\.seed)\s*\(")


CONFTEST_LEVELS = 3
MAX_CONFTEST_CHARS = 200_000


NOT_DRAWS = frozenset({"seed", "default_rng", "RandomState", "Generator", "get_state", "set_state", "SeedSequence"})


def _is_draw(q: str) -> bool:
    parts = q.split(".")
    if parts[0] == "torch" and parts[-1] in RANDOM_TORCH:
        return True
    if parts[:2] == ["numpy", "random"] and len(parts) == 3 and parts[-1] not in NOT_DRAWS:
        return True
    return parts[0] == "random" and len(parts) == 2 and parts[-1] in RANDOM_STDLIB


def _is_seed(call: ast.Call, q: str) -> bool:
    last = q.split(".")[-1] if q else ((dotted(call.func) or [""])[-1])
    if "seed" in last.lower():
        return True
    return last in ("default_rng", "RandomState") and bool(call.args or call.keywords)


@lru_cache(maxsize=512)
def _conftest_seeds(folder: Path) -> bool:
    """Whether a conftest.py in ``folder`` or up to three folders above it fixes a seed
    (pytest runs it before every test file below it)."""
    from kb_tools.files.text import read_head

    for here in (folder, *list(folder.parents)[:CONFTEST_LEVELS]):
        text = read_head(here / "conftest.py", MAX_CONFTEST_CHARS)  # a prefix: a 1 GiB conftest.py is not read whole
        if text and SEED_CALL.search(text):
            return True
    return False


SETUP_NAMES = frozenset({"setUp", "setUpClass", "setup_method", "setup_class", "setup_function", "setup_module", "setup"})


def _runs_before_tests(fn: ast.AST) -> bool:
    """A setup hook or an autouse fixture: pytest or unittest runs it before every test. A
    fixture without ``autouse`` runs only for the tests that request it (``_requested``)."""
    return fn.name in SETUP_NAMES or any(
        isinstance(d, ast.Call) and "fixture" in ".".join(dotted(d.func) or [])
        and any(k.arg == "autouse" and isinstance(k.value, ast.Constant) and k.value.value is True for k in d.keywords)
        for d in fn.decorator_list)


def _requested(test: ast.AST, owner: ast.ClassDef | None, tree: ast.Module) -> set[str]:
    """Fixtures a test requests by ``usefixtures``: on itself, on its class, or in the module's
    ``pytestmark`` (its parameters are followed by ``_reach``)."""
    marks = [*test.decorator_list, *(owner.decorator_list if owner else [])]
    marks += [n.value for n in tree.body if isinstance(n, ast.Assign)
              and any(isinstance(x, ast.Name) and x.id == "pytestmark" for x in n.targets)]
    return {a.value for m in marks for c in walk_nodes(m) if isinstance(c, ast.Call) and (dotted(c.func) or [""])[-1] == "usefixtures"
            for a in c.args if isinstance(a, ast.Constant) and isinstance(a.value, str)}


def _draws_and_seeds(nodes, aliases: dict[str, str]) -> tuple[ast.AST | None, str, bool]:
    """(the first draw by position, its qualified name, whether a seed is set) among ``nodes``.
    A draw given its own ``generator=`` is seeded by that generator. A draw function handed
    over uncalled (``init_value=torch.randn``, for a harness to call) is a draw too."""
    first, first_q, seeded = None, "", False
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    for node in nodes:
        if isinstance(node, ast.Call):
            q = qualname(node.func, aliases) or ""
            if _is_seed(node, q):
                seeded = True
                continue
            if not (q and _is_draw(q)) or any(k.arg == "generator" for k in node.keywords):
                continue
        elif isinstance(node, (ast.Attribute, ast.Name)) and id(node) not in called \
                and isinstance(node.ctx, ast.Load) and _is_draw(q := qualname(node, aliases) or ""):
            pass
        else:
            continue
        if first is None or (node.lineno, node.col_offset) < (first.lineno, first.col_offset):
            first, first_q = node, q
    return first, first_q, seeded


def _reach(test: ast.AST, functions: dict[str, ast.AST]) -> list[ast.AST]:
    """Every node a test runs in this file: its body, the same-file functions and classes it
    names (a class with its methods and same-file bases: a harness case the test hands to a
    runner), the module-level values it names (a list of cases it is parametrised over) and
    the fixtures its parameters name (a work list: a long chain costs no recursion)."""
    out, work, seen = [], [test], {test.name}
    work += [functions[a.arg] for a in test.args.args if a.arg in functions and a.arg not in seen]
    seen.update(a.arg for a in test.args.args)
    while work:
        for node in walk_nodes(work.pop()):
            out.append(node)
            if isinstance(node, ast.Name) and node.id in functions and node.id not in seen:
                seen.add(node.id)
                work.append(functions[node.id])
    return out


def check(ctx: FileContext) -> list[RawFinding]:
    """A test whose inputs are drawn without a seed it can rely on: none in the test or what it
    calls, at module level, in a fixture or setup hook, or in a conftest.py above the file. A
    seed set by another test does not count (pytest may run this one first, or alone). A file
    without pytest tests (a script) is judged as a whole."""
    if _conftest_seeds(Path(ctx.path).resolve().parent):
        return []
    functions = {n.name: n for n in ctx.nodes if isinstance(n, FUNCTION_DEFS)}
    # every function body, methods of the same name included (each harness case has its define_tensors)
    in_functions = {id(n) for f in ctx.nodes if isinstance(f, FUNCTION_DEFS) for n in ctx.walk(f)}
    reachable = {**{t.id: n.value for n in ctx.tree.body if isinstance(n, ast.Assign) for t in n.targets
                    if isinstance(t, ast.Name)},  # CASES = [RowCase, ColCase], parametrising a test
                 **functions, **{n.name: n for n in ctx.tree.body if isinstance(n, ast.ClassDef)}}
    shared = [n for n in ctx.nodes if id(n) not in in_functions]
    shared += [n for f in ctx.nodes if isinstance(f, FUNCTION_DEFS) and _runs_before_tests(f) for n in ctx.walk(f)]
    if _draws_and_seeds(shared, ctx.aliases)[2]:
        return []
    tests = collect_tests(ctx.tree, ctx.module.kernels)
    owners = {id(m): c for c in ctx.tree.body if isinstance(c, ast.ClassDef) for m in c.body}
    module_level = [n for n in ctx.nodes if id(n) not in in_functions]  # drawn at import, for every test
    scopes = [module_level + _reach(t, reachable)
              + [n for name in _requested(t, owners.get(id(t)), ctx.tree) if name in functions for n in ctx.walk(functions[name])]
              for t in tests] if tests else [ctx.nodes]
    for nodes in scopes:
        draw, q, seeded = _draws_and_seeds(nodes, ctx.aliases)
        if draw is not None and not seeded:
            where = call_pos(draw) if isinstance(draw, ast.Call) else (draw.lineno, draw.col_offset)
            return [RawFinding(*where, CODE, f"{q} draws inputs and nothing fixes a seed for this test: "
                               "a failure will not reproduce")]
    return []
