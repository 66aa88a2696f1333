"""Which names a value hands on the data of: what tells a wrapper's output (returned, or
returned through its own views and slices) from a scratch buffer it allocated and never hands
back; a cast to another dtype (``.to(saved_dtype)``, ``.float()``) makes another tensor, so a
buffer returned only through one is scratch. A torch function or helper applied to a
buffer (``softmax(buf)``) makes another tensor; a record built of buffers holds them.
"""

from __future__ import annotations

import ast

from kb_tools.audit.tables import CAST_METHODS


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
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and (value.func.attr not in CAST_METHODS or like_a_tensor_in_hand(value)):  # y.view(...): y's data, handed on
        return same_buffer(value.func.value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
            and (value.func.id[:1].isupper() or value.func.id in ("tuple", "list", "dict")):
        # a record made of buffers (a namedtuple, a dataclass, a container) holds them: Out(values=v, indices=i)
        return set().union(set(), *(same_buffer(a) for a in (*value.args, *(k.value for k in value.keywords))))
    return set()


def like_a_tensor_in_hand(cast: ast.Call) -> bool:
    """``y.to(x.dtype)``: a cast to the dtype of a tensor in hand, which the buffer was most
    likely allocated with (a no-op that returns ``y``); ``y.to(saved_dtype)``, ``y.float()``
    convert to another dtype and make another tensor."""
    target = cast.args[0] if cast.args else next((k.value for k in cast.keywords if k.arg == "dtype"), None)
    return cast.func.attr == "to" and isinstance(target, ast.Attribute) and target.attr == "dtype"
