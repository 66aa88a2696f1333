"""Judge a CANN operator's tests/assets/golden.py against seed 000's golden and third-party rules.

Read statically (nothing is imported or run). Each entry TTK reaches is judged in its own case
mode: a three-party golden casts no floating tensor (Promote raised it, seed 000 §3, §8); a
two-party golden widens no further than the kernel (§3, §5); a third-party leg is torch and,
where it widens, narrows back at exit (§1, §6, §8). The kernel's widening comes from ``kernel``; where it
is not plain, findings that need it are warnings.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

from kb_tools.cann.golden_casts import LOW, WIDTH, cast_target
from kb_tools.cann.golden_reach import Context, Entry, GoldenModule, Reach, entries
from kb_tools.cann.kernel import MAX_BYTES, KernelFacts, kernel_facts, read_source
from kb_tools.cann.opdef import read_opdef
from kb_tools.syntax import walk_nodes

GOLDEN = Path("tests") / "assets" / "golden.py"


@dataclass(frozen=True)
class GoldenFinding:
    """One golden / third-party violation at path:line, with the criterion and the fix."""

    path: str
    line: int
    code: str
    severity: str
    message: str
    fix: str


def opdef_tensors(folder: Path) -> list:
    """The tensors every OpDef file of the folder registers (read only when a rule needs them)."""
    host = folder / "op_host"
    defs = sorted(p for p in host.glob("*_def.cpp") if p.is_file()) if host.is_dir() else []  # no FIFO
    return [t for path in defs for t in read_opdef(path, str(path)).tensors]


def output_floats(tensors: list) -> set[str]:
    """Floating dtypes the OpDef registers for an output."""
    return {d for t in tensors if t.kind == "output" for d in t.dtypes if d in WIDTH}


def handed_dtypes(tensors: list) -> tuple[frozenset[str] | None, dict[str, frozenset[str]]]:
    """What a two-party golden can be handed: the floats the OpDef registers for any tensor (None
    when an OpDef is missing or a tensor's dtypes are unresolved), and each input's dtypes."""
    if not tensors or any(t.unresolved for t in tensors):
        return None, {}
    inputs: dict[str, set[str]] = {}
    for t in tensors:
        if t.kind == "input" and t.dtypes:
            inputs.setdefault(t.name, set()).update(t.dtypes)
    floats = frozenset(d for t in tensors for d in t.dtypes if d in WIDTH)
    return floats, {name: frozenset(d) for name, d in inputs.items()}


def _handed_as(tensors: list, dtype: str) -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """What a two-party golden is handed in a case of ``dtype``: each tensor that registers it
    holds it (the usual OpDef, one float shared by its float tensors), the others keep theirs."""
    floats = {dtype} | {d for t in tensors if dtype not in t.dtypes for d in t.dtypes if d in WIDTH}
    inputs: dict[str, set[str]] = {}
    for t in tensors:
        if t.kind == "input" and t.dtypes:
            inputs.setdefault(t.name, set()).update({dtype} if dtype in t.dtypes else t.dtypes)
    return frozenset(floats), {name: frozenset(d) for name, d in inputs.items()}


def _criterion(entry: Entry, rel: str) -> str:
    if entry.mode == "unknown":
        return f"criterion not readable (tolerance computed at {rel}:{entry.tolerance_line}): case mode unknown"
    if not entry.criteria:
        return "TTK's default criterion mix_tolerance (no tolerance declared): two-party"
    cc = [(d, line) for d, (s, line) in entry.criteria.items() if s == "cross_check"]
    if cc:
        dtype, line = cc[0]
        return f"criterion cross_check for {dtype} ({rel}:{line}): three-party, Promote on"
    dtype, (standard, line) = next(iter(entry.criteria.items()))
    return f"criterion {standard} for {dtype} ({rel}:{line}): two-party"


def _judge_golden(mod, entry, rel, kernel, out, opdef):
    promoted = entry.mode == "three_party"
    handed = functools.cache(lambda: handed_dtypes(opdef())) if entry.mode == "two_party" else None
    ctx = Context(promoted=promoted, numpy_inputs=entry.numpy_inputs, handed=handed)
    where = _criterion(entry, rel)
    widens = False
    reached: dict[int, ast.FunctionDef] = {}
    reach = Reach(mod, ctx)
    calls_for = functools.cache(lambda dtype: _calls_for(mod, entry, opdef, handed, dtype))
    for call, func, exits in reach.calls(entry.functions):
        reached[id(func)] = func
        found = cast_target(call, reach.local(func)[1])
        if not found:
            continue
        target, line = found
        widens |= WIDTH[target] >= 32
        if entry.mode in ("three_party", "unknown"):
            severity = "error" if promoted else "warning"
            if exits:
                out.append(GoldenFinding(rel, line, "GD107", severity,
                                         f"{entry.key}: the golden casts its result to {target} at exit in {func.name}(), undoing Promote; {where}",
                                         "return the result in the dtype it was computed in, or cast to the handed output_dtypes[i]"))
            else:
                out.append(GoldenFinding(rel, line, "GD102", severity,
                                         f"{entry.key}: the golden casts to {target} by name in {func.name}(); {where}",
                                         "drop the cast: Promote already hands float32/float64 tensors"))
            continue
        if target == "float32":
            # judged per low float that reaches the cast: an error where the kernel certainly computes it in T
            bare = [d for d in sorted(kernel.float_dtypes & LOW) if kernel.widening_of(d)[0] == "none"
                    and (calls_for(d) is None or id(call) in calls_for(d))]
            if bare and not (exits and _returned_unchanged(call, func)):
                names = ", ".join(bare)
                out.append(GoldenFinding(rel, line, "GD108", "error",
                                         f"{entry.key}: the two-party golden computes {names} in float32 in {func.name}(), wider than "
                                         f"the kernel's widening for {names} (none, {kernel.widening_of(bare[0])[1]}); {where}",
                                         f"widen only as the kernel does (none for {names}) and narrow at the same points"))
        elif target in LOW and not exits and (wide := [d for d in _input_floats(call, func, handed)
                                                       if WIDTH[d] > WIDTH[target] and id(call) in (calls_for(d) or ())]):
            names = ", ".join(wide)  # the golden rounds a wider input down before computing on it
            out.append(GoldenFinding(rel, line, "GD103", "error",
                                     f"{entry.key}: the two-party golden casts its input down to {target} in {func.name}() where "
                                     f"the OpDef hands it {names}, rounding away what the kernel computes with; {where}",
                                     "compute on the input in its own dtype (or widened as the kernel widens it); narrow only the result, at exit"))
        elif _wider_than_kernel(target, kernel) and not (exits and _returned_unchanged(call, func)):
            certain = kernel.widening != "unknown" or (target == "float64" and not kernel.names_double)
            severity = "error" if certain else "warning"
            out.append(GoldenFinding(rel, line, "GD108", severity,
                                     f"{entry.key}: the two-party golden computes in {target} in {func.name}(), wider than the kernel's widening "
                                     f"({kernel.widening}, {kernel.widening_at}); {where}",
                                     f"widen only as the kernel does ({'none' if kernel.widening == 'none' else 'float32'}) and narrow at the same points"))
    _narrower_than_kernel(entry, rel, kernel, widens, where, out, opdef, list(reached.values()))


def _input_floats(call: ast.Call, func: ast.FunctionDef, handed) -> list[str]:
    """The floats the OpDef registers for the input a cast converts (``x1.astype("float16")``
    where ``x1`` is a parameter of ``func`` named as an OpDef input), sorted; none for anything else."""
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if handed is None or not isinstance(receiver, ast.Name):
        return []
    params = {a.arg for a in func.args.posonlyargs + func.args.args + func.args.kwonlyargs}
    inputs = handed()[1]
    return sorted(d for d in inputs.get(receiver.id, ()) if d in WIDTH) if receiver.id in params else []


def _calls_for(mod, entry, opdef, handed, dtype) -> frozenset[int] | None:
    """The ids of the calls a two-party entry reaches in a case of ``dtype`` (its dtype guards
    decided for that dtype), or None where the OpDef does not say what the golden is handed."""
    floats = handed()[0] if handed else None
    if floats is None or dtype not in floats:
        return None
    tensors = opdef()
    ctx = Context(promoted=False, numpy_inputs=entry.numpy_inputs, handed=functools.cache(lambda: _handed_as(tensors, dtype)))
    return frozenset(id(call) for call, _, _ in Reach(mod, ctx).calls(entry.functions))


# methods that convert a value without computing on it
_CONVERSIONS = frozenset({"numpy", "astype", "to", "type", "cpu", "detach", "contiguous", "float", "double",
                          "half", "bfloat16", "clone", "copy", "view", "reshape", "tolist", "item"})


def _returned_unchanged(call: ast.Call, func: ast.FunctionDef) -> bool:
    """A conversion whose value the entry returns through conversions only
    (``return res.float().numpy().astype(d)``): nothing is computed in the dtype it casts to."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr in _CONVERSIONS):
        return False  # np.sum(x, dtype=...) and the like compute in the dtype they name
    parents = {id(child): node for node in ast.walk(func) for child in ast.iter_child_nodes(node)}
    node = call
    while True:
        up = parents.get(id(node))
        top = parents.get(id(up)) if isinstance(up, ast.Attribute) and up.value is node else None
        if not (isinstance(top, ast.Call) and top.func is up and up.attr in _CONVERSIONS):
            return isinstance(up, ast.Return)
        node = top


# calls that round their result (exact ones such as abs, max, neg, copies and views are left out)
_ROUNDING = frozenset({
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "fmod",
    "remainder", "mod", "pow", "power", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt",
    "rsqrt", "reciprocal", "square", "sin", "cos", "tan", "sinh", "cosh", "tanh", "asin", "acos", "atan",
    "atan2", "sinc", "sigmoid", "erf", "erfc", "erfinv", "lgamma", "digamma", "sum", "mean", "prod",
    "cumsum", "cumprod", "matmul", "dot", "mm", "bmm", "einsum", "var", "std", "norm", "softmax",
    "log_softmax", "addcmul", "addcdiv", "lerp", "hypot", "logaddexp"})
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


_SIZE_CALLS = frozenset({"len", "int", "range", "list", "tuple"})


def _size_like(node: ast.AST) -> bool:
    """A container literal, a ``len(...)``-like call or ``.shape``/``.ndim``/``.size``: arithmetic
    on it is Python bookkeeping (shapes, indices), not a tensor operation."""
    if isinstance(node, (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp)):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in _SIZE_CALLS
    while isinstance(node, ast.Subscript):
        node = node.value
    return isinstance(node, ast.Attribute) and node.attr in ("shape", "ndim", "size")


def _rounding_steps(functions: list[ast.FunctionDef]) -> int:
    """How many rounding operations the reached functions write (arithmetic operators but on two
    constants or on size bookkeeping, and calls named in _ROUNDING); dead branches count too."""
    steps = 0
    for func in functions:
        for node in walk_nodes(func):
            if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH):
                constants = isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant)
                steps += not (constants or _size_like(node.left) or _size_like(node.right))
            elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
                steps += (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) in _ROUNDING
    return steps


