"""Which names a value hands on the data of: what tells a wrapper's output (returned, or
returned through its own methods: a view, a slice, even a cast that other rules report) from
a scratch buffer it allocated and never hands back. A torch function or helper applied to a
buffer (``softmax(buf)``) makes another tensor, and so does a reduction of it (``part.sum(0)``,
``loss.mean()``): a buffer returned only through one is scratch, as blind batches 4 to 8 label
it. A record built of buffers holds them.
"""

from __future__ import annotations

import ast

# Tensor methods whose result is a new, reduced tensor, not the receiver's data.
REDUCTIONS = frozenset({"sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "norm", "std",
                        "var", "logsumexp", "all", "any", "nansum", "nanmean", "median", "count_nonzero"})


def same_buffer(value, made_from: bool = False) -> set[str]:
    """The names whose buffer ``value`` is (itself, a view, a slice, a branch of a choice);
    ``made_from``: also the names a reduction of them is made from."""
    def same(v) -> set[str]:
        return same_buffer(v, made_from)

    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, (ast.Tuple, ast.List)):
        return set().union(*(same(e) for e in value.elts)) if value.elts else set()
    if isinstance(value, ast.IfExp):
        return same(value.body) | same(value.orelse)
    if isinstance(value, ast.Subscript):
        return same(value.value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):  # y.view(...), y.to(d): y's data, handed on
        return set() if value.func.attr in REDUCTIONS and not made_from else same(value.func.value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
            and (value.func.id[:1].isupper() or value.func.id in ("tuple", "list", "dict")):
        # a record made of buffers (a namedtuple, a dataclass, a container) holds them: Out(values=v, indices=i)
        return set().union(set(), *(same(a) for a in (*value.args, *(k.value for k in value.keywords))))
    return set()
