"""The golden family (GDxxx): what a CPU golden must not do, read from its source.

* GD101 (golden-framework): the golden imports a kernel framework or the implementation it
  judges (a ``*_wrapper``/``*_impl``/``*_kernel`` module, the spec's wrapper, or a module of
  the same project, beside the golden or one folder up, that defines ``@jit`` kernels), so
  it is no longer an independent reference.
* GD102 (golden-promote): in a three-party case (a float criterion is ``cross_check``) the
  golden casts a floating tensor; Promote has already raised it (seed 000 §3).
* GD103 (golden-follows-dut-widening): in a two-party case the golden casts to a dtype that
  is neither declared nor a widening target, and narrower than the DUT's widening.
* GD104 (integer-narrowing): integer division or remainder on tensors in a function that
  guards neither zero divisors nor ``INT_MIN / -1``.
* GD106 (golden-promote, golden-follows-dut-widening; a warning): no spec is found, so the
  case mode is unknown, and the golden casts its floating result back at exit (to a half
  dtype, or to the input's dtype after widening to fp32): one of GD102 and GD103's readings
  applies, and only the spec says which.
* GD105 (third-party-narrowing, on third-party legs): the exit cast sits only on the branch
  taken for floating outputs (``if y.is_floating_point(): y = y.to(declared)``, or ``... if
  x.is_floating_point() else y``), so an integer output leaves the leg widened.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

from kb_tools.audit.casts import WIDTH, cast_target, dtype_name, is_float, is_int
from kb_tools.audit.family_context import FileContext, op_candidates
from kb_tools.audit.findings import RawFinding, call_pos
from kb_tools.audit.module import FUNCTION_DEFS
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.roles import KERNEL_FRAMEWORKS
from kb_tools.audit.tables import TORCH_CONSTRUCTORS
from kb_tools.kb import vocabulary as V

IMPL_SUFFIXES = ("_wrapper", "wrappers", "_impl", "_kernel", "kernels")
DIVISION_FUNCS = frozenset({"floor_divide", "remainder", "fmod", "floordiv", "floormod", "truncatediv", "truncatemod", "mod"})
ROUNDED_DIVS = frozenset({"div", "divide"})  # division only with rounding_mode=
TENSOR_MODULES = ("torch", "numpy", "tensorflow")
MAX_LOCAL_MODULE_BYTES = 2_000_000  # a local module read for kernels: a bounded prefix
FRAMEWORK_IMPORT = re.compile(rf"^\s*(?:import|from)\s+(?:{'|'.join(KERNEL_FRAMEWORKS)})\b", re.M)
JIT_DECORATOR = re.compile(r"^\s*@\s*[\w.]*\bjit\b", re.M)
GENERIC_STEMS = frozenset({"golden", "goldens", "legs", "reference", "ref", "tests", "test", "src", "ops"})  # not an op's name
NOT_TENSOR_RESULTS = frozenset({"item", "tolist", "numel", "size", "dim", "iinfo", "finfo", "prod", "Size"})


def _impl_module(module: str, spec_stem: str | None) -> bool:
    parts = module.split(".")
    return parts[0] in KERNEL_FRAMEWORKS or any(p.endswith(IMPL_SUFFIXES) for p in parts) or (
        spec_stem is not None and spec_stem in parts)


def _module_file(module: str, level: int, here: Path) -> Path | None:
    """The source file an import names, looked up where a golden run as a script finds it:
    beside the golden, or one folder up (``sys.path.insert(0, parent)``); a relative import
    from the package it names. None when it is not there (an installed package)."""
    parts = module.split(".") if module else []
    if level > len(here.parents):
        return None
    bases = [here.parents[level - 1]] if level else [here.parent, here.parent.parent]
    for base in bases:
        for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if parts and candidate.is_file():
                return candidate
    return None


@lru_cache(maxsize=1024)
def defines_kernels(path: Path) -> bool:
    """Whether a local module holds device code: it imports a kernel framework and decorates
    something with its ``jit``. Read as text, bounded: it is not audited here."""
    try:
        with path.open("rb") as handle:
            text = handle.read(MAX_LOCAL_MODULE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return False
    return bool(FRAMEWORK_IMPORT.search(text) and JIT_DECORATOR.search(text))


def _local_implementation(node: ast.AST, here: Path) -> str | None:
    """The name of a same-project module this import reads that defines kernels."""
    if isinstance(node, ast.Import):
        targets = [(a.name, 0) for a in node.names]
    else:
        targets = [(node.module or "", node.level)] + [(f"{node.module}.{a.name}" if node.module else a.name, node.level)
                                                      for a in node.names]
    for module, level in targets:
        found = _module_file(module, level, here)
        if found is not None and found.resolve() != here and defines_kernels(found.resolve()):
            return module
    return None


def imports_implementation(ctx: FileContext) -> list[RawFinding]:
    spec_stem = ctx.wrapper_stem
    here = Path(ctx.path).resolve()
    out = []
    for node in ctx.nodes:
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names] if node.module else []
        else:
            continue
        hit = next((n for n in names if _impl_module(n, spec_stem)), None)
        local = None if hit else _local_implementation(node, here)
        if hit:
            out.append(RawFinding(node.lineno, node.col_offset, "GD101", f"the golden imports `{hit}`: a golden that "
                                  "shares the kernel's framework or code cannot catch its errors"))
        elif local:
            out.append(RawFinding(node.lineno, node.col_offset, "GD101", f"the golden imports `{local}`, a module of this "
                                  "project that defines kernels: move the reference out of the implementation's file"))
    return out


def _literal_casts(ctx: FileContext):
    for node in ctx.nodes:
        if isinstance(node, ast.Call):
            cast = cast_target(node)
            if cast and cast[0]:
                yield node, cast[0]


def three_party_casts(ctx: FileContext) -> list[RawFinding]:
    spec = ctx.spec
    if spec is None or not any(spec.criteria.get(d) == "cross_check" for d in spec.dtypes if is_float(d)):
        return []
    return [RawFinding(*call_pos(call), "GD102", f"casts to {dtype} in the golden of a three-party case (cross_check): "
                       "Promote already raised the floats; a cast collapses the dual reference")
            for call, dtype in _literal_casts(ctx) if is_float(dtype)]


def narrower_than_widening(ctx: FileContext) -> list[RawFinding]:
    spec = ctx.spec
    if spec is None or not spec.widening or any(spec.criteria.get(d) == "cross_check" for d in spec.dtypes if is_float(d)):
        return []
    allowed = set(spec.dtypes) | set(spec.widening.values())
    out = []
    for call, dtype in _literal_casts(ctx):
        same_kind = [w for w in spec.widening.values() if (is_float(w) and is_float(dtype)) or (is_int(w) and is_int(dtype))]
        if dtype in allowed or not same_kind or WIDTH[dtype] >= max(WIDTH[w] for w in same_kind):
            continue
        out.append(RawFinding(*call_pos(call), "GD103", f"casts to {dtype}, which {spec.op} neither declares nor widens to; "
                              f"the DUT computes in {max(same_kind, key=WIDTH.get)}"))
    return out


def _tensor_names(fn: ast.AST, aliases: dict[str, str]) -> set[str]:
    """Names a function evidently uses as tensors: results of torch/numpy/tf calls, receivers
    of tensor methods, arguments of torch functions."""
    names = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            q = qualname(node.value.func, aliases) or ""
            if q.split(".")[-1] in NOT_TENSOR_RESULTS:
                continue
            if q.split(".")[0] in TENSOR_MODULES or (isinstance(node.value.func, ast.Attribute) and isinstance(node.value.func.value, ast.Name)
                                                     and node.value.func.value.id in names):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Call):
            q = qualname(node.func, aliases) or ""
            if q.split(".")[0] in TENSOR_MODULES and q.split(".")[-1] not in TORCH_CONSTRUCTORS:
                names.update(a.id for a in node.args if isinstance(a, ast.Name))  # torch.remainder(a, b); not torch.randn(n)
            if isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) and node.func.attr in (
                    "to", "numpy", "int", "long", "short", "char", "byte", "astype", "view", "reshape", "clone", "masked_fill"):
                names.add(node.func.value.id)
        elif isinstance(node, ast.Attribute) and node.attr in ("dtype", "shape") and isinstance(node.value, ast.Name):
            names.add(node.value.id)
    return names


def _names_integer_dtype(fn: ast.AST) -> bool:
    """Whether a function names an integer dtype (torch.int32, np.int8, "int64"): without a
    spec, the evidence that its divisions are integer divisions."""
    return any(is_int(dtype_name(n)) for n in ast.walk(fn) if isinstance(n, (ast.Attribute, ast.Constant)))


def _division_sites(fn: ast.AST, aliases: dict[str, str]):
    tensors = None
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod)):
            tensors = _tensor_names(fn, aliases) if tensors is None else tensors
            if any(isinstance(side, ast.Name) and side.id in tensors for side in (node.left, node.right)):
                yield node, "//" if isinstance(node.op, ast.FloorDiv) else "%"
        elif isinstance(node, ast.Call):
            parts = dotted(node.func) or []
            name = parts[-1] if parts else None
            q = qualname(node.func, aliases) or ""
            tensor_call = q.split(".")[0] in TENSOR_MODULES or (isinstance(node.func, ast.Attribute) and len(parts) != 1)
            if name in DIVISION_FUNCS and tensor_call:
                yield node, name
            elif name in ROUNDED_DIVS and tensor_call and any(k.arg == "rounding_mode" for k in node.keywords):
                yield node, f"{name}(rounding_mode=...)"


def _guards(fn: ast.AST) -> tuple[bool, bool]:
    """(a zero divisor is checked, INT_MIN / -1 is checked) somewhere in the function."""
    zero = minus_one = False
    for node in ast.walk(fn):
        values = []
        if isinstance(node, ast.Compare):
            values = [node.left, *node.comparators]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("eq", "ne", "where", "isin"):
            values = list(node.args)
        elif isinstance(node, ast.Attribute) and node.attr == "min" and isinstance(node.value, ast.Call) and (dotted(node.value.func) or [""])[-1] == "iinfo":
            minus_one = True
        for v in values:
            if isinstance(v, ast.Constant) and v.value == 0 and not isinstance(v.value, bool):
                zero = True
            if (isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.USub) and isinstance(v.operand, ast.Constant) and v.operand.value == 1) or (
                    isinstance(v, ast.Constant) and v.value == -1):
                minus_one = True
    return zero, minus_one


def unguarded_division(ctx: FileContext) -> list[RawFinding]:
    if ctx.spec is not None and not any(d in V.INTEGER_DTYPES for d in ctx.spec.dtypes):
        return []
    out = []
    for fn in ctx.functions:
        inner = {id(n) for f in ast.walk(fn) if f is not fn and isinstance(f, FUNCTION_DEFS) for n in ast.walk(f)}
        sites = [(n, what) for n, what in _division_sites(fn, ctx.aliases) if id(n) not in inner]
        if not sites or (ctx.spec is None and not _names_integer_dtype(fn)):
            continue
        zero, minus_one = _guards(fn)
        missing = [g for g, ok in (("zero divisors", zero), ("INT_MIN / -1", minus_one)) if not ok]
        if missing:
            out.extend(RawFinding(n.lineno, n.col_offset, "GD104", f"integer {what} in `{fn.name}` with no guard for "
                                  f"{' or '.join(missing)}") for n, what in sites)
    return out


def _exit_names(fn: ast.AST) -> set[str]:
    """Names a function returns (``return y``, ``return y, z``)."""
    return {n.id for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None
            for n in ast.walk(r.value) if isinstance(n, ast.Name)}


def _outermost(value: ast.AST) -> list[ast.AST]:
    """What a returned value is made of last: itself, or the items of a tuple or list it is
    (``return y.half()``, ``return [out.astype(np.float16)]``); not the casts of its inputs."""
    return [e for item in value.elts for e in _outermost(item)] if isinstance(value, (ast.Tuple, ast.List)) else [value]


def _cast_back(call: ast.Call, inputs: set[str]) -> str | None:
    """What a cast narrows to when it casts back: a half dtype, or an input's dtype
    (``y.to(x.dtype)``, ``y.to(dtype)`` with ``dtype = x.dtype`` or a ``dtype`` parameter,
    ``y.type_as(x)``)."""
    if not isinstance(call.func, ast.Attribute):
        return None
    if call.func.attr == "type_as" and len(call.args) == 1:
        return "the input's dtype"
    cast = cast_target(call)
    if cast is not None and cast[0] is not None:
        return cast[0] if cast[0] in V.HALF_DTYPES else None
    args = [*call.args, *(k.value for k in call.keywords if k.arg == "dtype")]
    if call.func.attr in ("to", "astype", "type") and any(
            (isinstance(a, ast.Attribute) and a.attr == "dtype") or (isinstance(a, ast.Name) and a.id in inputs) for a in args):
        return "the input's dtype"
    return None


def unjudged_cast_back(ctx: FileContext) -> list[RawFinding]:
    """GD106: with no spec, a golden that casts its result back at exit cannot be judged: a
    three-party case forbids it (GD102), a two-party case asks for it (GD103)."""
    if ctx.spec is not None:
        return []
    name = next((n for n in op_candidates(Path(ctx.path)) if n not in GENERIC_STEMS), "<op>")
    out = []
    for fn in ctx.functions:
        widens = any(isinstance(n, ast.Call) and (cast_target(n) or (None,))[0] in ("float32", "float64") for n in ast.walk(fn))
        inputs = _declared_names(fn) | {a.arg for a in fn.args.args + fn.args.kwonlyargs if "dtype" in a.arg.lower()}
        exits = _exit_names(fn)
        values = [r.value for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None]
        values += [a.value for a in ast.walk(fn) if isinstance(a, ast.Assign)
                   and any(isinstance(t, ast.Name) and t.id in exits for t in a.targets)]
        for call in (c for v in values for c in _outermost(v)):
            if isinstance(call, ast.Call):
                target = _cast_back(call, inputs)
                if target and (widens or target in V.HALF_DTYPES):  # a float result raised, then narrowed back
                    out.append(RawFinding(*call_pos(call), "GD106", f"the golden casts its result back to {target} at exit, "
                                          f"and no spec says the case mode: ops/{name}.yaml was not found (three-party: "
                                          "the cast is GD102; two-party: due only to the declared dtype)"))
    return sorted(set(out), key=lambda f: (f.line, f.col))


def check_golden(ctx: FileContext) -> list[RawFinding]:
    return [*imports_implementation(ctx), *three_party_casts(ctx), *narrower_than_widening(ctx), *unguarded_division(ctx),
            *unjudged_cast_back(ctx)]


FLOAT_TESTS = ("is_floating_point", "is_float", "is_complex")


def _float_test(test: ast.AST) -> bool:
    """A condition that asks whether something is floating (``x.is_floating_point()``,
    ``torch.is_floating_point(x)``, ``dtype in FLOAT_DTYPES``, ``dtype.is_floating_point``)."""
    for node in ast.walk(test):
        parts = dotted(node.func if isinstance(node, ast.Call) else node) if isinstance(node, (ast.Call, ast.Attribute, ast.Name)) else None
        if parts and (parts[-1] in FLOAT_TESTS or "float" in parts[-1].lower()):
            return True
    return False


def _declared_names(fn: ast.AST) -> set[str]:
    """Names bound to an input's dtype (``declared = x.dtype``): what the leg narrows back to."""
    return {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute)
            and n.value.attr == "dtype" for t in n.targets if isinstance(t, ast.Name)}


