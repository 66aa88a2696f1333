"""The tensor-kind stage of a wrapper's walk: the kinds parameters start with (annotations,
defaults, names, what the function's own code says about them), how a condition narrows them,
how an assignment or a loop target binds them, and what one element of an iterated value is.
"""

from __future__ import annotations

import ast

from kb_tools.audit.kinds import (
    C,
    K,
    P,
    S,
    T,
    U,
    flat,
    is_python,
    is_tensor,
    join,
    metadata_name,
)
from kb_tools.audit.evidence import torch_name
from kb_tools.audit.names import dotted, qualname
from kb_tools.audit.rules import wb103_host_reshape_or_slice as wb103
from kb_tools.audit.tables import TORCH_ALLOC


def declared_kind(name: str, annotation, default) -> str:
    if annotation is not None:
        parts = dotted(annotation.value if isinstance(annotation, ast.Subscript) else annotation) or []
        if parts and parts[-1].endswith("Tensor"):  # torch.Tensor and the typed torch.LongTensor, FloatTensor, ...
            return T
        if parts and parts[-1] in ("int", "float", "bool", "tuple", "list", "Sequence", "dtype", "device", "Size"):
            return P
        if parts and parts[-1] in ("dict", "Dict", "Mapping", "MutableMapping"):
            return C
        if parts == ["str"]:
            return S
    if metadata_name(name):
        return P
    if isinstance(default, ast.Constant) and default.value is not None:
        return S if isinstance(default.value, str) else P
    if isinstance(default, (ast.UnaryOp, ast.Tuple, ast.List)):
        return P
    return U


def injected_allocators(fn, aliases: dict[str, str]) -> dict[str, str]:
    """Parameters whose default is a torch allocation function (``alloc=torch.empty``,
    ``factory=torch.zeros``), by name -> the torch name they stand for."""
    a = fn.args
    positional = a.posonlyargs + a.args
    pairs = list(zip(positional[len(positional) - len(a.defaults):], a.defaults))
    pairs += [(p, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    out = {}
    for param, default in pairs:
        q = qualname(default, aliases)
        name = torch_name(q)
        if name == "empty" or name in TORCH_ALLOC:
            out[param.arg] = q
    return out


class KindFlow:
    """Kinds of names along the walk (mixed into ``WrapperAudit``, whose ``env`` and ``frame`` they use)."""

    @staticmethod
    def param_kinds(fn, given: dict, evidence: set[str]) -> dict:
        a = fn.args
        positional = a.posonlyargs + a.args
        defaults = dict(zip([p.arg for p in positional[len(positional) - len(a.defaults):]], a.defaults))
        defaults.update({p.arg: d for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
        env, annotated = {}, set()  # a scalar annotation (`n: int`) holds whatever a caller passes
        for p in positional + a.kwonlyargs:
            kind = declared_kind(p.arg, p.annotation, defaults.get(p.arg))
            env[p.arg] = T if kind == U and p.arg in evidence else kind
            if p.annotation is not None and kind in (P, S, C):
                annotated.add(p.arg)
        for p in (a.vararg, a.kwarg):
            if p is not None:
                env[p.arg] = U
        for name, kind in given.items():
            if name in env and kind != U and not metadata_name(name) and name not in annotated:
                env[name] = kind
        return env

    def narrowing(self, test) -> tuple[dict, dict]:
        """(kinds on the true branch, kinds on the false branch) a condition establishes."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            yes, no = self.narrowing(test.operand)
            return no, yes
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            yes = {}
            for v in test.values:
                yes.update(self.narrowing(v)[0])
            return yes, {}
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" \
                and len(test.args) == 2 and isinstance(test.args[0], ast.Name):
            name, types = test.args[0].id, test.args[1]
            elts = types.elts if isinstance(types, ast.Tuple) else [types]
            parts = [(dotted(t) or [""])[-1] for t in elts]
            if "Tensor" in parts:
                return {name: T}, ({name: P} if len(parts) == 1 else {})
            if all(p in ("int", "float", "bool", "str", "complex", "list", "tuple", "Number", "Integral") for p in parts):
                return {name: P}, {}
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Name) \
                and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None:
            if isinstance(test.ops[0], ast.Is):
                return {test.left.id: P}, {}
            if isinstance(test.ops[0], ast.IsNot):
                return {}, {test.left.id: P}
        return {}, {}

    def bind(self, target, kind) -> None:
        if isinstance(target, ast.Name):
            name = target.id
            self.frame.torch_objects.discard(name)
            if metadata_name(name) and kind != K:
                kind = P
            elif kind == U and name in self.frame.evidence:
                kind = T
            self.env[name] = kind
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            if isinstance(kind, tuple) and len(kind) == len(elts) and not any(isinstance(e, ast.Starred) for e in elts):
                for elt, k in zip(elts, kind):
                    self.bind(elt, k)
            else:
                whole = flat(kind)
                for elt in elts:
                    self.bind(elt, whole)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, flat(kind))
        elif isinstance(target, ast.Subscript):
            if is_tensor(self.expr(target.value)):
                self.emit((target.lineno, target.col_offset), *wb103.slice_write())
            self.expr(target.slice)
        elif isinstance(target, ast.Attribute):
            self.expr(target.value)

    def iterate(self, it):
        """The kind of one element of ``it``: any of a tuple's elements, joined position by
        position when they are rows of equal length (``for t, dtype, name in ((a, torch.int32, "a"), ...)``).
        ``enumerate``, ``zip``, ``reversed`` and ``sorted`` keep what their arguments hold."""
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id not in self.env and it.args \
                and not it.keywords and it.func.id in ("enumerate", "zip", "reversed", "sorted"):
            parts = [self.iterate(a) for a in it.args]
            if it.func.id == "enumerate":
                return (P, parts[0])
            return tuple(parts) if it.func.id == "zip" else parts[0]
        kind = self.expr(it)
        if isinstance(kind, tuple):
            return join(*kind)
        if isinstance(it, ast.Name) and it.id in self.frame.elements and kind in (P, U):
            return T  # a list of tensors yields tensors
        if is_tensor(kind):
            self.emit((it.lineno, it.col_offset), *wb103.iteration())
        return P if is_python(kind) else (T if kind == T else U)
