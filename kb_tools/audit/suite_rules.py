"""The test family (TSxxx): whether an operator's tests can fail when the kernel is wrong.

* TS101 (sample-driver-vs-delivery): no test reaches the delivered wrapper (a ``*_wrapper``,
  a name imported from the spec's wrapper module or any ``*_wrapper``/``wrappers``/``_impl``
  module) or a kernel launch, directly or through same-file helpers; a test file holding no
  test whose kernel runs only when the file is run as a script (a ``__main__`` launch); a
  test file with nothing of the delivery in sight whose tests run an operator's golden and
  library code only (``golden_only``), whether or not its folder holds the implementation.
* TS102 (tolerance-coverage): a comparison by bare ``allclose``/``isclose``/``assert_allclose``,
  whose default tolerances are nobody's criterion (``assert_close``'s per-dtype defaults are
  one; a negated comparison asserts a difference and is not judged).
* TS103 (tolerance-coverage): a literal ``rtol``/``atol`` looser than the spec's criterion
  allows for the dtype the comparison runs under (the branch of an ``if`` on the dtype, or
  the dtypes its test names; the loosest of all declared dtypes when it names none), only
  where those dtypes' criteria are element-wise.
* TS104 (tolerance-coverage): a declared dtype that the file never names, unless it reads
  the dtypes from the spec or the prototype (a name holding ``DTYPES``, a ``"dtypes"`` key).
* TS105 (numerical-error-localisation, a warning): a test draws random inputs and no seed
  holds for it (in the test or what it calls, at module level, in a fixture or setup hook,
  or in a conftest.py above); a seed in another test does not count.
* TS106 (tolerance-coverage): floating outputs compared bit for bit (``exact_compare``).

The family judges operator tests only (``operator_test``): a library's own unit tests,
with mocks and no kernel, are left alone.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import re
from fnmatch import fnmatchcase
from functools import lru_cache
from pathlib import Path

from kb_tools.audit.casts import dtype_name
from kb_tools.audit.exact_compare import exact_comparisons
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.findings import RawFinding, call_pos
from kb_tools.audit.module import FUNCTION_DEFS, launch_target
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.golden_rules import defines_kernels
from kb_tools.audit.roles import imports_framework, is_golden_name, is_test_name
from kb_tools.kb import vocabulary as V
from kb_tools.numerics import tolerances as tol

WRAPPER_MODULE_SUFFIXES = ("_wrapper", "wrappers")
# Comparisons whose defaults are nobody's criterion. torch.testing.assert_close is not one:
# its defaults are per dtype (exact for integers), a criterion of its own.
COMPARE_FUNCS = frozenset({"allclose", "isclose", "assert_allclose", "assert_array_almost_equal"})
TOLERANCE_FUNCS = COMPARE_FUNCS | {"assert_close"}
RANDOM_TORCH = frozenset({"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "normal",
                          "bernoulli", "multinomial", "poisson"})
RANDOM_STDLIB = frozenset({"random", "randint", "uniform", "choice", "choices", "shuffle", "sample", "gauss", "randrange"})
SEED_CALL = re.compile(r"\b(manual_seed|seed_everything|set_seed|seed_all|random\.seed)\s*\(")
CONFTEST_LEVELS = 3
MAX_CONFTEST_CHARS = 200_000
NOT_DRAWS = frozenset({"seed", "default_rng", "RandomState", "Generator", "get_state", "set_state", "SeedSequence"})


def _pytest_marked(fn: ast.AST) -> bool:
    return any((dotted(d.func if isinstance(d, ast.Call) else d) or [""])[0] == "pytest" for d in fn.decorator_list)


def collect_tests(tree: ast.Module, kernels=frozenset()) -> list[ast.FunctionDef]:
    """Top-level ``test_*`` functions and the ``test_*`` methods of ``Test*`` classes; a
    kernel named like a test (``test_gather_load_kernel``) is not one unless a pytest mark
    makes it one (``@pytest.mark.soc`` over a ``@pl.jit`` test)."""
    out = []
    for node in tree.body:
        if isinstance(node, FUNCTION_DEFS) and node.name.startswith("test") \
                and (node.name not in kernels or _pytest_marked(node)):
            out.append(node)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            out.extend(n for n in node.body if isinstance(n, FUNCTION_DEFS) and n.name.startswith("test"))
    return out


def _targets(ctx: FileContext) -> set[str]:
    """Local names that stand for the delivered wrapper: a ``*_wrapper`` defined here (not a
    test) or imported, a name from a ``*_wrapper``/``wrappers`` module or the spec's wrapper
    module, and module-level names bound from any of these (``KERNELS = make_wrapper()``)."""
    spec_stem = ctx.wrapper_stem
    names = {f.name for f in ctx.module.functions if f.top and fnmatchcase(f.name, "*_wrapper") and ctx.module.launches(f.node)}
    for local, full in ctx.aliases.items():
        parts = full.split(".")
        if fnmatchcase(parts[-1], "*_wrapper") or any(p.endswith(WRAPPER_MODULE_SUFFIXES) or p == spec_stem for p in parts):
            names.add(local)
    for node in ctx.tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node.value)):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _reaches(fn: ast.AST, targets: set[str], launchers: set[str], calls: dict[str, ast.AST], seen: set[str]) -> bool:
    """Whether ``fn`` names a target or launches, itself or through the same-file functions it
    names (walked with a work list: a long call chain costs no recursion)."""
    work = [fn]
    while work:
        for node in ast.walk(work.pop()):
            if isinstance(node, ast.Name):
                if node.id in targets:
                    return True
                if node.id in calls and node.id not in seen:
                    seen.add(node.id)
                    work.append(calls[node.id])
            elif isinstance(node, ast.Call) and launch_target(node, launchers):
                return True
    return False


def _script_launch(ctx: FileContext) -> ast.Call | None:
    """A kernel launch (or a call of a launching function) in the module's own statements,
    such as a ``__main__`` block: it runs when the file is run as a script, never in a test."""
    launching = {f.name for f in ctx.module.functions if f.top and ctx.module.launches(f.node)}
    work = [s for s in ctx.tree.body if not isinstance(s, (*FUNCTION_DEFS, ast.ClassDef))]
    while work:  # the module's statements, not the bodies of functions they define (a registration under try:)
        node = work.pop(0)
        if isinstance(node, ast.Call) and (launch_target(node, ctx.module.launchers)
                                           or isinstance(node.func, ast.Name) and node.func.id in launching):
            return node
        work.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, (*FUNCTION_DEFS, ast.ClassDef, ast.Lambda)))
    return None


def misses_wrapper(ctx: FileContext) -> list[RawFinding]:
    tests = collect_tests(ctx.tree, ctx.module.kernels)
    if not tests:  # a test file with no test: a test run collects nothing, so its kernel never runs there
        launch = _script_launch(ctx) if is_test_name(Path(ctx.path).stem) else None
        return [RawFinding(launch.lineno, launch.col_offset, "TS101", "no test reaches the delivered wrapper or its "
                           "kernel: this test file holds no test function; its kernel runs only as a script")] if launch else []
    targets = _targets(ctx)
    if not targets and ctx.spec is None:
        return []  # nothing names a delivery: a test of something else (framework, utilities)
    launchers = ctx.module.launchers
    calls = dict(ctx.module.helpers)
    calls.update({n.name: n for n in ctx.tree.body if isinstance(n, FUNCTION_DEFS)})
    if any(_reaches(t, targets, launchers, calls, {t.name}) for t in tests):
        return []
    what = "nothing in this file names a delivered wrapper or launches a kernel" if not targets and not launchers else \
        f"none of {len(tests)} tests calls {', '.join(sorted(targets | launchers)[:3])}"
    first = tests[0]
    return [RawFinding(first.lineno, first.col_offset, "TS101", f"no test reaches the delivered wrapper or its kernel: {what}")]


LIBRARY_ROOTS = frozenset({"torch", "numpy", "pytest", "math", "random", "itertools", "functools", "unittest", "typing",
                           "os", "sys", "pathlib", "json", "time", "copy", "re", "collections", "dataclasses", "contextlib",
                           "warnings", "logging", "tempfile", "operator", "statistics", "scipy", "einops", "hypothesis"})
MAX_SIBLINGS = 200  # files of a test's folder read for an implementation


def _golden_call(node: ast.AST) -> str | None:
    """The name of an operator's golden a call names (``golden_relu``, ``relu_golden``)."""
    if isinstance(node, ast.Call):
        last = (dotted(node.func) or [""])[-1]
        if is_golden_name(last) and last != "golden":
            return last
    return None