def _narrower_than_kernel(entry, rel, kernel, widens, where, out, opdef, reached):
    """GD103: a two-party golden for half output dtypes that never widens, while the kernel
    computes them in float32 (seed 000 §4: the two-party golden widens as far as the NPU does).
    torch and numpy compute one half op in float and round once, as the kernel does, so a golden
    that writes a single rounding operation is not reported; a chain of them is, as a warning
    (whether the chain runs on half tensors is not weighed)."""
    if entry.mode != "two_party" or widens or not entry.functions or kernel.widening != "float32":
        return
    if _rounding_steps(reached or entry.functions) < 2:
        return
    if not kernel.float_dtypes & LOW:
        return
    outputs = output_floats(opdef())
    halves = sorted(d for d in (set(entry.criteria) or outputs) & outputs & LOW if kernel.widening_of(d)[0] != "none")
    if not halves or any(_constructs_wide(node) for f in entry.functions for node in walk_nodes(f)):
        return
    out.append(GoldenFinding(rel, entry.functions[0].lineno, "GD103", "warning",
                             f"{entry.key}: the two-party golden never widens {', '.join(halves)}, while the kernel computes "
                             f"them in float32 ({kernel.widening_at}); where it chains ops in {', '.join(halves)} it rounds "
                             f"after each, the kernel once; {where}",
                             "cast the half inputs to float32 where the kernel widens, compute there, and narrow to the "
                             "output dtype at exit as the kernel's store does"))


