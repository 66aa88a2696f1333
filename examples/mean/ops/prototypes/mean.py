"""The mean prototype: what the operator accepts, declared once.

The wrapper's validation, the legs and the tests read these names; they match
``ops/mean.yaml`` (properties.dtypes and properties.ranks), which a test holds together. The
lowering lives apart, in ``ops/wrappers/mean_wrapper.py``.
"""

NAME = "mean"  # aten::mean.dim (and aten::mean for every axis) in the framework
DTYPES = ("float16", "bfloat16", "float32")
RANKS = tuple(range(9))
INPUTS = {"x": {"dtypes": DTYPES, "ranks": RANKS}}
ATTRIBUTES = {"dim": {"type": "None, an int or a sequence of distinct ints", "default": None},  # None: every axis
              "keepdim": {"type": "bool", "default": False},
              "dtype": {"type": "None only: the result has x's dtype", "default": None}}
OUTPUTS = {"y": {"dtype": "same as x", "shape": "x's shape without the reduced axes (kept as 1 with keepdim)"}}
LAYOUTS = "any strides and storage offset; kept and reduced axes are both read through their strides"

SUPPORTED_DTYPES = INPUTS["x"]["dtypes"]
SUPPORTED_RANKS = INPUTS["x"]["ranks"]
MAX_RANK = max(RANKS)