def _runs_only_known_code(test: ast.AST, functions: dict[str, ast.AST], aliases: dict[str, str]) -> bool:
    """Whether every call a test makes, itself or through same-file functions, is to a library
    (torch, numpy, pytest, the standard library), a builtin or a golden: then nothing it runs
    can be the delivery. A call of a parameter, a local callable, a class or an imported name
    from elsewhere may be, and so is not known."""
    work, seen = [test], {test.name}
    while work:
        for node in ast.walk(work.pop()):
            if not isinstance(node, ast.Call) or _golden_call(node):
                continue
            parts = dotted(node.func)
            if parts is None:
                return False  # kernel[grid](...), factory(n)(...)
            head = parts[0]
            if len(parts) == 1 and head in functions:
                if head not in seen:
                    seen.add(head)
                    work.append(functions[head])
            elif head in aliases:
                if aliases[head].split(".")[0] not in LIBRARY_ROOTS:
                    return False
            elif len(parts) == 1 and not hasattr(builtins, head):
                return False
    return True


@lru_cache(maxsize=512)
def folder_implementation(folder: Path) -> str | None:
    """A file beside the tests that holds the implementation (a ``*_wrapper``/``*_impl`` module,
    or one that imports a kernel framework and decorates a ``jit``), by name."""
    try:
        siblings = sorted(p for p in folder.iterdir() if p.suffix == ".py")[:MAX_SIBLINGS]
    except OSError:
        return None
    return next((p.name for p in siblings if p.stem.endswith(("_wrapper", "_impl")) or defines_kernels(p)), None)


