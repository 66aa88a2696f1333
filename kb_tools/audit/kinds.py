"""The value kinds the audit's data flow tracks, and how they join where branches meet.

``T`` a tensor, ``P`` a Python value (metadata, integers, dtypes, devices, shapes), ``S`` a
string, ``K`` a kernel, ``C`` a Python container of values of unknown kinds (a ``dict`` of a
launch's arguments: its own methods and item stores are Python work, an element read from it
is ``U``, so what the code does with the element decides), ``O`` an object torch hands back that
is not a tensor (a generator, a stream, an event: its methods run torch on the host), ``U`` unknown
(never flagged on its own). A tuple of kinds is a tuple value whose elements are known one by one (a helper's ``return a.dtype, b``), so
unpacking it gives each name its own kind. A tensor on any path is a tensor.
"""

from __future__ import annotations

T, P, S, U, K, C, O = "T", "P", "S", "U", "K", "C", "O"

# Names that hold a dtype, a device or a shape, never a tensor.
METADATA_SUFFIXES = ("dtype", "device", "shape")


def flat(kind) -> str:
    """One kind for a value used as a whole (a tuple in a condition, a call argument)."""
    return join(*kind) if isinstance(kind, tuple) else kind


def join(*kinds):
    """The kind of a value that may come from any of ``kinds``."""
    if not kinds:
        return P
    if all(isinstance(k, tuple) for k in kinds) and len({len(k) for k in kinds}) == 1:
        return tuple(join(*parts) for parts in zip(*kinds))
    flats = [flat(k) if isinstance(k, tuple) else k for k in kinds]
    if T in flats:
        return T
    if all(k == K for k in flats):
        return K
    if all(k == C for k in flats):
        return C
    if O in flats and all(k in (O, U) for k in flats):
        return O  # a generator the caller may pass, else the default one: a torch object either way
    if all(k == S for k in flats):
        return S
    return P if all(k in (P, S) for k in flats) else U


def is_tensor(kind) -> bool:
    return flat(kind) == T


def is_python(kind) -> bool:
    return flat(kind) in (P, S)


def merge_envs(envs: list[dict]) -> dict:
    """Join the name kinds of the branches that reach the join point. Branches copy the state
    they start from, so most names hold the same kind on every branch: such a name keeps it
    without a join (the join of equal kinds, or of one kind alone, is that kind), and only the
    names whose kinds differ are joined, over the branches that bind them."""
    if len(envs) == 1:
        return envs[0]
    out = dict(envs[0])
    differ = set()
    for env in envs[1:]:
        for n, kind in env.items():
            old = out.get(n, _UNBOUND)
            if old is _UNBOUND:
                out[n] = kind
            elif old is not kind and old != kind:
                differ.add(n)
    for n in differ:
        out[n] = join(*[e[n] for e in envs if n in e])
    return out


_UNBOUND = object()  # a name a branch does not bind


def metadata_name(name: str) -> bool:
    low = name.lower()
    return low.endswith(METADATA_SUFFIXES) or low in ("size", "sizes", "strides")
