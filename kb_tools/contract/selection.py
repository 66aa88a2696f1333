"""Routing pages to one operator class and writing its KB_SELECTION.json.

The predicate is the same for every page: a mandatory page always applies; otherwise the
operator must share a topology with the page, and, when the page names triggers (routing
facts or a target gate), at least one of them must hold. Every page that does not apply is
listed under ``excluded`` with the predicate that failed.
"""

from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path

from kb_tools import CONTRACT_VERSION
from kb_tools.contract.specs import OpSpec
from kb_tools.files.jsonio import dump_bytes, write_atomic
from kb_tools.kb.pages import KnowledgeBase, Page

SELECTION_FILENAME = "KB_SELECTION.json"


# One page judged for one operator: (page, applies, reason), the reason saying why it
# applies or which predicate failed. A tuple rather than a frozen dataclass: a build of 1,000
# operators over 300 pages judges 300,000 times, and the dataclass's guarded ``__init__``
# alone cost a quarter of parsing the pages (collections' namedtuple, not typing's, which
# ``kbt select`` would otherwise import only for this).
Verdict = namedtuple("Verdict", ["page", "applies", "reason"])


def evaluate(page: Page, spec: OpSpec, facts: dict[str, str]) -> Verdict:
    """One page against one operator (the same verdict ``Router`` reaches in bulk)."""
    topologies = spec.topologies
    fixed, trigger = _by_topology(_compile(page), topologies, ", ".join(topologies) or "none")
    return fixed if fixed is not None else _by_trigger(*trigger, facts, spec.target)


def _compile(page: Page) -> tuple:
    """What a page's routing says whatever the operator: (page, a verdict that always holds
    or None, the topologies it needs with the start of the reason it gives when none is
    shared, or None for every topology; what its triggers need, or None when it has none)."""
    routing = page.routing
    if routing.mandatory_for:
        return page, Verdict(page, True, f"mandatory for {', '.join(routing.mandatory_for)}: applies to every class"), None, None
    if routing.topologies != "all" and not routing.topologies:
        return page, Verdict(page, False, "routing: reached from ROUTER.md tasks only; no operator property selects it"), None, None
    needs = None
    if routing.topologies != "all":
        needs = frozenset(routing.topologies), f"topology: needs one of {', '.join(routing.topologies)}; the operator has "
    trigger = None
    if routing.properties or routing.target_gate:
        wanted = [*routing.properties] + ([f"target {routing.target_gate}"] if routing.target_gate else [])
        trigger = routing.properties, routing.target_gate, Verdict(page, False, f"triggers: none of {', '.join(wanted)} holds")
    return page, None, needs, trigger


def _by_topology(compiled: tuple, topologies: tuple[str, ...], have: str):
    """What the operator's topologies (``have`` is them as text) decide about a compiled
    page: (a verdict, None) when that settles it, else (None, what ``_by_trigger`` needs)."""
    page, fixed, needs, trigger = compiled
    if fixed is not None:
        return fixed, None
    if needs is None:
        topo_reason = "every topology"
    else:
        needed, unshared = needs
        shared = [t for t in topologies if t in needed]
        if not shared:
            return Verdict(page, False, unshared + have), None
        topo_reason = "topology " + ", ".join(shared)
    if trigger is None:
        return Verdict(page, True, f"{topo_reason}: {page.trigger}"), None
    return None, (page, topo_reason, *trigger)


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
        self.compiled = [_compile(page) for page in sorted(kb.pages.values(), key=lambda p: p.rel_path)]
        self._plans: dict[tuple[str, ...], list] = {}
        self._selections: dict[tuple, tuple[list, list, list, list]] = {}

    def _plan(self, topologies: tuple[str, ...]) -> list:
        plan = self._plans.get(topologies)
        if plan is None:
            have = ", ".join(topologies) or "none"
            plan = self._plans[topologies] = [(page[0].kind, *_by_topology(page, topologies, have)) for page in self.compiled]
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
