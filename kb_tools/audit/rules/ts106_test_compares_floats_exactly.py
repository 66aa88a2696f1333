"""TS106 (tolerance-coverage): a test compares floating outputs bit for bit, with ``==``
under an ``assert``, ``torch.equal`` / ``x.equal(y)``, or ``.all()`` / ``torch.all`` of ``==``
or ``torch.eq``. A correct kernel rounds differently from its reference, so the test fails
on good code, or is loosened by hand until it passes; exact comparison is the criterion
only for integers, bool, and a dtype whose spec criterion is ``binary_equal``.

Which dtype is compared is read off the operands (a draw's ``dtype=``, a cast, a parametrised
``dtype``, what an output is made from), else off what the test declares (its parametrised
dtypes, the ``dtype=`` of its inputs) when no spec is found; with a spec, an operand whose
dtype is not read off the test is not judged. With no spec, a comparison is judged only where
a side was made by a rounding computation (a reduction, a transcendental, a matmul, a golden:
``ROUNDING``), since a copy, a cast or a selection is exact by design. A side that is a literal, a metadata read or a
constructor of constants (``torch.zeros_like``) is not an output; an input compared unchanged (a copy), a
reference built with exact operations only (``torch.relu(x)``, a gather, a concatenation: no
rounding) and a function compared with itself (``run(x) == run(x)``: determinism, two equivalent calls)
are exact by design; a comparison that decides nothing (not under an ``assert``) or sits in a
branch on the dtype is left alone. A bare ``assert a == b`` is judged only when an operand is
known to be floating.
"""

from __future__ import annotations

import ast

from kb_tools.audit.casts import cast_target, is_float
from kb_tools.audit.family_context import FileContext
from kb_tools.audit.file_dtypes import DEFAULT_DTYPES, literal_dtype, module_values, parametrised
from kb_tools.audit.findings import RawFinding, call_pos
from kb_tools.audit.module import FUNCTION_DEFS
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.roles import TEST, is_golden_name
from kb_tools.audit.suite_rules import collect_tests
from kb_tools.kb import vocabulary as V
from kb_tools.syntax import parents_of, walk_nodes

CODE = "TS106"
ROLES = (TEST,)  # the file roles (kb_tools/audit/roles.py) the rule reads

NOT_OUTPUT = "not an output"  # a literal, a metadata read, a constant tensor: nothing to judge
INT_RESULTS = frozenset({"argmax", "argmin", "argsort", "argwhere", "nonzero", "searchsorted", "bucketize", "count_nonzero",
                         "isnan", "isinf", "isfinite", "isclose", "eq", "ne", "gt", "ge", "lt", "le", "logical_and",
                         "logical_or", "logical_not", "randint", "randperm", "bool"})
META = frozenset({"shape", "dtype", "ndim", "size", "numel", "dim", "device", "stride", "item", "tolist", "is_contiguous",
                  "data_ptr", "element_size", "nbytes"})
BUILTIN_SCALARS = frozenset({"len", "str", "int", "float", "bool", "repr", "round", "abs", "sum", "max", "min", "math"})
CONSTANT_TENSORS = frozenset({"zeros", "ones", "full", "zeros_like", "ones_like", "full_like", "arange", "tensor", "eye"})
ALL_CALLS = frozenset({"all", "torch.all", "numpy.all"})
# Operations whose result is exact in every float dtype (no rounding): a reference built from
# inputs with these alone is bit-exact, and so is a correct kernel's result.
EXACT_OPS = frozenset({"relu", "abs", "neg", "clamp", "clamp_min", "clamp_max", "clip", "maximum", "minimum", "max", "min",
                       "where", "masked_fill", "gather", "index_select", "take", "take_along_dim", "cat", "concat", "stack",
                       "flip", "roll", "sort", "topk", "sign", "floor", "ceil", "trunc", "round", "transpose", "permute",
                       "reshape", "view", "contiguous", "clone", "squeeze", "unsqueeze", "expand", "repeat", "tile",
                       "narrow", "split", "chunk", "t", "cpu", "detach", "copy", "tril", "triu", "scatter", "index_put",
                       "flatten", "movedim", "diag", "cummax", "cummin", "amax", "amin", "pad", "zero_", "fill_", "numpy",
                       "from_numpy", "tensor", "as_tensor", "hstack", "vstack"})
