"""Bit-for-bit criteria: TTK's binary_equal (binary_equal.py) and quant (quant.py)."""

from __future__ import annotations

from kb_tools.numerics import chunks
from kb_tools.numerics import tolerances as tol
from kb_tools.numerics.verdict import Verdict, dtype_name, empty, finish

_INT_VIEW = {1: "uint8", 2: "int16", 4: "int32", 8: "int64"}


def _nan_mask(torch, t):
    """NaN positions; float8_e8m0fnu's only NaN is the byte 0xFF, the 4-bit floats have none."""
    if t.dtype == getattr(torch, "float8_e8m0fnu", None):
        return t.view(torch.uint8) == 0xFF
    if t.dtype == getattr(torch, "float4_e2m1fn_x2", None):
        return torch.zeros(t.shape, dtype=torch.bool, device=t.device)
    return torch.isnan(t.float() if t.element_size() == 1 else t)


def _bit_differences(torch, a, g):
    """Per-element 'differs bitwise and is not NaN on both sides'; float4 pairs split per value."""
    if a.dtype == getattr(torch, "float4_e2m1fn_x2", None):
        ab, gb = a.view(torch.uint8), g.view(torch.uint8)
        return torch.stack([(ab & 0xF) != (gb & 0xF), (ab >> 4) != (gb >> 4)], -1).reshape(-1)
    if not a.dtype.is_floating_point:
        return a != g
    view = getattr(torch, _INT_VIEW[a.element_size()])
    return (a.view(view) != g.view(view)) & ~(_nan_mask(torch, a) & _nan_mask(torch, g))


def _integer_like(torch, t) -> bool:
    return not t.dtype.is_floating_point and not t.dtype.is_complex


def binary_equal(dut, golden) -> Verdict:
    """Bit-for-bit equality; NaN against NaN counts as equal (binary_equal.py).

    Legs of two dtypes are compared only when both are integers (or bool) whose numpy promotion
    is an integer type; any other pair is a FAIL, "not bitwise comparable", as in TTK.
    """
    import numpy as np
    import torch

    (a, g), notes = chunks.flat_legs(dut, golden)
    v = Verdict("binary_equal", dtype_name(dut), True, notes=notes)
    if a.numel() == 0:
        return empty("binary_equal", dtype_name(dut), notes)
    if a.dtype != g.dtype:
        common = None
        if _integer_like(torch, a) and _integer_like(torch, g):
            promoted = np.promote_types(np.dtype(dtype_name(a)), np.dtype(dtype_name(g)))
            if np.issubdtype(promoted, np.integer):
                common = getattr(torch, promoted.name)
        if common is None:
            v.reasons.append(f"{dtype_name(a)} against {dtype_name(g)} is not bitwise comparable (TTK fails it: only "
                             f"integers promote to a common integer type)")
            v.metrics = {"differing": None, "n": a.numel()}
            return finish(v)
        a, g = a.to(common), g.to(common)
        v.notes.append(f"compared as {promoted.name}, the two integer dtypes' common type")
    differ = _bit_differences(torch, a, g)
    count = int(differ.sum())
    v.metrics = {"differing": count, "n": differ.numel(), "precision": (differ.numel() - count) / differ.numel()}
    if count:
        first = int(differ.nonzero()[0, 0])
        where = _index(torch, dut, first) if differ.numel() == a.numel() else (first,)
        v.reasons.append(f"{count} of {differ.numel()} elements differ bitwise; first at index {where}"
                         + _values_at(a, g, first, differ.numel() == a.numel()))
    return finish(v)


def _index(torch, t, flat: int) -> tuple:
    if t.dim() == 0:
        return ()
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), tuple(t.shape)))


def _values_at(a, g, i: int, readable: bool) -> str:
    if not readable or (a.element_size() == 1 and a.dtype.is_floating_point):  # fp8: no readable item()
        return ""
    return f": {a[i].item()!r} vs golden {g[i].item()!r}"


def quant(dut, golden, ptol: float = 0.0) -> Verdict:
    """TTK's quant: |a - g| <= 1 on an int4/int8 output declared quantised; share over it <= ptol."""
    import torch

    (a, g), notes = chunks.flat_legs(dut, golden)
    if a.numel() == 0:
        return empty("quant", dtype_name(dut), notes)
    over = int(((a.to(torch.int32) - g.to(torch.int32)).abs() > tol.QUANT_ABS_LIMIT).sum())
    precision = (a.numel() - over) / a.numel()
    v = Verdict("quant", dtype_name(dut), True, notes=notes,
                metrics={"exceed_count": over, "precision": precision, "ptol": ptol})
    if (1 - precision) > ptol:
        v.reasons.append(f"{over} of {a.numel()} elements off by more than {tol.QUANT_ABS_LIMIT} "
                         f"(share {1 - precision:.6g} > ptol {ptol:g})")
    return finish(v)
