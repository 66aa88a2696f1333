"""Our vocabulary accepts the public KB's in full: a spec written for the public routing map loads
and routes here. The public list is pinned with its label (repository, commit, path)."""

from __future__ import annotations

from conftest import REPO
from kb_tools.contract import schemas
from kb_tools.contract.selection import select
from kb_tools.contract.specs import load_spec
from kb_tools.kb import vocabulary as V
from kb_tools.kb.pages import load_kb

# hicann/pypto-gym @ 5fa9de1c, cannbot-skills/ops/pypto-pro-op-kb/topology-map.json, "topologies" keys in order.
PUBLIC_TOPOLOGY_MAP = ("elementwise", "row-reduction", "scan", "gather-scatter-indexing", "cube-matmul",
                       "quantized-matmul", "multi-phase-fusion", "long-axis", "paired-lane-rotation",
                       "row-wise-dynamic-quant")
PUBLIC_PROPERTY_KEYS = ("dtypes", "ranks", "unaligned_shapes", "tail_blocks", "long_axis", "mixed_precision",
                        "index_dtypes", "dynamic_dims", "is_list")


def test_public_vocabulary_is_accepted_in_full_and_in_order():
    assert V.TOPOLOGIES[:len(PUBLIC_TOPOLOGY_MAP)] == PUBLIC_TOPOLOGY_MAP
    assert V.CONTRACT_PROPERTY_KEYS == PUBLIC_PROPERTY_KEYS
    enum = schemas.load("kb_selection")["properties"]["topologies"]["items"]["enum"]
    assert set(PUBLIC_TOPOLOGY_MAP) <= set(enum)


SPEC = """op: {op}
class_id: "."
topologies: [{topology}]
properties:
  dtypes: [{dtypes}]
target: a2
criteria:
{criteria}
"""


def _spec(tmp_path, op, topology, dtypes):
    path = tmp_path / f"{op}.yaml"
    criteria = "\n".join(f"  {d}: {'binary_equal' if d.startswith('int') else 'close'}" for d in dtypes)
    path.write_text(SPEC.format(op=op, topology=topology, dtypes=", ".join(dtypes), criteria=criteria))
    return load_spec(path)


def test_new_public_topologies_load_and_route(tmp_path):
    kb = load_kb(REPO)
    rope = select(kb, _spec(tmp_path, "rope", "paired-lane-rotation", ["float16", "float32"]))
    quant = select(kb, _spec(tmp_path, "dyn_quant", "row-wise-dynamic-quant", ["bfloat16", "int8"]))
    rope_pages = {v.page.id for v in rope.constraints + rope.patterns}
    quant_pages = {v.page.id for v in quant.constraints + quant.patterns}
    assert {"wrapper-boundary", "multicore-tiling-balance"} <= rope_pages
    assert {"wrapper-boundary", "accumulator-precision", "integer-narrowing"} <= quant_pages
