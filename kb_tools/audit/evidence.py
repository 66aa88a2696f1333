"""What a function's own code says about its names before the walk: which it uses as
tensors (metadata or a tensor-only method read from them, a torch function called on them,
passed to a kernel launch) and which as Python numbers (integer idioms, shapes, flags).

A parameter passed to a launch is a tensor unless the function also uses it as a number:
Triton and PyPTO kernels take both, and ``n // ratio`` says which ``ratio`` is.
"""

from __future__ import annotations

import ast

from kb_tools.audit import tables as tb
from kb_tools.audit.dispatch import Tables
from kb_tools.audit.module import launch_target
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.node_index import NodeIndex
from kb_tools.syntax import walk_nodes

_ASSIGN, _ATTRIBUTE, _CALL, _NAME = ast.Assign, ast.Attribute, ast.Call, ast.Name


def tensor_evidence(fn, index: NodeIndex, launchers: set[str], aliases: dict[str, str], _depth: int = 0) -> set[str]:
    """Names the function itself uses as tensors: metadata or a tensor-only method read
    from them, a torch function called on them, a slice of them handed to a launch, or
    (parameters without a default that are never used as Python numbers) passed to a kernel
    launch, directly or in a list that the launch unpacks (``inputs = [x, w, out]; kernel(*inputs)``),
    or passed through a dispatch table to a parameter that a function of the table uses as a tensor.
    ``fn``'s nodes are read from ``index`` by class: only what the sets below collect depends on them."""
    names, launched = set(), set()
    tables = Tables.of(index)
    no_default = _params_without_default(fn)
    packed: dict[str, list] = {}  # list and tuple literals bound to a name
    keyed: dict[str, list] = {}  # the values put in a dict bound to a name (``dict(a=x)``, ``{'a': x}``, ``d['a'] = x``)
    derived: dict[str, str] = {}  # ``t = src.view(...)``: t is a tensor only if src is one
    for node in index.of(_ASSIGN, fn):  # in walk order: a later binding of a name replaces an earlier one
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript) \
                and isinstance(node.targets[0].value, ast.Name):
            keyed.setdefault(node.targets[0].value.id, []).append(node.value)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
            if isinstance(value, (ast.List, ast.Tuple)):
                packed[target] = value.elts
            elif isinstance(value, ast.Dict):
                keyed.setdefault(target, []).extend(value.values)
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
                keyed.setdefault(target, []).extend(kw.value for kw in value.keywords)
            elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                    and isinstance(value.func.value, ast.Name) and value.func.attr in tb.TENSOR_TO_TENSOR:
                derived[target] = value.func.value.id
    for node in index.of(_ATTRIBUTE, fn):
        if node.attr in tb.META_ATTRS and isinstance(node.value, ast.Name) \
                and isinstance(node.ctx, ast.Load):  # ctx.shape = shape stores on ctx: no tensor read
            names.add(node.value.id)
    for node in index.of(_CALL, fn):  # what it adds to sets does not depend on the order of the two loops
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.attr in tb.TENSOR_ONLY_METHODS:
            names.add(func.value.id)
        elif (torch_func := torch_name(qualname(func, aliases))) and node.args:
            if torch_func not in tb.TORCH_CONSTRUCTORS:
                first = node.args[0]
                elts = first.elts if isinstance(first, (ast.List, ast.Tuple)) else [first]
                names.update(e.id for e in elts if isinstance(e, ast.Name))
        elif tables.by_name and (site := tables.site(node, fn)) is not None and site.launch(launchers) is None:
            launched.update(_through_table(node, site, index, launchers, aliases, _depth))
        elif launch_target(node, launchers, tables, fn):
            args = list(node.args) + [kw.value for kw in node.keywords if not _compile_time(kw.arg)]
            for a in node.args:
                if isinstance(a, ast.Starred) and isinstance(a.value, ast.Name):
                    args += packed.get(a.value.id, [])
            launched.update(a.id for a in args if isinstance(a, ast.Name))
            # a slice handed to a kernel, as an argument or in the dict the launch unpacks
            # (``kw['idx'] = idx[a:b]; k[g](**kw)``), is a slice of a tensor: a kernel takes no list
            unpacked = [v for kw in node.keywords if kw.arg is None and isinstance(kw.value, ast.Name)
                        for v in keyed.get(kw.value.id, ())]
            names.update(a.value.id for a in args + unpacked if isinstance(a, ast.Subscript)
                         and isinstance(a.slice, ast.Slice) and isinstance(a.value, ast.Name))
    if _depth == 0:
        names |= saved_tensor_names(fn, index, aliases)
    for name in list(launched | names):  # what a launched view was made from was a tensor too
        seen = {name}
        while name in derived and derived[name] not in seen:
            name = derived[name]
            seen.add(name)
            launched.add(name)
    return names | (launched & no_default) - python_number_uses(fn, index, aliases)


