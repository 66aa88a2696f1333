"""CPU golden leg of add (``kb/constraints/golden-follows-dut-widening.md``,
``kb/constraints/integer-narrowing.md``).

add is two-party for every dtype (``close`` for floats, ``binary_equal`` for integers), so no
Promote happens and the golden follows the DUT: it casts the inputs to the DUT's accumulate
type (the spec's widening map; the dtype itself where the map has no entry), adds there and
narrows to the result dtype at exit, by rounding for floats and two's-complement wrap-around
for integers, as the kernel's store does. torch computes; numpy only saves and loads.
"""

WIDENING = {"float16": "float32", "bfloat16": "float32", "int8": "int32"}  # = ops/add.yaml


def golden_add(x, other, alpha=1):
    """``x + alpha * other`` at the DUT's accumulate type, narrowed to torch's result dtype."""
    import torch

    out_dtype = torch.result_type(x, other)
    name = str(out_dtype).removeprefix("torch.")
    accumulate = getattr(torch, WIDENING.get(name, name))
    wide_other = other.to(accumulate) if isinstance(other, torch.Tensor) else other
    return torch.add(x.to(accumulate), wide_other, alpha=alpha).to(out_dtype)
