"""CPU golden leg of floor_divide (``kb/constraints/integer-narrowing.md``).

Every dtype is an integer judged ``binary_equal`` (two-party), so the golden reproduces the
kernel's semantics: it widens to the DUT's accumulate type (the spec's widening map), routes
a divisor of -1 to a wrapping negation (torch's CPU division traps on INT_MIN / -1 at int32
and int64 width and kills the process), gives a zero divisor the prototype's value (torch on
the CPU raises), floor-divides the rest and narrows once at exit by wrap-around, where the
kernel's store narrows. A scalar divisor wraps to x's dtype first, as torch converts it.
"""

WIDENING = {"int8": "int32", "uint8": "int32", "int16": "int32", "int32": "int32", "int64": "int64"}  # = ops/floor_divide.yaml
ZERO_DIVISOR_YIELDS = 0  # the spec's rule, stated again here: the golden imports nothing of the implementation


def golden_floor_divide(x, other):
    """``floor(x / other)`` at the DUT's width with the -1 and zero guards, in x's dtype."""
    import torch

    accumulate = getattr(torch, WIDENING[str(x.dtype).removeprefix("torch.")])
    if not isinstance(other, torch.Tensor):
        other = torch.tensor(int(other), dtype=torch.int64).to(x.dtype)  # 300 -> 44 for int8, -1 -> 255 for uint8
    a, b = torch.broadcast_tensors(x.to(accumulate), other.to(accumulate))
    minus_one = b == -1
    zero = b == 0
    divisor = torch.where(minus_one | zero, torch.ones_like(b), b)
    quotient = torch.div(a, divisor, rounding_mode="floor")
    quotient = torch.where(minus_one, torch.neg(a), quotient)  # -INT_MIN wraps to INT_MIN at this width
    quotient = torch.where(zero, torch.full_like(quotient, ZERO_DIVISOR_YIELDS), quotient)
    return quotient.to(x.dtype)  # wrap-around narrowing, the kernel's store
