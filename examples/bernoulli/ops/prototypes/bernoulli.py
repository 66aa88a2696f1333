"""The bernoulli prototype: what the operator accepts, declared once.

The wrapper's validation, the legs and the tests read these names; they match
``ops/bernoulli.yaml`` (properties.dtypes and properties.ranks), which a test holds together.
The lowering lives apart, in ``ops/wrappers/bernoulli_wrapper.py``.
"""

NAME = "bernoulli"  # aten::bernoulli.p / aten::bernoulli_.float; aclnnBernoulli, aclnnInplaceBernoulli
INPUTS = {"x": {"dtypes": ("float16", "float32", "float64", "bfloat16", "uint8", "int8", "int16", "int32",
                           "int64", "bool"),
                "ranks": (0, 1, 2, 3, 4, 5, 6, 7, 8)}}
ATTRIBUTES = {"p": {"type": "float", "range": "[0, 1]", "default": 0.5},
              "seed": {"type": "int", "range": "[0, 2**63)"},
              "offset": {"type": "int", "range": "a multiple of 4 (one Philox counter = 4 words)", "default": 0}}
OUTPUTS = {"out": {"dtype": "same as x", "shape": "same as x", "may be": "x itself (in place) or a tensor given as out="}}
LAYOUTS = "any strides and storage offset without internal overlap; ND format only"

SUPPORTED_DTYPES = INPUTS["x"]["dtypes"]
SUPPORTED_RANKS = INPUTS["x"]["ranks"]
MAX_RANK = max(SUPPORTED_RANKS)
# The bit pattern of each dtype's 1, as the integer of the same width that the kernel stores
# (IEEE half/bfloat16/single/double 1.0; integers and bool store 1).
ONE_BITS = {"float16": 0x3C00, "bfloat16": 0x3F80, "float32": 0x3F800000, "float64": 0x3FF0000000000000,
            "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1, "bool": 1}
