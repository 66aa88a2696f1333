"""The cat prototype: what the operator accepts, declared once.

The wrapper's validation, the legs and the tests read these names; they match
``ops/cat.yaml`` (properties.dtypes and properties.ranks), which a test holds together.
The lowering lives apart, in ``ops/wrappers/cat_wrapper.py``.
"""

NAME = "cat"  # aten::cat; aclnnCat
INPUTS = {"tensors": {"kind": "TensorList", "length": "1..8 (B_MAX)",
                      "dtypes": ("float16", "bfloat16", "float32", "int8", "int32", "int64", "bool"),
                      "ranks": (1, 2, 3, 4, 5, 6, 7, 8),
                      "agree": "one dtype and device; equal extents on every axis but dim "
                               "(a 1-D tensor of shape (0,) is skipped, as torch.cat skips it)"}}
ATTRIBUTES = {"dim": {"type": "int", "default": 0}}  # negative counts from the end
OUTPUTS = {"y": {"dtype": "the inputs' dtype", "shape": "the inputs' shape with the extents along dim summed"}}
LAYOUTS = "any strides and storage offset for each input (read through its strides); ND only"

SUPPORTED_DTYPES = INPUTS["tensors"]["dtypes"]
SUPPORTED_RANKS = INPUTS["tensors"]["ranks"]
MAX_RANK = max(SUPPORTED_RANKS)
B_MAX = 8  # list slots of the one launch
