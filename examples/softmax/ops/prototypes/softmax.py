"""The softmax prototype: what the operator accepts, declared once.

The wrapper's validation, the legs' harness and the tests all read these names; they match
``ops/softmax.yaml`` (properties.dtypes and properties.ranks), which a test holds together.
The lowering (how it runs) lives apart, in ``ops/wrappers/softmax_wrapper.py``.
"""

NAME = "softmax"  # aten::softmax / aten::_softmax in the framework
INPUTS = {"x": {"dtypes": ("float16", "bfloat16", "float32"), "ranks": (0, 1, 2, 3, 4)}}
ATTRIBUTES = {"dim": {"type": "int", "default": -1}}  # any axis, negative counts from the end; 0 or -1 for 0-d
OUTPUTS = {"y": {"dtype": "same as x", "shape": "same as x"}}
LAYOUTS = "any strides and storage offset; the reduced axis is read through its stride"

SUPPORTED_DTYPES = INPUTS["x"]["dtypes"]
SUPPORTED_RANKS = INPUTS["x"]["ranks"]