SAVED_TENSORS = ("saved_tensors", "saved_variables")


def saved_tensor_names(fn, index: NodeIndex, aliases: dict[str, str]) -> set[str]:
    """Names an autograd ``backward`` binds to what ``forward`` kept for it: unpacked from
    ``ctx.saved_tensors`` (or the older ``saved_variables``, or one of them by position), or
    read from an attribute a sibling method of its class (``forward``, ``setup_context``)
    stored on its own first parameter from a tensor (``ctx.cu = cu_seqlens``). Each is a tensor:
    its slices, ``.item()`` and arithmetic are host work, as they are in ``forward``."""
    params = fn.args.posonlyargs + fn.args.args
    if not params:
        return set()
    ctx, found, stored = params[0].arg, set(), {}
    for node in index.of(_ASSIGN, fn):
        value = node.value.value if isinstance(node.value, ast.Subscript) else node.value
        if not (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == ctx):
            continue
        targets = [n.id for t in node.targets for n in walk_nodes(t) if n.__class__ is _NAME]
        if value.attr in SAVED_TENSORS:
            found.update(targets)
        elif node.value is value:
            stored.setdefault(value.attr, []).extend(targets)
    if stored and fn.name == "backward":
        tensors = _stored_tensors(fn, index, aliases)
        found.update(n for attr, targets in stored.items() if attr in tensors for n in targets)
    return found


def _stored_tensors(backward, index: NodeIndex, aliases: dict[str, str]) -> set[str]:
    """The attributes the other methods of ``backward``'s class set on their first parameter
    from a tensor: a parameter annotated as one, a name they read tensor metadata or a
    tensor-only method from, or a torch call that makes one. (Being handed to a launch is too
    weak here: Triton kernels take numbers and flags as well.)"""
    owner = _class_holding(backward, index)
    out = set()
    for method in (owner.body if owner is not None else ()):
        params = method.args.posonlyargs + method.args.args if isinstance(method, ast.FunctionDef) else []
        if method is backward or not params:
            continue
        shown = None
        for node in index.of(_ASSIGN, method):
            target = node.targets[0]
            if not (len(node.targets) == 1 and isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == params[0].arg):
                continue
            value = node.value
            if isinstance(value, ast.Call):
                name = torch_name(qualname(value.func, aliases))
                if name is not None and name.rsplit(".", 1)[-1] not in tb.TORCH_METADATA_FUNCS:
                    out.add(target.attr)
            elif isinstance(value, ast.Name):
                if shown is None:
                    shown = _shown_tensors(method, params, index)
                if value.id in shown:
                    out.add(target.attr)
    return out


def _class_holding(method, index: NodeIndex) -> ast.ClassDef | None:
    """The class whose body defines ``method``: a top-level one is found without walking the module."""
    top = next((c for c in index.tree.body if c.__class__ is ast.ClassDef and method in c.body), None)
    return top if top is not None else next((c for c in index.of(ast.ClassDef) if method in c.body), None)


def _shown_tensors(fn, params, index: NodeIndex) -> set[str]:
    """Names ``fn`` shows are tensors by what it reads from them (``x.shape``, ``x.contiguous()``),
    and its parameters annotated as tensors."""
    shown = {p.arg for p in params if (dotted(p.annotation) or [""])[-1].endswith("Tensor")}
    for node in index.of(_ATTRIBUTE, fn):
        if isinstance(node.value, ast.Name) and isinstance(node.ctx, ast.Load) \
                and (node.attr in tb.META_ATTRS or node.attr in tb.TENSOR_ONLY_METHODS):
            shown.add(node.value.id)
    return shown


def _through_table(call, site, index: NodeIndex, launchers: set[str], aliases: dict[str, str], depth: int) -> set[str]:
    """The names ``table[key](...)`` passes to a parameter that some function of the table (one
    of this module, read to one level) uses as a tensor."""
    if depth > 0:
        return set()
    tables, out = Tables.of(index), set()
    for member in site.table.members:
        target = tables.functions.get(member.id) if isinstance(member, ast.Name) else None
        if target is None:
            continue
        used = tables.evidence.get(id(target))
        if used is None:
            used = tables.evidence[id(target)] = tensor_evidence(target, index, launchers, aliases, depth + 1)
        params = [p.arg for p in target.args.posonlyargs + target.args.args]
        for a, p in zip(call.args, params):
            if isinstance(a, ast.Starred):
                break
            if isinstance(a, ast.Name) and p in used:
                out.add(a.id)
        out.update(kw.value.id for kw in call.keywords if kw.arg in used and isinstance(kw.value, ast.Name))
    return out


