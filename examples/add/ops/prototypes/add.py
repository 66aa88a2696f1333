"""The add prototype: what the operator accepts, declared once.

The wrapper's validation, the legs and the tests read these names; they match
``ops/add.yaml`` (properties.dtypes and properties.ranks), which a test holds together. The
lowering lives apart, in ``ops/wrappers/add_wrapper.py``.
"""

NAME = "add"  # aten::add.Tensor and aten::add.Scalar in the framework
DTYPES = ("float16", "bfloat16", "float32", "int8", "int32", "int64")
RANKS = tuple(range(9))
INPUTS = {"x": {"dtypes": DTYPES, "ranks": RANKS},
          "other": {"dtypes": "same as x, or a Python bool, int or float", "ranks": "broadcastable with x"}}
ATTRIBUTES = {"alpha": {"type": "int for integer tensors, int or float otherwise", "default": 1}}
OUTPUTS = {"out": {"dtype": "torch.result_type(x, other)", "shape": "broadcast of x and other"}}
LAYOUTS = "any strides and storage offset; every operand is read through its strides"

SUPPORTED_DTYPES = INPUTS["x"]["dtypes"]
SUPPORTED_RANKS = INPUTS["x"]["ranks"]
MAX_RANK = max(RANKS)
