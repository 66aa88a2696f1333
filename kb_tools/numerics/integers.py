"""Integer semantics a kernel has and a golden must copy (seed 000 §8).

A kernel computes in its accumulate type (AccT) and wraps modulo 2^width there; storing to a
narrower output wraps again. Because wrapping is a ring homomorphism, narrowing after every
step and narrowing once at the end agree for + − ×, but not for integer division. Division
also has two hardware traps on CPU: INT_MIN / −1 (SIGFPE) and x / 0; :func:`safe_div` routes
the first to negation (x / −1 ≡ −x under wrapping) and guards the second.
"""

from __future__ import annotations


def wrap(x, dtype):
    """Integer tensor ``x`` reduced modulo 2^width into ``dtype``'s range (two's complement)."""
    import torch

    if x.dtype.is_floating_point:
        raise TypeError(f"wrap takes integer tensors, not {x.dtype}")
    if x.dtype == dtype:
        return x
    dst = torch.iinfo(dtype)
    src_min, src_max = (0, 1) if x.dtype == torch.bool else (torch.iinfo(x.dtype).min, torch.iinfo(x.dtype).max)
    if (dst.min <= src_min and src_max <= dst.max) or dst.bits == 64:
        return x.to(dtype)  # widening, or int64 itself: nothing to wrap
    return (torch.remainder(x.to(torch.int64) - dst.min, 1 << dst.bits) + dst.min).to(dtype)


def _exact(op):
    def apply(torch, a, b, acc):
        if acc == torch.int64:
            return op(a, b)  # int64 arithmetic wraps at its own width
        return wrap(op(a.to(torch.int64), b.to(torch.int64)), acc)
    return apply


def safe_div(a, b, on_zero: int = 0):
    """Truncating division that never traps: divisor −1 → negation, divisor 0 → ``on_zero``.

    Computed in the common dtype of ``a`` and ``b``; the negation wraps, so INT_MIN / −1 gives
    INT_MIN, the same as a kernel whose AccT wraps.
    """
    import torch

    common = torch.promote_types(a.dtype, b.dtype)
    a, b = a.to(common), b.to(common)
    minus_one = b == -1
    zero = b == 0
    divisor = torch.where(minus_one | zero, torch.ones_like(b), b)
    q = torch.div(a, divisor, rounding_mode="trunc")
    q = torch.where(minus_one, wrap(-a.to(torch.int64), common) if common != torch.int64 else torch.neg(a), q)
    return torch.where(zero, torch.full_like(q, on_zero), q)


OPS = {
    "add": _exact(lambda a, b: a + b),
    "sub": _exact(lambda a, b: a - b),
    "mul": _exact(lambda a, b: a * b),
    "div": lambda torch, a, b, acc: safe_div(a, b),
}


def evaluate(x, steps, acc_dtype, out_dtype, per_step: bool):
    """Fold ``steps`` ([(op, operand), ...]) over ``x`` in ``acc_dtype`` and store as ``out_dtype``.

    ``per_step`` narrows to ``out_dtype`` after every step (and widens back), as a kernel that
    stores each intermediate would; otherwise only the final value is narrowed.
    """
    import torch

    v = x.to(acc_dtype)
    for op, y in steps:
        v = OPS[op](torch, v, y.to(acc_dtype), acc_dtype)
        if per_step:
            v = wrap(v, out_dtype).to(acc_dtype)
    return wrap(v, out_dtype)
