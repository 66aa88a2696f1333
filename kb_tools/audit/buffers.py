"""Which names a value hands on the data of: what tells a wrapper's output (returned, or
returned through its own methods: a view, a slice, even a cast that other rules report) from
a scratch buffer it allocated and never hands back. A torch function or helper applied to a
buffer (``softmax(buf)``) makes another tensor; a record built of buffers holds them.
"""

from __future__ import annotations

import ast


def same_buffer(value) -> set[str]:
    """The names whose buffer ``value`` is (itself, a view, a slice, a branch of a choice)."""
    if isinstance(value, ast.Name):
        return {value.id}
    if isinstance(value, (ast.Tuple, ast.List)):
        return set().union(*(same_buffer(e) for e in value.elts)) if value.elts else set()
    if isinstance(value, ast.IfExp):
        return same_buffer(value.body) | same_buffer(value.orelse)
    if isinstance(value, ast.Subscript):
        return same_buffer(value.value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):  # y.view(...), y.to(d): y's data, handed on
        return same_buffer(value.func.value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
            and (value.func.id[:1].isupper() or value.func.id in ("tuple", "list", "dict")):
        # a record made of buffers (a namedtuple, a dataclass, a container) holds them: Out(values=v, indices=i)
        return set().union(set(), *(same_buffer(a) for a in (*value.args, *(k.value for k in value.keywords))))
    return set()
