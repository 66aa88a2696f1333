"""Which criterion TTK actually applies to an output, and why; torch-free so the CLI can check
its arguments before paying for the torch import.

TTK (``resolve.py``, ``resolve_tolerance``) routes by the output's dtype before it looks at the
requested criterion: integers and bool are always compared bit for bit, the formats without float
arithmetic (float8_e8m0, the 4-bit floats) too, hifloat8 goes to requant; a declared ``quant`` on an
int4/int8 output wins over the integer rule. Everything else takes the requested criterion.
"""

from __future__ import annotations

from dataclasses import dataclass

from kb_tools.numerics import tolerances as tol

# TTK's registry tokens (registry.py decorators) -> the criterion they name.
ALIASES = {"mixed": "mix_tolerance", "isclose": "close", "bin": "binary_equal", "binary": "binary_equal"}
REQUESTABLE = tuple(tol.CRITERIA) + tuple(ALIASES)

INTEGER_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")
BIT_DTYPES = ("float8_e8m0fnu", "float4_e2m1fn_x2")  # TTK: float8_e8m0 and float4 -> "bin"
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2")
# torch holds these, TTK cannot (its torch->numpy conversion has no fnuz formats).
UNSUPPORTED_DTYPES = {
    "float8_e4m3fnuz": "TTK has no float8_e4m3fnuz (its numpy conversion knows e4m3fn, e5m2 and e8m0 only)",
    "float8_e5m2fnuz": "TTK has no float8_e5m2fnuz (its numpy conversion knows e4m3fn, e5m2 and e8m0 only)",
    "complex32": "complex outputs are judged by TTK's isclose on complex values, which kbt compare does not do",
    "complex64": "complex outputs are judged by TTK's isclose on complex values, which kbt compare does not do",
    "complex128": "complex outputs are judged by TTK's isclose on complex values, which kbt compare does not do",
}

# Names a user may type for a dtype: torch's, TTK's dtype_map spellings and opkb's short ones.
DTYPE_ALIASES = {
    "fp16": "float16", "half": "float16", "f16": "float16", "bf16": "bfloat16", "bfp16": "bfloat16",
    "fp32": "float32", "float": "float32", "f32": "float32", "fp64": "float64", "double": "float64",
    "f64": "float64", "fp8_e4m3fn": "float8_e4m3fn", "f8_e4m3fn": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2",
    "f8_e5m2": "float8_e5m2", "float8_e8m0": "float8_e8m0fnu", "fp8_e8m0": "float8_e8m0fnu",
    "f8_e8m0": "float8_e8m0fnu", "float4_e2m1": "float4_e2m1fn_x2", "s8": "int8", "u8": "uint8",
    "s16": "int16", "s32": "int32", "s64": "int64", "u16": "uint16", "u32": "uint32", "u64": "uint64",
}
KNOWN_DTYPES = INTEGER_DTYPES + BIT_DTYPES + FLOAT_DTYPES + tuple(UNSUPPORTED_DTYPES)


def dtype_name(name: str) -> str | None:
    """torch's name for a dtype spelled ``name`` (``torch.`` prefix and aliases allowed), or None."""
    name = str(name).strip().removeprefix("torch.")
    name = DTYPE_ALIASES.get(name, name)
    return name if name in KNOWN_DTYPES else None


def criterion_name(requested: str) -> str | None:
    """The criterion a requested token names (``mixed`` -> ``mix_tolerance``), or None if unknown."""
    requested = str(requested).strip().lower()
    requested = ALIASES.get(requested, requested)
    return requested if requested in tol.CRITERIA else None


@dataclass(frozen=True)
class Route:
    applied: str  # the criterion TTK applies
    reason: str | None  # why it differs from the one requested; None when it does not


def route(requested: str, dtype: str) -> Route:
    """TTK's criterion for an output of ``dtype`` when ``requested`` was asked for.

    ValueError for what TTK refuses: an unknown criterion, ``quant`` on anything but int4/int8,
    ``cross_check`` outside fp16/bf16/fp32, and the dtypes TTK cannot hold.
    """
    criterion = criterion_name(requested)
    if criterion is None:
        raise ValueError(f"unknown criterion {requested!r}; choose one of {', '.join(REQUESTABLE)}")
    if dtype in UNSUPPORTED_DTYPES:
        raise ValueError(f"{dtype}: {UNSUPPORTED_DTYPES[dtype]}")
    if criterion == "quant":
        if dtype not in tol.QUANT_DTYPES:
            raise ValueError(f"quant applies to int4/int8 outputs of a quantising operator, not {dtype} "
                             f"(TTK refuses it: an index or count that is off by 1 is wrong)")
        return Route("quant", None)
    if dtype in INTEGER_DTYPES:
        return _switched(criterion, "binary_equal", f"TTK judges {dtype} outputs bit for bit (binary_equal) "
                                                    f"whatever the criterion asked for")
    if dtype in BIT_DTYPES:
        return _switched(criterion, "binary_equal", f"TTK compares {dtype} bit for bit: the format has no "
                                                    f"float arithmetic to tolerate")
    if dtype not in FLOAT_DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}")
    if criterion == "cross_check" and dtype not in tol.SMALL_VALUE:
        raise ValueError(f"cross_check supports {', '.join(tol.SMALL_VALUE)} only (TTK), not {dtype}")
    if criterion == "gym_gate" and dtype not in tol.GYM_GATE_DTYPES:
        raise ValueError(f"gym_gate has rows for {', '.join(tol.GYM_GATE_DTYPES)} only (the PyPTO-Pro samples' "
                         f"precision_compare.py), not {dtype}")
    return Route(criterion, None)


def _switched(requested: str, applied: str, why: str) -> Route:
    return Route(applied, None if requested == applied else why)