def _exit_casts_in(nodes, declared: set[str]) -> bool:
    """A cast back to the declared dtype (``y.to(declared)``, ``y.to(x.dtype)``, ``y.type(declared)``)."""
    for body in nodes:
        for n in ast.walk(body):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("to", "type", "astype"):
                for arg in [*n.args, *(k.value for k in n.keywords if k.arg == "dtype")]:
                    if (isinstance(arg, ast.Name) and arg.id in declared) or (isinstance(arg, ast.Attribute) and arg.attr == "dtype"):
                        return True
    return False


def float_only_exit(ctx: FileContext) -> list[RawFinding]:
    spec = ctx.spec
    if spec is not None and not any(is_int(d) and spec.widening.get(d, d) != d for d in spec.dtypes):
        return []  # no integer output is widened: nothing can leave the leg wide
    out = []
    for fn in ctx.functions:
        declared = _declared_names(fn)
        for node in ast.walk(fn):
            if isinstance(node, ast.If):
                body, orelse = node.body, node.orelse
            elif isinstance(node, ast.IfExp):
                body, orelse = [node.body], [node.orelse]
            else:
                continue
            if not _float_test(node.test):
                continue
            negated = isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
            float_branch, other = (orelse, body) if negated else (body, orelse)
            if _exit_casts_in(float_branch, declared) and not _exit_casts_in(other, declared):
                out.append(RawFinding(node.lineno, node.col_offset, "GD105", "the third-party leg casts back to the declared "
                                      "dtype only on the floating branch; an integer output leaves it at the widened dtype"))
    return sorted(set(out), key=lambda f: (f.line, f.col))


def check_third_party(ctx: FileContext) -> list[RawFinding]:
    return [*imports_implementation(ctx), *float_only_exit(ctx)]