def golden_only(ctx: FileContext) -> list[RawFinding]:
    """TS101 for a test file with no kernel, framework, wrapper or spec in sight: its tests
    call an operator's golden and nothing that could be the delivery, whether or not the
    folder holds the implementation."""
    if not any("golden" in name for pair in ctx.aliases.items() for name in pair) and not any(
            isinstance(n, FUNCTION_DEFS) and "golden" in n.name for n in ctx.tree.body):
        return []  # no golden imported or defined: nothing to call one
    tests = collect_tests(ctx.tree, ctx.module.kernels)
    golden = next((g for g in (_golden_call(n) for n in ctx.nodes if isinstance(n, ast.Call)) if g), None)
    if not tests or golden is None:
        return []
    functions = {n.name: n for n in ctx.tree.body if isinstance(n, FUNCTION_DEFS)}
    if not all(_runs_only_known_code(t, functions, ctx.aliases) for t in tests):
        return []
    beside = folder_implementation(Path(ctx.path).resolve().parent)
    where = f"`{beside}` beside it, which no test runs" if beside else "the folder holds no implementation"
    return [RawFinding(tests[0].lineno, tests[0].col_offset, "TS101", f"no test reaches the delivered wrapper or its kernel: "
                       f"the tests run the golden `{golden}` and library code only ({where})")]


