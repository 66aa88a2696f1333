"""Who casts what, and when: TTK's Promote map, the case mode, and the golden and third-party
leg policies of seed 000 §2–§5.

The golden policy is one pure function of (dtype, three-party or not, the DUT's widening). Only
the "float + three-party" cell of seed 000 §5's table is zero-cast (TTK's Promote has already
raised the dtype); every other cell follows the DUT: widen where it widens, narrow back at exit.
"""

from __future__ import annotations

from dataclasses import dataclass

# Seed 000 §3 ("源码" DTYPE_PROMOTE_MAP in ttk/utilities/dtypes.py, checked against
# hicann/ops-test-kit at 23e6908): floats and complex only, no integer entry, which is why integers
# have no three-party mode. float8_e8m0 (torch: float8_e8m0fnu) and hifloat8 (no torch dtype)
# promote to float32 too; torch's fnuz float8 formats are not TTK dtypes.
PROMOTE_MAP = {
    "float16": "float32",
    "bfloat16": "float32",
    "float8_e4m3fn": "float32",
    "float8_e5m2": "float32",
    "float8_e8m0fnu": "float32",
    "hifloat8": "float32",
    "float32": "float64",
    "complex32": "complex64",
    "complex64": "complex128",
}

INTEGER_DTYPES = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64")


def dtype_class(dtype: str) -> str:
    """'float' (floats and complex: what Promote may raise) or 'integer'."""
    if dtype in INTEGER_DTYPES:
        return "integer"
    if dtype in PROMOTE_MAP or dtype in ("float64", "complex128"):
        return "float"
    raise ValueError(f"unknown dtype {dtype!r}")


def promoted(dtype: str) -> str:
    """The dtype TTK's Promote hands the golden; integers and float64 stay as they are."""
    return PROMOTE_MAP.get(dtype, dtype)


@dataclass(frozen=True)
class CaseMode:
    three_party: bool  # the GPU leg runs and cross_check judges
    promote: bool  # TTK raises float dtypes before the golden runs
    criteria: dict  # output name -> the criterion actually applied
    warnings: tuple[str, ...] = ()


def case_mode(declared: dict[str, str], override: str | None = None) -> CaseMode:
    """The case's mode from each output's declared criterion (seed 000 §2).

    Three-party exactly when any output declares ``cross_check``; the decision is per case, not
    per output. A command-line ``--compare`` override replaces every declared criterion first, so
    ``close`` switches Promote off with the GPU leg, which the tool warns about.
    """
    criteria = {name: override or c for name, c in declared.items()}
    three_party = any(c == "cross_check" for c in criteria.values())
    warnings = ()
    if override and override != "cross_check" and any(c == "cross_check" for c in declared.values()):
        warnings = (f"--compare {override} overrides cross_check: Promote is off and the third-party leg is not "
                    f"run, so the dual reference collapses into one and floating outputs fail falsely "
                    f"(seed 000 §8)",)
    return CaseMode(three_party, three_party, criteria, warnings)


@dataclass(frozen=True)
class LegPolicy:
    """How one leg treats a tensor of ``dtype``: cast on entry, compute, cast at exit."""

    dtype: str  # the operator's declared dtype
    entry: str | None  # the leg casts its inputs to this; None = no cast
    compute: str  # the dtype the arithmetic runs in
    exit: str | None  # the leg narrows its output to this; None = no cast
    output: str  # the dtype the leg hands back
    reason: str


def golden_policy(dtype: str, three_party: bool, dut_widening: str | None) -> LegPolicy:
    """What the CPU golden casts to on entry and narrows to at exit (seed 000 §3, §5).

    ``dut_widening`` is the dtype the DUT accumulates in (its AccT), or None if it does not
    widen. Float + three-party: zero cast, compute and return in the promoted dtype that TTK hands
    over. Everything else, integers included even in a three-party case: follow the DUT.
    """
    kind = dtype_class(dtype)
    if kind == "float" and three_party:
        up = promoted(dtype)
        return LegPolicy(dtype, None, up, None, up,
                         f"float + three-party: Promote hands the golden {up}; it casts nothing and returns {up}")
    return _follow_dut(dtype, dut_widening,
                       "integers are never promoted" if kind == "integer" else "float + two-party")


def third_party_policy(dtype: str, three_party: bool, dut_widening: str | None) -> LegPolicy | None:
    """The GPU leg: cast as the DUT widens, narrow back at exit — integers too (seed 000 §1, §5,
    §8). None in a two-party case, where the leg does not run at all."""
    if not three_party:
        return None
    dtype_class(dtype)  # rejects an unknown dtype name
    return _follow_dut(dtype, dut_widening, "third-party leg")


def _follow_dut(dtype: str, dut_widening: str | None, why: str) -> LegPolicy:
    if dut_widening is None or dut_widening == dtype:
        return LegPolicy(dtype, None, dtype, None, dtype, f"{why}: the DUT does not widen, so neither does this leg")
    return LegPolicy(dtype, dut_widening, dut_widening, dtype, dtype,
                     f"{why}: widen to {dut_widening} like the DUT, narrow back to {dtype} at exit")


def ttk_promote(*tensors):
    """What TTK's Promote does before a three-party golden runs: raise each float tensor one step."""
    import torch

    return tuple(t.to(getattr(torch, promoted(str(t.dtype).removeprefix("torch.")))) for t in tensors)


def run_leg(policy: LegPolicy, fn, *inputs):
    """Run ``fn`` on torch tensors under ``policy``: cast the inputs, call, narrow the outputs.

    Integer narrowing wraps (two's complement), matching a kernel's store of its AccT value.
    """
    import torch

    from kb_tools.numerics.integers import wrap

    def cast(t, name):
        if not name or t.dtype == getattr(torch, name):
            return t
        target = getattr(torch, name)
        return t.to(target) if target.is_floating_point or t.dtype.is_floating_point else wrap(t, target)

    args = [cast(x, policy.entry) for x in inputs]
    out = fn(*args)
    if isinstance(out, (tuple, list)):
        return type(out)(cast(o, policy.exit) for o in out)
    return cast(out, policy.exit)
