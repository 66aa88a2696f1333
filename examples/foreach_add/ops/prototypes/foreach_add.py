"""The foreach_add prototype: what the operator accepts, declared once.

The wrapper's validation, the legs and the tests read these names; they match
``ops/foreach_add.yaml`` (properties.dtypes and properties.ranks), which a test holds
together. The lowering lives apart, in ``ops/wrappers/foreach_add_wrapper.py``.
"""

NAME = "_foreach_add"  # aten::_foreach_add.List and aten::_foreach_add.Scalar in the framework
DTYPES = ("float16", "bfloat16", "float32", "int32")
RANKS = (0, 1, 2, 3, 4)
B_MAX = 8  # the contract's finite maximum list length: one kernel signature of B_MAX slots per list
INPUTS = {"xs": {"dtypes": DTYPES, "ranks": RANKS, "length": f"0..{B_MAX}, every tensor of one dtype, contiguous"},
          "other": {"dtypes": "a list paired with xs (same length, dtypes, shapes, device), or a Python bool, int or float",
                    "ranks": "those of xs"}}
ATTRIBUTES = {"alpha": {"type": "int for int32 lists, int or float otherwise; only with a list other", "default": 1}}
OUTPUTS = {"outs": {"dtype": "torch.result_type(x, other) per tensor", "shape": "each x's"}}
LAYOUTS = "contiguous tensors only: the flat-slot form is rank-insensitive, element k depends on element k alone"

SUPPORTED_DTYPES = INPUTS["xs"]["dtypes"]
SUPPORTED_RANKS = INPUTS["xs"]["ranks"]