def _number(expr: ast.AST) -> float | None:
    """A literal number (``1e-3``, ``2**-9``, ``-1``), else None."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        return float(expr.value)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        v = _number(expr.operand)
        return None if v is None else (-v if isinstance(expr.op, ast.USub) else v)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Pow, ast.Mult, ast.Div)):
        a, b = _number(expr.left), _number(expr.right)
        if a is None or b is None or (isinstance(expr.op, ast.Pow) and abs(b) > 64):
            return None
        try:
            return a ** b if isinstance(expr.op, ast.Pow) else a * b if isinstance(expr.op, ast.Mult) else a / b
        except (ZeroDivisionError, OverflowError):
            return None
    return None


def _comparisons(ctx: FileContext, names=TOLERANCE_FUNCS):
    negated = {id(n.operand) for n in ctx.nodes if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not)}
    for node in ctx.nodes:
        if isinstance(node, ast.Call) and id(node) not in negated:  # `not allclose(...)`: asserts a difference
            parts = dotted(node.func)
            if parts and parts[-1] in names and (len(parts) > 1 or parts[0] in ctx.aliases) and parts[0] != "math" \
                    and (qualname(node.func, ctx.aliases) or "").split(".")[0] != "math":  # math.isclose: Python floats
                yield node, parts[-1]


def bare_comparisons(ctx: FileContext) -> list[RawFinding]:
    out = []
    for call, name in _comparisons(ctx, COMPARE_FUNCS):
        given = {k.arg for k in call.keywords}
        if None in given or "rtol" in given or "atol" in given or len(call.args) > 2:
            continue  # **kwargs, or tolerances given by keyword or position
        out.append(RawFinding(*call_pos(call), "TS102", f"{name} with its default tolerances: no criterion decides this comparison"))
    return out


def allowed_tolerance(criterion: str, dtype: str) -> tuple[float, float] | None:
    """(rtol, atol) an element-wise criterion allows for ``dtype``; None when the criterion
    is not element-wise (stat_rel_err, cross_check, quant). gym_gate's mean gates sit on top of
    its mixed tolerance, so a test looser than that tolerance is looser than the gate."""
    if criterion == "binary_equal":
        return 0.0, 0.0
    if criterion == "close":
        return tol.close_rtol(dtype), tol.CLOSE_ATOL
    if criterion in ("mix_tolerance", "gym_gate"):  # gym_gate's element-wise half reads TTK's mix rows
        row = tol.mix_row(dtype)
        return row.rtol, row.atol
    return None


def _named_dtypes(node: ast.AST) -> set[str]:
    """The dtypes an expression or block names (``torch.float16``, ``"bf16"``)."""
    named = set()
    for n in ast.walk(node):
        d = dtype_name(n) if isinstance(n, ast.Attribute) else V.canonical_dtype(n.value) \
            if isinstance(n, ast.Constant) and isinstance(n.value, str) else None
        if d:
            named.add(d)
    return named


def _dtypes_in_force(call: ast.AST, parents: dict[int, ast.AST], declared: list[str]) -> list[str]:
    """The declared dtypes a comparison runs under: the branch of an ``if`` that tests for
    some of them (its ``else`` excludes them), else those its function names (its
    parametrisation included), else all."""
    node, excluded = call, set()
    while id(node) in parents:
        parent = parents[id(node)]
        if isinstance(parent, ast.If):
            tested = [d for d in declared if d in _named_dtypes(parent.test)]
            negated = any(isinstance(n, (ast.NotEq, ast.IsNot, ast.NotIn, ast.Not)) for n in ast.walk(parent.test))
            chosen, other = (parent.orelse, parent.body) if negated else (parent.body, parent.orelse)
            if tested and node in chosen:
                return [d for d in tested if d not in excluded] or tested
            if tested and node in other:
                excluded.update(tested)
        if isinstance(parent, FUNCTION_DEFS):
            named = [d for d in declared if d in _named_dtypes(parent) and d not in excluded]
            return named or [d for d in declared if d not in excluded] or declared
        node = parent
    return [d for d in declared if d not in excluded] or declared


def loose_tolerances(ctx: FileContext) -> list[RawFinding]:
    """A literal rtol/atol looser than the criterion allows for the dtypes the comparison runs
    under (one dtype when a branch or the test names it; the loosest of several otherwise)."""
    spec = ctx.spec
    if spec is None or not spec.dtypes:
        return []
    bounds = {d: allowed_tolerance(spec.criteria.get(d, V.undeclared_criterion(d)), d) for d in spec.dtypes}
    parents = {id(child): node for node in ctx.nodes for child in ast.iter_child_nodes(node)}
    out = []
    for call, name in _comparisons(ctx):
        dtypes = _dtypes_in_force(call, parents, list(spec.dtypes))
        if any(bounds[d] is None for d in dtypes):
            continue  # a criterion that is not element-wise: no rtol/atol bound to hold it to
        allowed = {"rtol": max(bounds[d][0] for d in dtypes), "atol": max(bounds[d][1] for d in dtypes)}
        for kw in call.keywords:
            value = _number(kw.value) if kw.arg in allowed else None
            if value is not None and value > allowed[kw.arg]:
                under = dtypes[0] if len(dtypes) == 1 else f"any of {', '.join(dtypes)}"
                out.append(RawFinding(kw.value.lineno, kw.value.col_offset, "TS103",
                                      f"{kw.arg}={value:g} is looser than {spec.op}'s criteria allow for {under} "
                                      f"(at most {allowed[kw.arg]:g})"))
    return out


def untested_dtypes(ctx: FileContext) -> list[RawFinding]:
    spec = ctx.spec
    tests = collect_tests(ctx.tree, ctx.module.kernels)
    if spec is None or not tests:
        return []
    named = set()
    for node in ctx.nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.lower() == "dtypes":
                return []
            d = V.canonical_dtype(node.value)
        elif isinstance(node, ast.Attribute):
            if "dtypes" in node.attr.lower():
                return []
            d = dtype_name(node)
        elif isinstance(node, ast.Name):
            if "dtypes" in node.id.lower() and node.id.upper() == node.id:
                return []
            d = None
        else:
            continue
        if d:
            named.add(d)
    missing = [d for d in spec.dtypes if d not in named]
    if not missing:
        return []
    return [RawFinding(tests[0].lineno, tests[0].col_offset, "TS104",
                       f"{spec.op} declares {', '.join(missing)}, which no test here names")]


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
    for here in (folder, *list(folder.parents)[:CONFTEST_LEVELS]):
        conftest = here / "conftest.py"
        try:
            if conftest.is_file() and SEED_CALL.search(conftest.read_text("utf-8", errors="replace")[:MAX_CONFTEST_CHARS]):
                return True
        except OSError:
            continue
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
    return {a.value for m in marks for c in ast.walk(m) if isinstance(c, ast.Call) and (dotted(c.func) or [""])[-1] == "usefixtures"
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
        for node in ast.walk(work.pop()):
            out.append(node)
            if isinstance(node, ast.Name) and node.id in functions and node.id not in seen:
                seen.add(node.id)
                work.append(functions[node.id])
    return out


def unseeded_random(ctx: FileContext) -> list[RawFinding]:
    """A test whose inputs are drawn without a seed it can rely on: none in the test or what it
    calls, at module level, in a fixture or setup hook, or in a conftest.py above the file. A
    seed set by another test does not count (pytest may run this one first, or alone). A file
    without pytest tests (a script) is judged as a whole."""
    if _conftest_seeds(Path(ctx.path).resolve().parent):
        return []
    functions = {n.name: n for n in ctx.nodes if isinstance(n, FUNCTION_DEFS)}
    # every function body, methods of the same name included (each harness case has its define_tensors)
    in_functions = {id(n) for f in ctx.nodes if isinstance(f, FUNCTION_DEFS) for n in ast.walk(f)}
    reachable = {**{t.id: n.value for n in ctx.tree.body if isinstance(n, ast.Assign) for t in n.targets
                    if isinstance(t, ast.Name)},  # CASES = [RowCase, ColCase], parametrising a test
                 **functions, **{n.name: n for n in ctx.tree.body if isinstance(n, ast.ClassDef)}}
    shared = [n for n in ctx.nodes if id(n) not in in_functions]
    shared += [n for f in ctx.nodes if isinstance(f, FUNCTION_DEFS) and _runs_before_tests(f) for n in ast.walk(f)]
    if _draws_and_seeds(shared, ctx.aliases)[2]:
        return []
    tests = collect_tests(ctx.tree, ctx.module.kernels)
    owners = {id(m): c for c in ctx.tree.body if isinstance(c, ast.ClassDef) for m in c.body}
    module_level = [n for n in ctx.nodes if id(n) not in in_functions]  # drawn at import, for every test
    scopes = [module_level + _reach(t, reachable)
              + [n for name in _requested(t, owners.get(id(t)), ctx.tree) if name in functions for n in ast.walk(functions[name])]
              for t in tests] if tests else [ctx.nodes]
    for nodes in scopes:
        draw, q, seeded = _draws_and_seeds(nodes, ctx.aliases)
        if draw is not None and not seeded:
            where = call_pos(draw) if isinstance(draw, ast.Call) else (draw.lineno, draw.col_offset)
            return [RawFinding(*where, "TS105", f"{q} draws inputs and nothing fixes a seed for this test: "
                               "a failure will not reproduce")]
    return []


def _importorskip_aliases(ctx: FileContext) -> FileContext:
    """``torch = pytest.importorskip("torch")`` binds a module as an import does."""
    extra = {}
    for node in ctx.nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and node.value.args \
                and (dotted(node.value.func) or [""])[-1] == "importorskip" \
                and isinstance(node.value.args[0], ast.Constant) and isinstance(node.value.args[0].value, str):
            extra.update({t.id: node.value.args[0].value for t in node.targets if isinstance(t, ast.Name)})
    return dataclasses.replace(ctx, aliases={**ctx.aliases, **extra}) if extra else ctx


def operator_test(ctx: FileContext) -> bool:
    """Whether the file tests an operator: a spec names it, it names a delivered wrapper,
    defines or launches a kernel, or imports a kernel framework. Other tests (a library's
    unit tests with mocks) are not this family's to judge."""
    return bool(ctx.spec or _targets(ctx) or ctx.module.kernels or ctx.module.launching
                or imports_framework(ctx.aliases))