def _compile_time(keyword: str | None) -> bool:
    """A launch keyword that takes a Python value, never a tensor: one of Triton's launch options
    (``num_warps=``), or a meta-parameter spelt in capitals as Triton's ``tl.constexpr``
    convention has them (``BLOCK=block``). The value may still be shown a tensor elsewhere."""
    return keyword is not None and (keyword in tb.LAUNCH_OPTIONS or (keyword.isupper() and keyword[0].isalpha()))


SEQUENCES = ("list", "List", "tuple", "Tuple", "Sequence", "MutableSequence")


def element_evidence(fn, index: NodeIndex) -> set[str]:
    """Names whose elements are tensors (a list or tuple of tensors): parameters annotated so
    (``sources: Sequence[torch.Tensor]``, ``list[Tensor | None]``), and names the function reads
    metadata or a tensor-only method from at a position (``indices[0].numel()``), so that
    ``xs[j]`` is a tensor too. A lookup by key (``args["x"].dtype``) says nothing of the other
    keys' values. ``fn``'s attributes are read from ``index``."""
    a = fn.args
    found = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs if _holds_tensors(p.annotation)}
    for node in index.of(_ATTRIBUTE, fn):
        if isinstance(node.ctx, ast.Load) and (
                node.attr in tb.META_ATTRS or node.attr in tb.TENSOR_ONLY_METHODS):
            item = node.value
            if isinstance(item, ast.Subscript) and isinstance(item.value, ast.Name) \
                    and isinstance(item.slice, ast.Constant) and positional(item.slice):
                found.add(item.value.id)
    return found


def _holds_tensors(annotation) -> bool:
    """``Sequence[torch.Tensor]``, ``tuple[Tensor, ...]``, ``list[Optional[Tensor]]``: a sequence
    annotation whose every element type is a tensor (or None)."""
    if not (isinstance(annotation, ast.Subscript) and (dotted(annotation.value) or [""])[-1] in SEQUENCES):
        return False
    todo, atoms = [annotation.slice], []
    while todo:
        t = todo.pop()
        if isinstance(t, ast.Tuple):
            todo.extend(t.elts)
        elif isinstance(t, ast.BinOp) and isinstance(t.op, ast.BitOr):  # Tensor | None
            todo += [t.left, t.right]
        elif isinstance(t, ast.Subscript) and (dotted(t.value) or [""])[-1] == "Optional":
            todo.append(t.slice)
        elif not (isinstance(t, ast.Constant) and t.value in (None, Ellipsis)):
            atoms.append((dotted(t) or [""])[-1])
    return bool(atoms) and all(a.endswith("Tensor") for a in atoms)


def positional(index) -> bool:
    """Is ``index`` a position in a sequence (``xs[0]``, ``xs[i + 1]``), not a slice or a string key?"""
    if isinstance(index, ast.Constant):
        return isinstance(index.value, int) and not isinstance(index.value, bool)
    return isinstance(index, (ast.Name, ast.BinOp, ast.UnaryOp))


def _namespaces_by_root() -> dict[str, tuple[tuple[str, str], ...]]:
    """``tables.FRAMEWORK_NAMESPACES`` grouped by first name, longest namespace first (and
    the first names of ``FRAMEWORK_FUNCTIONS``, with no namespace of their own)."""
    out: dict[str, list] = {q.split(".", 1)[0]: [] for q in tb.FRAMEWORK_FUNCTIONS}
    for space, target in sorted(tb.FRAMEWORK_NAMESPACES.items(), key=lambda kv: -len(kv[0])):
        out.setdefault(space.split(".", 1)[0], []).append((space + ".", target + "." if target else ""))
    return {root: tuple(pairs) for root, pairs in out.items()}


_BY_ROOT = _namespaces_by_root()


def torch_name(q: str | None) -> str | None:
    """The torch name a fully qualified call or attribute stands for, without ``torch.``:
    ``torch.npu.synchronize`` -> ``npu.synchronize``, and through ``tables.FRAMEWORK_NAMESPACES``
    and ``FRAMEWORK_FUNCTIONS`` another framework's name of the same meaning (``mindspore.mint.zeros``
    -> ``zeros``, ``mindspore.ops.cast`` -> ``Tensor.to``), so that every rule reads it as torch's."""
    if not q:
        return None
    spaces = _BY_ROOT.get(q.split(".", 1)[0])
    if spaces is None:
        return None
    for prefix, target in spaces:
        if q.startswith(prefix):
            return target + q[len(prefix):]
    return tb.FRAMEWORK_FUNCTIONS.get(q)


