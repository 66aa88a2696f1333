"""The closed vocabularies shared by pages, specs, the router and the JSON contract.

One place, so that a page, a spec and a schema cannot disagree on what a topology or a
property key is called (the public pypto-gym KB keeps the same list in topology-map.json).
"""

from __future__ import annotations

# The public KB's topologies, all of them and in its order (hicann/pypto-gym,
# cannbot-skills/ops/pypto-pro-op-kb/topology-map.json at 5fa9de1c): a spec written for it is
# accepted here unchanged. Ours only add to the list, never narrow it.
PUBLIC_TOPOLOGIES = (
    "elementwise",
    "row-reduction",
    "scan",
    "gather-scatter-indexing",
    "cube-matmul",
    "quantized-matmul",
    "multi-phase-fusion",
    "long-axis",
    "paired-lane-rotation",
    "row-wise-dynamic-quant",
)
TOPOLOGIES = PUBLIC_TOPOLOGIES + (
    "random",
    "data-movement",
    "foreach",
)

# Property keys of the public contract (topology-map.json contract.property_keys) ...
CONTRACT_PROPERTY_KEYS = (
    "dtypes",
    "ranks",
    "unaligned_shapes",
    "tail_blocks",
    "long_axis",
    "mixed_precision",
    "index_dtypes",
    "dynamic_dims",
    "is_list",
)
# ... and ours, which a strict reader of the original can ignore.
EXTRA_PROPERTY_KEYS = (
    "inplace",
    "non_contiguous",
    "scalar_operand",
    "packed_intermediate",
    "memory_optimization",
    "tf_path",
)
PROPERTY_KEYS = CONTRACT_PROPERTY_KEYS + EXTRA_PROPERTY_KEYS
LIST_PROPERTY_KEYS = ("dtypes", "ranks", "index_dtypes")

# Facts derived from a spec's dtypes, criteria and target; pages may route on them like
# on property keys. Each maps to a one-line definition used in reasons and docs.
DERIVED_FACTS = {
    "has_integer_dtype": "a registered dtype is an integer type (bool excluded)",
    "has_float_dtype": "a registered dtype is a floating type",
    "has_half_dtype": "a registered dtype is a 16-bit float (float16, bfloat16)",
    "three_party": "a floating dtype's criterion is cross_check (three-leg comparison)",
}
ROUTING_FACTS = PROPERTY_KEYS + tuple(DERIVED_FACTS)

ROLES = ("planner", "architect", "coder", "verifier")
PAGE_KINDS = {"constraint": "constraints", "pattern": "patterns", "playbook": "playbooks"}
AREAS = ("host", "precision", "memory", "verification", "lowering")
CHECK_KINDS = ("static", "runtime", "review")
TARGETS = ("a2", "a3", "a5")

IMPLEMENTATION_STATUSES = ("implemented", "deviated", "not_applicable")

# TTK's criteria (ttk/core_modules/comparison/registry.py); quant is for quantising int8 outputs;
# gym_gate is the PyPTO-Pro samples' check (mixed tolerance plus the MERE/MARE gates, numerics/gym_gate.py).
CRITERIA = ("binary_equal", "close", "mix_tolerance", "stat_rel_err", "cross_check", "quant", "gym_gate")

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2")
HALF_DTYPES = ("float16", "bfloat16")
INTEGER_DTYPES = ("int8", "uint8", "int16", "int32", "int64")
DTYPES = FLOAT_DTYPES + INTEGER_DTYPES + ("bool",)
DTYPE_ALIASES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "fp64": "float64",
                 "half": "float16", "float": "float32", "double": "float64"}


def undeclared_criterion(dtype: str) -> str:
    """What TTK judges an output by when the spec declares no criterion for its dtype: integer
    and bool outputs always bit for bit, floats by its default mix_tolerance (resolve.py)."""
    return "binary_equal" if dtype in INTEGER_DTYPES or dtype == "bool" else "mix_tolerance"


def canonical_dtype(name: str) -> str | None:
    """torch's name for ``name`` (aliases such as fp16 accepted), or None if unknown."""
    name = str(name).strip()
    if name.startswith("torch."):
        name = name[len("torch."):]
    name = DTYPE_ALIASES.get(name, name)
    return name if name in DTYPES else None