# Operations whose result differs between correct implementations (order of a reduction, an
# approximation of a transcendental, a fused accumulation): where one made the reference, a
# correct kernel does not match it bit for bit.
ROUNDING = frozenset({"exp", "exp2", "expm1", "log", "log2", "log1p", "softmax", "log_softmax", "logsumexp", "matmul", "mm",
                      "bmm", "baddbmm", "addmm", "einsum", "linear", "dot", "sum", "mean", "cumsum", "cumprod", "prod", "var",
                      "std", "norm", "sigmoid", "tanh", "gelu", "silu", "erf", "sin", "cos", "pow", "rsqrt", "layer_norm",
                      "rms_norm", "group_norm", "batch_norm", "softplus", "mish", "conv1d", "conv2d", "conv3d",
                      "scaled_dot_product_attention", "tensordot", "sdpa"})
MAX_TRACE = 8  # assignments and same-file returns followed from a side


def _join(*found):
    known = [f for f in found if isinstance(f, frozenset) and f]
    return frozenset().union(*known) if known else None


def operand_dtypes(expr: ast.AST, env: dict, aliases: dict[str, str]):
    """The dtypes an operand may have (a frozenset), NOT_OUTPUT, or None when unknown."""
    if isinstance(expr, ast.Constant) or isinstance(expr, (ast.Tuple, ast.List, ast.Dict, ast.JoinedStr)):
        return NOT_OUTPUT
    if isinstance(expr, ast.Name):
        return env.get(expr.id)
    if isinstance(expr, ast.Subscript):
        return operand_dtypes(expr.value, env, aliases)
    if isinstance(expr, ast.Attribute):
        return NOT_OUTPUT if expr.attr in META else operand_dtypes(expr.value, env, aliases) if expr.attr in ("T", "mT", "data") else None
    if isinstance(expr, ast.BinOp):
        sides = [operand_dtypes(s, env, aliases) for s in (expr.left, expr.right)]
        return _join(*sides) or (NOT_OUTPUT if all(s == NOT_OUTPUT for s in sides) else None)
    if isinstance(expr, ast.UnaryOp):
        return operand_dtypes(expr.operand, env, aliases)
    if not isinstance(expr, ast.Call):
        return None
    parts = dotted(expr.func) or []
    last = parts[-1] if parts else ""
    q = qualname(expr.func, aliases) or ""
    if len(parts) == 1 and last in BUILTIN_SCALARS or q.startswith("math."):
        return NOT_OUTPUT  # a Python number
    cast = cast_target(expr)
    if cast and cast[0]:
        return frozenset({cast[0]})
    if cast:  # x.to(dtype), x.to(y.dtype): the dtype that name or tensor holds
        named = _dtype_value(next((k.value for k in expr.keywords if k.arg == "dtype"), expr.args[0] if expr.args else None),
                             env, aliases)
        if named:
            return named
    if last in META and len(parts) > 1:
        return NOT_OUTPUT
    kw = {k.arg: k.value for k in expr.keywords if k.arg}
    if "dtype" in kw:
        d = literal_dtype(kw["dtype"])
        named = frozenset({d}) if d else _dtype_value(kw["dtype"], env, aliases)
        if named:
            return named
    if last in INT_RESULTS:
        return frozenset({"int64"})
    if q.startswith("torch.") and last in DEFAULT_DTYPES and "dtype" not in kw:
        return frozenset({DEFAULT_DTYPES[last]})
    receiver = [expr.func.value] if isinstance(expr.func, ast.Attribute) and not q else []
    for arg in [*receiver, *expr.args]:  # an output is made from its inputs: their dtype, the first known
        found = operand_dtypes(arg, env, aliases)
        if isinstance(found, frozenset):
            return found
    return None