def _reached_functions(test: ast.AST, functions: dict[str, ast.AST]) -> list[ast.AST]:
    """The test and the same-file functions it names, directly or through each other."""
    out, work, seen = [], [test], {test.name}
    while work:
        fn = work.pop()
        out.append(fn)
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id in functions and node.id not in seen:
                seen.add(node.id)
                work.append(functions[node.id])
    return out


_exact_memo: dict = {}  # the last file's TS106 result: the findings and the note read it once


def _exact(ctx: FileContext) -> tuple[list[RawFinding], int | None]:
    key = (ctx.path, id(ctx.tree))
    if key not in _exact_memo:
        functions = {n.name: n for n in ctx.tree.body if isinstance(n, FUNCTION_DEFS)}
        _exact_memo.clear()
        _exact_memo[key] = exact_comparisons(ctx, collect_tests(ctx.tree, ctx.module.kernels),
                                             lambda t: _reached_functions(t, functions))
    return _exact_memo[key]


def float_exact_comparisons(ctx: FileContext) -> list[RawFinding]:
    return _exact(ctx)[0]


def undecided_compares(ctx: FileContext) -> str | None:
    """One note when an exact comparison's dtype cannot be told (no spec, nothing declared);
    read after ``check_test`` (families.py runs it first), from what it found."""
    judged = _exact_memo.get((ctx.path, id(ctx.tree)))  # check_test has run: an operator test has its result here
    line = judged[1] if judged else None
    return None if line is None else (f"{ctx.path}: AU015 TS106 cannot tell the dtype compared exactly at line {line}: "
                                      "no spec found and the test declares no single kind of dtype; pass --spec")


def check_test(ctx: FileContext) -> list[RawFinding]:
    ctx = _importorskip_aliases(ctx)
    if not operator_test(ctx):
        return golden_only(ctx)
    return [*misses_wrapper(ctx), *bare_comparisons(ctx), *loose_tolerances(ctx), *untested_dtypes(ctx), *unseeded_random(ctx),
            *float_exact_comparisons(ctx)]