def _constructs_wide(node: ast.AST) -> bool:
    """``np.float32(x)`` / ``numpy.float64(x)``: a widening written as a constructor, not a cast."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
            and node.func.attr in ("float32", "float64", "double") and isinstance(node.func.value, ast.Name)
            and node.func.value.id in ("np", "numpy"))


def _wider_than_kernel(target: str, kernel: KernelFacts) -> bool:
    """float64 where the OpDef registers none (float32 is judged per dtype in _judge_golden)."""
    return target == "float64" and "float64" not in kernel.float_dtypes


def _judge_leg(mod, entry, rel, kernel, out, opdef):
    where = _criterion(entry, rel)
    if entry.framework.lower() != "torch":
        out.append(GoldenFinding(rel, entry.line, "GD109", "error",
                                 f"{entry.key}: the third-party leg is written in {entry.framework}, not torch; {where}",
                                 "write the GPU leg in torch (seed 000 §6): it also gives the performance data"))
        return
    narrowest = min((WIDTH.get(d, 64) for d in entry.criteria), default=64)
    widened, narrows = [], False
    for call, func, _ in Reach(mod, Context(promoted=False, numpy_inputs=False)).calls(entry.functions):
        found = cast_target(call, mod.scope(func))
        if found and WIDTH[found[0]] > narrowest:
            widened.append(found)
        elif found and WIDTH[found[0]] <= narrowest:
            narrows = True
        elif isinstance(call.func, ast.Attribute) and call.func.attr in ("to", "astype", "type"):
            narrows = True
    if widened and not narrows and output_floats(opdef()):  # integer outputs (indices) have nothing to narrow
        target, line = widened[0]
        out.append(GoldenFinding(rel, line, "GD110", "error",
                                 f"{entry.key}: the third-party leg widens to {target} and never narrows back at exit; {where}",
                                 "cast every output back to its declared dtype (the input's dtype) before returning"))
    low = sorted(d for d in set(entry.criteria) & LOW if kernel.widening_of(d)[0] != "none")
    if entry.functions and not widened and low and kernel.widening == "float32":
        # torch may still accumulate half in float inside its own kernels: a warning, not an error
        out.append(GoldenFinding(rel, entry.functions[0].lineno, "GD110", "warning",
                                 f"{entry.key}: the third-party leg never widens {', '.join(low)}, while the kernel computes "
                                 f"them in float32 ({kernel.widening_at}); {where}",
                                 "cast the half inputs to float32 where the kernel does, and narrow back at exit"))


def judge_golden(golden: Path, rel: str | None = None, tree: ast.Module | None = None) -> tuple[list[GoldenFinding], str | None]:
    """Findings for one golden.py (path relative as ``rel``), and an error line if it cannot be
    read; ``tree``, when the caller parsed the file already, is used instead of parsing it again."""
    rel = rel or str(golden)
    if tree is None:
        text = read_source(golden)
        if text is None:
            return [], f"{rel}:1: cannot read the golden (missing, not a file, or over {MAX_BYTES >> 20} MiB)"
        try:
            tree = ast.parse(text.lstrip("\ufeff"), filename=rel)
        except SyntaxError as exc:
            return [], f"{rel}:{exc.lineno or 1}: the golden does not parse: {exc.msg}"
        except (ValueError, RecursionError) as exc:
            return [], f"{rel}:1: the golden does not parse: {exc}"
    mod = GoldenModule(tree)
    suffix = GOLDEN.as_posix()
    absolute = golden.absolute()
    folder = absolute.parents[2] if absolute.as_posix().endswith(suffix) else absolute.parent
    shown = rel[: -len(suffix)].rstrip("/") or "." if rel.endswith(suffix) else str(folder)
    kernel = kernel_facts(folder, shown)
    opdef = functools.cache(lambda: opdef_tensors(folder))  # the OpDef, read once and only if a rule asks
    out: list[GoldenFinding] = []
    try:
        for entry in entries(mod, folder.name):
            if entry.role == "golden":
                _judge_golden(mod, entry, rel, kernel, out, opdef)
            elif entry.mode == "three_party":
                _judge_leg(mod, entry, rel, kernel, out, opdef)
    except RecursionError:
        return [], f"{rel}:1: the golden nests expressions too deeply to judge"
    unique = {(f.line, f.code): f for f in out}
    return sorted(unique.values(), key=lambda f: (f.line, f.code)), None


def golden_files(root: Path) -> list[Path]:
    """Every operator's golden.py under ``root`` (an operator, a category or a repository)."""
    if (root / GOLDEN).is_file():
        return [root / GOLDEN]
    found = []
    for path in sorted(root.rglob("golden.py")):
        if path.parent.name == "assets" and path.parent.parent.name == "tests" and not path.is_symlink():
            found.append(path)
    return found