def _rounds(expr: ast.AST, assigned: dict, functions: dict, depth: int = 0) -> bool:
    """Whether a side was made by a rounding computation: a ROUNDING call, ``@``, or a golden
    (``golden_*``, ``*_golden``, ``ref_*``, ``*_ref``, ``reference``), through the names it is
    assigned from and the returns of the same-file functions it calls."""
    if depth > MAX_TRACE:
        return False
    if isinstance(expr, ast.Name):
        return expr.id in assigned and _rounds(assigned[expr.id], assigned, functions, depth + 1)
    if isinstance(expr, ast.BinOp):
        return isinstance(expr.op, ast.MatMult) or any(_rounds(x, assigned, functions, depth + 1) for x in (expr.left, expr.right))
    if isinstance(expr, (ast.Subscript, ast.Attribute, ast.UnaryOp)):
        return _rounds(getattr(expr, "value", None) or expr.operand, assigned, functions, depth + 1)
    if not isinstance(expr, ast.Call):
        return False
    parts = dotted(expr.func) or []
    last = parts[-1] if parts else ""
    if last in ROUNDING or is_golden_name(last) or last == "reference" or last.startswith("ref_") or last.endswith("_ref"):
        return True
    if len(parts) == 1 and last in functions:
        fn = functions[last]
        inner = {t.id: n.value for n in walk_nodes(fn) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        if any(_rounds(r.value, inner, functions, depth + 1) for r in walk_nodes(fn) if isinstance(r, ast.Return) and r.value is not None):
            return True
    receiver = [expr.func.value] if isinstance(expr.func, ast.Attribute) else []
    return any(_rounds(a, assigned, functions, depth + 1) for a in [*receiver, *expr.args])


def _exact_reference(expr: ast.AST, assigned: dict, depth: int = 0) -> bool:
    """Whether a side is its inputs moved or selected with exact operations only (EXACT_OPS,
    casts, indexing; names followed to their assignment in the function), so a correct
    kernel matches it bit for bit."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Name):  # a side: what it was assigned; an operand of an exact op: an input
        value = assigned.get(expr.id)
        return depth > 0 if value is None else depth > 0 or _exact_reference(value, assigned, depth + 1)
    if isinstance(expr, (ast.Constant, ast.Slice)):
        return True
    if isinstance(expr, ast.Subscript):
        return _exact_reference(expr.value, assigned, depth + 1)
    if isinstance(expr, (ast.Tuple, ast.List)):
        return all(_exact_reference(e, assigned, depth + 1) for e in expr.elts)
    if isinstance(expr, ast.Attribute):
        return expr.attr in ("T", "mT", "data") and _exact_reference(expr.value, assigned, depth + 1)
    if isinstance(expr, ast.Call):
        last = (dotted(expr.func) or [""])[-1]
        if not (last in EXACT_OPS or last in DEFAULT_DTYPES or cast_target(expr)):
            return False
        receiver = [expr.func.value] if isinstance(expr.func, ast.Attribute) and (dotted(expr.func) or [""])[0] not in (
            "torch", "np", "numpy", "F") else []
        return all(_exact_reference(a, assigned, depth + 1) for a in [*receiver, *expr.args])
    return False


def _constant(expr: ast.AST, aliases: dict[str, str]) -> bool:
    """A side written as a tensor of constants (``torch.zeros(4)``, ``torch.tensor(1.0)``)."""
    q = qualname(expr.func, aliases) or "" if isinstance(expr, ast.Call) else ""
    return q.startswith(("torch.", "numpy.")) and q.split(".")[-1] in CONSTANT_TENSORS


def _dtype_value(expr, env: dict, aliases: dict[str, str]) -> frozenset | None:
    """The dtypes a non-literal dtype argument holds: a (parametrised) name, or ``y.dtype``."""
    if isinstance(expr, ast.Attribute) and expr.attr == "dtype":
        found = operand_dtypes(expr.value, env, aliases)
    else:
        found = env.get(expr.id) if isinstance(expr, ast.Name) else None
    return found if isinstance(found, frozenset) else None


def _environment(fn: ast.AST, values: dict, aliases: dict[str, str]) -> tuple[dict, dict]:
    """(name -> the dtypes it may hold in ``fn``, name -> the function whose call made it):
    parametrised parameters, then assignments in source order."""
    env = {p: frozenset(d) for p, d in parametrised(fn, values).items()}
    made_by: dict[str, str] = {}
    assigns = sorted((n for n in walk_nodes(fn) if isinstance(n, ast.Assign)), key=lambda n: (n.lineno, n.col_offset))
    for node in assigns:
        found = operand_dtypes(node.value, env, aliases)
        maker = _maker(node.value, made_by)
        for t in node.targets:
            if isinstance(t, ast.Name):
                for table, value in ((env, found if isinstance(found, frozenset) else None), (made_by, maker)):
                    if value is None:
                        table.pop(t.id, None)
                    else:
                        table[t.id] = value
    return env, made_by


INPUT = "<an input>"  # made by a draw or a constructor: compared unchanged, the operator copies it


def _maker(expr: ast.AST, made_by: dict[str, str]) -> str | None:
    """The function whose call an operand is the result of (``run(x)``, ``first`` bound to
    one), or INPUT for a tensor the test created itself."""
    if isinstance(expr, ast.Subscript):
        return _maker(expr.value, made_by)
    if isinstance(expr, ast.Name):
        return made_by.get(expr.id)
    if isinstance(expr, ast.Call):
        parts = dotted(expr.func) or []
        if parts[:1] in (["torch"], ["np"], ["numpy"]):
            return INPUT if parts[-1] in DEFAULT_DTYPES or parts[-1] in CONSTANT_TENSORS else None
        return ".".join(parts) or None
    return None


def _declared_in(nodes, params: dict, aliases: dict[str, str]) -> frozenset:
    """What a test declares for its inputs: its parametrised dtypes, else the ``dtype=`` of the
    tensors it creates and the defaults of its draws."""
    if params:
        return frozenset().union(*params.values())
    found = set()
    for node in nodes:
        if isinstance(node, ast.Call) and (qualname(node.func, aliases) or "").startswith("torch."):
            kw = next((k.value for k in node.keywords if k.arg == "dtype"), None)
            d = literal_dtype(kw) if kw is not None else DEFAULT_DTYPES.get((dotted(node.func) or [""])[-1])
            if d:
                found.add(d)
    return frozenset(found)


def _exact_sites(fn: ast.AST, aliases: dict[str, str]):
    """(node, the two operands, form, whether it is a bare ``assert a == b``) for each exact
    comparison in ``fn`` that is not negated."""
    nodes = [n for n in walk_nodes(fn) if isinstance(n, (ast.Compare, ast.Call))]
    if not any(isinstance(n, ast.Compare) or isinstance(n.func, ast.Attribute) and n.func.attr in ("equal", "eq") for n in nodes):
        return
    parents = parents_of(walk_nodes(fn))
    for node in nodes:
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
            pair, form = (node.left, node.comparators[0]), "=="
        elif isinstance(node, ast.Call) and len(node.args) + len(node.keywords) >= 1:
            parts = dotted(node.func) or []
            q = qualname(node.func, aliases) or ""
            if q in ("torch.equal", "torch.eq") and len(node.args) == 2:
                pair, form = (node.args[0], node.args[1]), q
            elif parts and parts[-1] == "equal" and not q and isinstance(node.func, ast.Attribute) and len(node.args) == 1:
                pair, form = (node.func.value, node.args[0]), ".equal"
            else:
                continue
        else:
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            continue  # asserts a difference
        chain = _ancestors(node, parents)
        if not any(isinstance(a, ast.Assert) or (isinstance(a, ast.Call) and (dotted(a.func) or [""])[-1].lower().startswith("assert"))
                   for a in chain):
            continue  # printed or stored, not what decides the test
        if any(isinstance(a, ast.If) and _names_dtype(a.test) for a in chain):
            continue  # a branch on the dtype: exact only for the dtypes it selects
        under_all = (isinstance(parent, ast.Attribute) and parent.attr == "all") or (
            isinstance(parent, ast.Call) and (qualname(parent.func, aliases) or ".".join(dotted(parent.func) or [])) in ALL_CALLS)
        if form == "torch.equal" or form == ".equal":
            yield node, pair, form, False
        elif under_all:
            yield node, pair, f"{form} under .all()", False
        elif form == "==" and isinstance(parent, ast.Assert) and parent.test is node:
            yield node, pair, form, True


def _ancestors(node: ast.AST, parents: dict) -> list[ast.AST]:
    out = []
    while id(node) in parents:
        node = parents[id(node)]
        out.append(node)
    return out


def _names_dtype(test: ast.AST) -> bool:
    return any((isinstance(n, ast.Name) and "dtype" in n.id.lower()) or (isinstance(n, ast.Attribute) and "dtype" in n.attr.lower())
               or literal_dtype(n) for n in walk_nodes(test) if isinstance(n, (ast.Name, ast.Attribute, ast.Constant)))


def exact_comparisons(ctx: FileContext, tests, reach) -> tuple[list[RawFinding], int | None]:
    """(TS106 findings, the line of the first exact comparison whose dtype could not be told).
    ``reach(test)`` lists the same-file functions a test runs, itself first."""
    if not any(isinstance(n, ast.Compare) and any(isinstance(op, ast.Eq) for op in n.ops)
               or isinstance(n, ast.Attribute) and n.attr in ("equal", "eq") for n in ctx.nodes):
        return [], None
    values = module_values(ctx.tree)
    functions = {n.name: n for n in ctx.tree.body if isinstance(n, FUNCTION_DEFS)}
    found, unsure, done, facts = {}, None, set(), {}
    for test in tests:
        params = parametrised(test, values)
        fns = reach(test)
        declared = None
        for fn in fns:
            if id(fn) not in facts:  # each function read once, whichever tests reach it
                sites = list(_exact_sites(fn, ctx.aliases))
                facts[id(fn)] = (sites, *(_environment(fn, values, ctx.aliases) if sites else ({}, {})),
                                 {t.id: n.value for n in ctx.walk(fn) if isinstance(n, ast.Assign) for t in n.targets
                                  if isinstance(t, ast.Name)} if sites else {})
            sites, env, made_by, assigned = facts[id(fn)]
            for node, pair, form, bare in sites:
                key = (node.lineno, node.col_offset)
                if key in done:
                    continue
                sides = [operand_dtypes(x, env, ctx.aliases) for x in pair]
                makers = {_maker(x, made_by) for x in pair}
                if NOT_OUTPUT in sides or any(_constant(x, ctx.aliases) for x in pair) or INPUT in makers \
                        or (len(makers) == 1 and None not in makers) or any(_exact_reference(x, assigned) for x in pair):
                    done.add(key)  # a constant or an unchanged input, or one function against itself (determinism)
                    continue
                known = _join(*sides)
                if known is not None and any(not is_float(d) for s in sides if isinstance(s, frozenset) for d in s):
                    done.add(key)
                    continue  # an integer or bool side: exact is the criterion
                if known is None and not bare and ctx.spec is None and declared is None:
                    declared = _declared_in((n for f in fns for n in ctx.walk(f)), params, ctx.aliases)
                dtypes = known if known is not None else None if bare or ctx.spec else declared
                if not dtypes or (known is None and not all(is_float(d) for d in dtypes) and not params):
                    if not bare and ctx.spec is None:  # a bare == of unknown operands is most often of Python values
                        unsure = unsure or node.lineno
                    continue
                if ctx.spec is None and not any(_rounds(x, assigned, functions) for x in pair):
                    done.add(key)  # no spec, and nothing says a side was computed with rounding: a copy, a cast, a selection
                    continue
                floats = [d for d in sorted(dtypes) if is_float(d) and _criterion(ctx, d) != "binary_equal"]
                done.add(key)
                if floats:
                    crit = _criterion(ctx, floats[0])
                    where = ctx.spec.op + "'s criterion" if ctx.spec else "TTK's default for an undeclared float"
                    pos = call_pos(node) if isinstance(node, ast.Call) else key
                    found[key] = RawFinding(*pos, CODE, f"{form} compares {', '.join(floats)} outputs bit for bit; "
                                            f"a correct kernel rounds differently from its reference ({where}: {crit})")
    return [found[k] for k in sorted(found)], unsure


def _criterion(ctx: FileContext, dtype: str) -> str:
    return ctx.spec.criteria.get(dtype, V.undeclared_criterion(dtype)) if ctx.spec else V.undeclared_criterion(dtype)


def _reached_functions(test: ast.AST, functions: dict[str, ast.AST]) -> list[ast.AST]:
    """The test and the same-file functions it names, directly or through each other."""
    out, work, seen = [], [test], {test.name}
    while work:
        fn = work.pop()
        out.append(fn)
        for node in walk_nodes(fn):
            if isinstance(node, ast.Name) and node.id in functions and node.id not in seen:
                seen.add(node.id)
                work.append(functions[node.id])
    return out


_exact_memo: list = [None, None, None]  # [tree, spec, TS106 result] of the last file: the findings and the note read it once


def _exact(ctx: FileContext) -> tuple[list[RawFinding], int | None]:
    """The memo holds the tree and spec themselves, not an id: an id is reused once a tree is
    freed, and a later file (or the same file under another spec) must never meet an old result."""
    if not _judged(ctx):
        functions = {n.name: n for n in ctx.tree.body if isinstance(n, FUNCTION_DEFS)}
        _exact_memo[:] = [ctx.tree, ctx.spec, exact_comparisons(ctx, collect_tests(ctx.tree, ctx.module.kernels),
                                                                 lambda t: _reached_functions(t, functions))]
    return _exact_memo[2]


def _judged(ctx: FileContext) -> bool:
    return _exact_memo[0] is ctx.tree and _exact_memo[1] is ctx.spec


def check(ctx: FileContext) -> list[RawFinding]:
    return _exact(ctx)[0]


def undecided(ctx: FileContext) -> str | None:
    """One note when an exact comparison's dtype cannot be told (no spec, nothing declared);
    read after ``check_test`` (families.py runs it first), from what it found."""
    line = _exact_memo[2][1] if _judged(ctx) else None  # check has run: an operator test has its result here
    return None if line is None else (f"{ctx.path}: AU015 TS106 cannot tell the dtype compared exactly at line {line}: "
                                      "no spec found and the test declares no single kind of dtype; pass --spec")
