"""The routing map derived from the pages, in the shape of the public KB's topology-map.json,
for tools and people who read that file."""

from __future__ import annotations

from kb_tools import CONTRACT_VERSION
from kb_tools.kb import vocabulary as V
from kb_tools.kb.pages import KnowledgeBase


def routing_map(kb: KnowledgeBase) -> dict:
    topologies = {t: {"patterns": [], "constraints": []} for t in V.TOPOLOGIES}
    modifiers: dict[str, dict] = {}
    target_gated, mandatory = {}, {}
    for page in kb.pages.values():
        bucket = "patterns" if page.is_pattern else "constraints"
        r = page.routing
        if page.kind == "playbook":
            continue
        if r.mandatory_for:
            mandatory[page.rel_path] = {"applies_to": list(r.mandatory_for), "reason": page.trigger}
            continue
        if r.target_gate:
            target_gated[page.rel_path] = f"Load when the target is {r.target_gate}. {page.trigger}"
        if r.properties:
            for key in r.properties:
                entry = modifiers.setdefault(key, {"patterns": [], "constraints": []})
                entry[bucket].append(page.rel_path)
                if r.topologies != "all":  # an extra key: the modifier applies only with these
                    entry.setdefault("only_with_topologies", {})[page.rel_path] = list(r.topologies)
        if not r.properties and not r.target_gate:
            for t in (V.TOPOLOGIES if r.topologies == "all" else r.topologies):
                topologies[t][bucket].append(page.rel_path)
    return {
        "schema_version": 2,
        "description": "Derived by `kbt map` from the front matter of the opkb pages; do not edit by hand.",
        "selection_rule": ("Collect every applicable constraint from the topology, property modifiers, target gate and "
                           "mandatory constraints; never truncate constraints. Keep a pattern only when its preconditions hold."),
        "contract": {
            "contract_version": CONTRACT_VERSION,
            "selection_filename": "KB_SELECTION.json",
            "usage_filename": "KB_USAGE.json",
            "implementation_statuses": list(V.IMPLEMENTATION_STATUSES),
            "property_keys": list(V.CONTRACT_PROPERTY_KEYS),
            "extra_property_keys": list(V.EXTRA_PROPERTY_KEYS),
            "derived_facts": dict(V.DERIVED_FACTS),
        },
        "topologies": topologies,
        "property_modifiers": dict(sorted(modifiers.items())),
        "target_gated": dict(sorted(target_gated.items())),
        "mandatory_constraints": dict(sorted(mandatory.items())),
    }
