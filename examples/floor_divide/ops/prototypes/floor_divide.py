"""The floor_divide prototype: what the operator accepts, declared once.

The wrapper's validation, the golden and the tests read these names; they match
``ops/floor_divide.yaml`` (properties.dtypes and properties.ranks), which a test holds
together. The lowering lives apart, in ``ops/wrappers/floor_divide_wrapper.py``.
"""

NAME = "floor_divide"  # aten::floor_divide (.default and .Scalar) in the framework
DTYPES = ("int8", "uint8", "int16", "int32", "int64")
RANKS = tuple(range(9))
INPUTS = {"x": {"dtypes": DTYPES, "ranks": RANKS},
          "other": {"dtypes": "same as x, or a Python int or bool (wrapped to x's dtype, as torch does)",
                    "ranks": "broadcastable with x"}}
ATTRIBUTES = {}
OUTPUTS = {"out": {"dtype": "same as x", "shape": "broadcast of x and other"}}
ZERO_DIVISOR_YIELDS = 0  # the spec's rule for x // 0 (torch on the CPU raises instead)
LAYOUTS = "any strides and storage offset; every operand is read through its strides"

SUPPORTED_DTYPES = INPUTS["x"]["dtypes"]
SUPPORTED_RANKS = INPUTS["x"]["ranks"]
MAX_RANK = max(RANKS)