def _scalar_operand(node, scalars: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in scalars
    return not isinstance(node, (ast.Subscript, ast.Attribute, ast.Call)) or _reads_metadata(node)


def _reads_metadata(node) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr in tb.META_ATTRS
               or isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in tb.META_METHODS
               or isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" for n in walk_nodes(node))


# Integer idioms a wrapper applies to Python numbers, not to tensors.
INTEGER_OPS = (ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)
ORDERING_OPS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _takes_python_numbers(func, aliases: dict[str, str]) -> bool:
    """``range(n)``, ``triton.cdiv(n, b)``, ``math.ceil(x)``, ``torch.empty(m, n)``."""
    if isinstance(func, ast.Name) and func.id in ("range", "int", "float"):
        return True
    q = qualname(func, aliases) or ""
    return q.split(".")[0] in tb.PYTHON_VALUE_MODULES or (torch_name(q) or "") in tb.TORCH_CONSTRUCTORS


def _arithmetic_names(node) -> set[str]:
    """The names an arithmetic expression is made of (``end - start + step``), not looking
    into calls, subscripts or attributes: what a number-only use of the whole says is a number."""
    if isinstance(node, ast.Name):
        return {node.id}
    if isinstance(node, ast.BinOp):
        return _arithmetic_names(node.left) | _arithmetic_names(node.right)
    if isinstance(node, ast.UnaryOp):
        return _arithmetic_names(node.operand)
    return set()


def python_number_uses(fn, index: NodeIndex, aliases: dict[str, str]) -> set[str]:
    """Names used the way only Python numbers and flags are: in arithmetic or comparisons
    with constants or metadata (``n * 2``, ``ratio == 4``), in integer idioms (``a // b``,
    ``(end - start) // step``), as shapes or counts (``torch.empty(m, n)``, ``triton.cdiv(n, b)``), as a bare
    condition (``if rotate``), or with an int-only method (``chunk_size.bit_length()``).
    ``fn``'s nodes are read from ``index`` by class: each kind adds to one set, in any order."""
    scalars, packed = set(), {}
    for node in index.of(_ASSIGN, fn):  # in walk order: a later tuple bound to a name replaces an earlier one
        if _reads_metadata(node.value):
            for target in node.targets:
                scalars.update(n.id for n in walk_nodes(target) if n.__class__ is _NAME)
        if isinstance(node.value, ast.Tuple):
            packed.update((t.id, node.value.elts) for t in node.targets if isinstance(t, ast.Name))
    found = set()
    for node in index.of(_CALL, fn):
        func = node.func
        if isinstance(func, ast.Subscript):  # K[grid](...): a grid holds numbers
            grid = func.slice
            elts = grid.elts if isinstance(grid, ast.Tuple) else packed.get(getattr(grid, "id", None), [])
            found.update(n for e in elts for n in _arithmetic_names(e))
        if isinstance(func, ast.Attribute) and func.attr in tb.INT_METHODS and isinstance(func.value, ast.Name):
            found.add(func.value.id)
        elif _takes_python_numbers(func, aliases):
            for arg in node.args:  # math.ceil((end - start) / step): all three are numbers
                elts = arg.elts if isinstance(arg, (ast.Tuple, ast.List)) else [arg]
                found.update(n for e in elts for n in _arithmetic_names(e))
    for node in index.of(ast.BinOp, fn):
        if isinstance(node.op, INTEGER_OPS):
            found.update(_arithmetic_names(node.left) | _arithmetic_names(node.right))
        for name, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(name, ast.Name) and _scalar_operand(other, scalars):
                found.add(name.id)
    for node in index.of(ast.Compare, fn):
        if not all(isinstance(op, (ast.Is, ast.IsNot)) for op in node.ops):
            # a name compared in the chain with any scalar operand but itself: counted, not
            # paired, so `d < d < ... < d` of n terms costs n tests rather than n * n pairs
            operands = [node.left, *node.comparators]
            scalar = [_scalar_operand(o, scalars) for o in operands]
            n_scalar = sum(scalar)
            found.update(o.id for o, own in zip(operands, scalar) if isinstance(o, ast.Name) and n_scalar - own > 0)
    for node in (*index.of(ast.If, fn), *index.of(ast.While, fn), *index.of(ast.IfExp, fn)):
        tests = node.test.values if isinstance(node.test, ast.BoolOp) else [node.test]
        found.update(t.operand.id if isinstance(t, ast.UnaryOp) else t.id for t in tests
                     if isinstance(t, ast.Name) or isinstance(t, ast.UnaryOp) and isinstance(t.operand, ast.Name))
        for t in tests:  # `if block >= n:` orders two sizes (a host branch on tensors would be a data read)
            if isinstance(t, ast.Compare) and all(isinstance(op, ORDERING_OPS) for op in t.ops) \
                    and all(isinstance(o, ast.Name) for o in [t.left, *t.comparators]):
                found.update(o.id for o in [t.left, *t.comparators])
    return found


def _params_without_default(fn) -> set[str]:
    a = fn.args
    positional = a.posonlyargs + a.args
    with_default = len(a.defaults)
    plain = positional[: len(positional) - with_default] if with_default else positional
    kw = [p for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    return {p.arg for p in plain + kw}
