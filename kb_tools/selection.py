"""Routing pages to one operator class and writing its KB_SELECTION.json.

The predicate is the same for every page: a mandatory page always applies; otherwise the
operator must share a topology with the page, and, when the page names triggers (routing
facts or a target gate), at least one of them must hold. Every page that does not apply is
listed under ``excluded`` with the predicate that failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from kb_tools import CONTRACT_VERSION
from kb_tools.jsonio import dump_bytes, write_atomic
from kb_tools.pages import KnowledgeBase, Page
from kb_tools.specs import OpSpec

SELECTION_FILENAME = "KB_SELECTION.json"


class Verdict(NamedTuple):
    """One page judged for one operator. A tuple rather than a frozen dataclass: a build of
    1,000 operators over 300 pages judges 300,000 times, and the dataclass's guarded
    ``__init__`` alone cost a quarter of parsing the pages."""

    page: Page
    applies: bool
    reason: str  # why it applies, or the predicate that failed


def evaluate(page: Page, spec: OpSpec, facts: dict[str, str]) -> Verdict:
    """One page against one operator (the same verdict ``Router`` reaches in bulk)."""
    fixed, trigger = _by_topology(page, spec.topologies)
    return fixed if fixed is not None else _by_trigger(*trigger, facts, spec.target)


def _by_topology(page: Page, topologies: tuple[str, ...]):
    """What the operator's topologies alone decide about ``page``: (a verdict, None) when
    that settles it, else (None, what the triggers need) for ``_by_trigger``."""
    routing = page.routing
    if routing.mandatory_for:
        return Verdict(page, True, f"mandatory for {', '.join(routing.mandatory_for)}: applies to every class"), None
    if routing.topologies != "all" and not routing.topologies:
        return Verdict(page, False, "routing: reached from ROUTER.md tasks only; no operator property selects it"), None
    if routing.topologies != "all":
        shared = [t for t in topologies if t in routing.topologies]
        if not shared:
            have = ", ".join(topologies) or "none"
            return Verdict(page, False, f"topology: needs one of {', '.join(routing.topologies)}; the operator has {have}"), None
        topo_reason = f"topology {', '.join(shared)}"
    else:
        topo_reason = "every topology"
    if not routing.properties and not routing.target_gate:
        return Verdict(page, True, f"{topo_reason}: {page.trigger}"), None
    wanted = [*routing.properties] + ([f"target {routing.target_gate}"] if routing.target_gate else [])
    none_holds = Verdict(page, False, f"triggers: none of {', '.join(wanted)} holds")
    return None, (page, topo_reason, routing.properties, routing.target_gate, none_holds)


def _by_trigger(page: Page, topo_reason: str, properties, gate, none_holds: Verdict, facts: dict[str, str], target) -> Verdict:
    triggers = [f"{key} ({facts[key]})" for key in properties if key in facts]
    if gate and target == gate:
        triggers.append(f"target {target}")
    return Verdict(page, True, f"{topo_reason}; {'; '.join(triggers)}") if triggers else none_holds


class Router:
    """One KB's pages ready to route many operators, as ``kbt build`` does.

    A page's verdict depends on the operator's topologies, its routing facts and its target,
    never on its name. What the topologies decide (mandatory pages, pages of other
    topologies, pages without triggers) is worked out once per distinct list of topologies;
    only the pages left over look at the facts. Operators with equal facts share one
    selection. Verdicts are read-only and shared between the selections that hold them.
    """

    def __init__(self, kb: KnowledgeBase):
        self.pages = sorted(kb.pages.values(), key=lambda p: p.rel_path)
        self._plans: dict[tuple[str, ...], list] = {}
        self._selections: dict[tuple, tuple[list, list, list, list]] = {}

    def _plan(self, topologies: tuple[str, ...]) -> list:
        plan = self._plans.get(topologies)
        if plan is None:
            plan = self._plans[topologies] = [(page.kind, *_by_topology(page, topologies)) for page in self.pages]
        return plan

    def select(self, spec: OpSpec) -> Selection:
        facts = spec.facts()
        key = (spec.topologies, tuple(facts.items()), spec.target)
        lists = self._selections.get(key)
        if lists is None:
            lists = self._selections[key] = self._route(spec.topologies, facts, spec.target)
        constraints, patterns, playbooks, excluded = lists
        return Selection(spec, list(constraints), list(patterns), list(playbooks), excluded.copy())

    def _route(self, topologies, facts, target) -> tuple[list, list, list, list]:
        chosen = {"constraint": [], "pattern": [], "playbook": []}
        excluded = []
        for kind, verdict, trigger in self._plan(topologies):
            if verdict is None:
                verdict = _by_trigger(*trigger, facts, target)
            (chosen[kind] if verdict.applies else excluded).append(verdict)
        return chosen["constraint"], chosen["pattern"], chosen["playbook"], excluded


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
    return Router(kb).select(spec)


def write_selection(selection: Selection, out_dir: Path) -> Path:
    """Write ``out_dir/KB_SELECTION.json``; a file that already holds these bytes is kept."""
    path = Path(out_dir) / SELECTION_FILENAME
    write_atomic(path, dump_bytes(selection.to_json()), keep_equal=True)
    return path
