"""The routing map derived from the pages, in the shape of the public KB's topology-map.json,
for tools and people who read that file: schema 2 (its map as stored at pypto-gym 5fa9de1), or
schema 3, which adds what its CONTRACT.md at 86139c5 says the map is the single source of
(contract version 3): the reference classes with their quantity rules, and the roles each
mandatory constraint applies to."""

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


# CONTRACT.md v3 (pypto-gym 86139c5, "Reference classes"): the three classes and their rules
REFERENCE_CLASSES = {
    "optional_patterns": {"quantity": "no fixed limit: all and only patterns with a distinct, concrete design effect"},
    "required_constraints": {"quantity": "every applicable constraint; never truncated"},
    "mandatory_constraints": {"quantity": "applied to every matching task; part of required_constraints; never truncated"},
}
ROLES = ("planner", "architect", "coder", "verifier")


def routing_map_v3(kb: KnowledgeBase) -> dict:
    """The schema-3 map: schema 2 plus the contract's reference classes and role scope."""
    doc = routing_map(kb)
    doc["schema_version"] = 3
    contract = dict(doc["contract"])
    contract["contract_version"] = 3
    contract["reference_classes"] = REFERENCE_CLASSES
    contract["roles"] = list(ROLES)
    doc["contract"] = contract
    return doc
