"""Routing pages to one operator class and writing its KB_SELECTION.json.

The predicate is the same for every page: a mandatory page always applies; otherwise the
operator must share a topology with the page, and, when the page names triggers (routing
facts or a target gate), at least one of them must hold. Every page that does not apply is
listed under ``excluded`` with the predicate that failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kb_tools import CONTRACT_VERSION
from kb_tools.jsonio import dumps, write_atomic
from kb_tools.pages import KnowledgeBase, Page
from kb_tools.specs import OpSpec

SELECTION_FILENAME = "KB_SELECTION.json"


@dataclass(frozen=True)
class Verdict:
    page: Page
    applies: bool
    reason: str  # why it applies, or the predicate that failed


def evaluate(page: Page, spec: OpSpec, facts: dict[str, str]) -> Verdict:
    routing = page.routing
    if routing.mandatory_for:
        return Verdict(page, True, f"mandatory for {', '.join(routing.mandatory_for)}: applies to every class")
    if routing.topologies != "all" and not routing.topologies:
        return Verdict(page, False, "routing: reached from ROUTER.md tasks only; no operator property selects it")
    if routing.topologies != "all":
        shared = [t for t in spec.topologies if t in routing.topologies]
        if not shared:
            have = ", ".join(spec.topologies) or "none"
            return Verdict(page, False, f"topology: needs one of {', '.join(routing.topologies)}; the operator has {have}")
        topo_reason = f"topology {', '.join(shared)}"
    else:
        topo_reason = "every topology"
    triggers = [f"{key} ({facts[key]})" for key in routing.properties if key in facts]
    if routing.target_gate and spec.target == routing.target_gate:
        triggers.append(f"target {spec.target}")
    if not routing.properties and not routing.target_gate:
        return Verdict(page, True, f"{topo_reason}: {page.trigger}")
    if not triggers:
        wanted = [*routing.properties] + ([f"target {routing.target_gate}"] if routing.target_gate else [])
        return Verdict(page, False, f"triggers: none of {', '.join(wanted)} holds")
    return Verdict(page, True, f"{topo_reason}; {'; '.join(triggers)}")


@dataclass
class Selection:
    spec: OpSpec
    constraints: list[Verdict]
    patterns: list[Verdict]
    playbooks: list[Verdict]
    excluded: list[Verdict]

    @property
    def references(self) -> list[Verdict]:
        """The references KB_USAGE must cover: required constraints and optional patterns."""
        return self.constraints + self.patterns

    def to_json(self) -> dict:
        spec = self.spec

        def ref(v: Verdict) -> dict:
            return {"path": v.page.rel_path, "reason": v.reason, "sha256": v.page.sha256}

        return {
            "schema_version": CONTRACT_VERSION,
            "op": spec.op,
            "class_id": spec.class_id,
            "topologies": list(spec.topologies),
            "properties": {k: spec.properties[k] for k in sorted(spec.properties)},
            "required_constraints": [ref(v) for v in self.constraints],
            "optional_patterns": [ref(v) for v in self.patterns],
            "no_matching_pattern": not self.patterns,
            "playbooks": [ref(v) for v in self.playbooks],
            "target": spec.target,
            "wrapper": spec.wrapper,
            "excluded": [{"path": v.page.rel_path, "predicate": v.reason} for v in self.excluded],
        }


def select(kb: KnowledgeBase, spec: OpSpec) -> Selection:
    facts = spec.facts()
    chosen = {"constraint": [], "pattern": [], "playbook": []}
    excluded = []
    for page in sorted(kb.pages.values(), key=lambda p: p.rel_path):
        verdict = evaluate(page, spec, facts)
        (chosen[page.kind] if verdict.applies else excluded).append(verdict)
    return Selection(spec, chosen["constraint"], chosen["pattern"], chosen["playbook"], excluded)


def write_selection(selection: Selection, out_dir: Path) -> Path:
    path = Path(out_dir) / SELECTION_FILENAME
    write_atomic(path, dumps(selection.to_json()))
    return path
