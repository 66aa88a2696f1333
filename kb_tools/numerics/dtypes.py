"""Every dtype torch has, by name, with the bytes one stored element takes: the one table the
memory arithmetic (tiling, waves) and the review read, so that a dtype torch accepts is never
a KeyError somewhere down the line (issue 38 item 6). Torch-free: ``kbt tiling`` answers
without importing torch; a test holds the table to ``torch.dtype.itemsize``."""

from __future__ import annotations

from kb_tools.numerics.routing import DTYPE_ALIASES as _ROUTING_ALIASES

# torch's canonical names (str(torch.<dtype>) without "torch.") -> itemsize in bytes.
WIDTHS = {
    "bool": 1,
    "uint8": 1, "uint16": 2, "uint32": 4, "uint64": 8,
    "int8": 1, "int16": 2, "int32": 4, "int64": 8,
    "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
    "float8_e4m3fn": 1, "float8_e4m3fnuz": 1, "float8_e5m2": 1, "float8_e5m2fnuz": 1, "float8_e8m0fnu": 1,
    "float4_e2m1fn_x2": 1,
    "complex32": 4, "complex64": 8, "complex128": 16,
    "qint8": 1, "quint8": 1, "qint32": 4, "quint4x2": 1, "quint2x4": 1,
    "bits8": 1, "bits16": 2, "bits1x8": 1, "bits2x4": 1, "bits4x2": 1,
    **{f"uint{n}": 1 for n in range(1, 8)}, **{f"int{n}": 1 for n in range(1, 8)},
}

# torch's own second names for a dtype (torch.half is torch.float16), beside the routing aliases.
_TORCH_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "short": "int16", "int": "int32",
                  "long": "int64", "cfloat": "complex64", "cdouble": "complex128", "chalf": "complex32", "bit": "uint1"}


# The floating formats (float8 and float4 variants included) and the integers, signed and unsigned.
FLOAT_NAMES = frozenset(n for n in WIDTHS if n.startswith(("float", "bfloat")))
INTEGER_NAMES = frozenset(n for n in WIDTHS if n.startswith(("int", "uint")))

# Every name torch spells a dtype with (``torch.half`` as well as ``torch.float16``).
TORCH_NAMES = frozenset(WIDTHS) | frozenset(_TORCH_ALIASES)


def canonical(name) -> str | None:
    """torch's canonical name for a dtype spelled ``name`` (``torch.`` prefix, torch's and
    TTK's aliases allowed), or None when torch has no such dtype."""
    name = str(name).strip().removeprefix("torch.")
    name = _TORCH_ALIASES.get(name, _ROUTING_ALIASES.get(name, name))
    return name if name in WIDTHS else None


def width(name) -> int | None:
    """Bytes per stored element of the dtype ``name``, or None when torch has no such dtype."""
    found = canonical(name)
    return WIDTHS[found] if found else None
