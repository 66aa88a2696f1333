"""A CANN operator folder as opkb's ``OpSpec``, so every command that takes a spec takes the folder.

The folder says the dtypes, the criteria TTK reaches and the kernel's widening. It does not say
the router's topology or the target: those are inferred here from the folder's category and
name and from its SoC configs, each with the reason written into the spec's description; where
the inference is wrong, write an ``ops/<op>.yaml`` and pass it with ``--spec``.
"""

from __future__ import annotations

from pathlib import Path

from kb_tools.cann.folder import read_operator
from kb_tools.contract.opspec import OpSpec
from kb_tools.kb import vocabulary as V

# SoC names of AddConfig -> opkb's targets (Atlas A2 = 910B, A3 = 910_93, A5 = 950)
SOC_TARGETS = {"ascend910b": "a2", "ascend910_93": "a3", "ascend950": "a5"}


def infer_topology(folder: Path) -> tuple[str, str]:
    """(topology, reason) from the category folder and the operator's name."""
    name, category = folder.name, folder.parent.name
    if category == "random" or name.startswith(("random", "drop_out", "stateless_random")):
        return "random", f"the folder sits under random/ or is named {name}"
    if name.startswith(("cum", "cumulative")):
        return "scan", f"{name} is a cumulative operator"
    if name.startswith(("reduce_", "arg_max", "arg_min")) or name.endswith("_sum_all"):
        return "row-reduction", f"{name} is named as a reduction"
    if category == "conversion":
        return "data-movement", "the folder sits under conversion/ (data movement)"
    return "elementwise", f"default for a {category}/ operator with no reduction, scan or random name"


def infer_target(socs: list[str]) -> tuple[str | None, str]:
    known = [(s, SOC_TARGETS[s]) for s in socs if s in SOC_TARGETS]
    if not known:
        return None, f"no SoC opkb knows among its configs ({', '.join(socs) or 'none'})"
    soc, target = max(known, key=lambda pair: pair[1])
    return target, f"the newest SoC it registers, {soc}"


def as_spec(folder) -> OpSpec | None:
    """The folder's spec, or None when it registers no dtype opkb's vocabulary knows."""
    folder = Path(folder)
    facts = read_operator(folder, str(folder))
    dtypes = [d for d in facts.dtypes if V.canonical_dtype(d)]
    if not dtypes:
        return None
    dropped = [d for d in facts.dtypes if d not in dtypes]
    topology, why_topology = infer_topology(folder.resolve())
    target, why_target = infer_target(facts.socs)
    widening = {}
    if facts.widening == "float32":
        widening = {d: "float32" for d in dtypes if d in V.HALF_DTYPES}
    criteria = {d: s for d, s in facts.criteria.items() if d in dtypes and s in V.CRITERIA}
    notes = [f"Read from the CANN operator folder {folder}.", f"Topology {topology}: {why_topology}.",
             f"Target {target or 'unknown'}: {why_target}."]
    if widening:
        notes.append(f"Widening float32 for half dtypes: {facts.widening_at}.")
    if dropped:
        notes.append(f"Registered but outside opkb's dtypes: {', '.join(dropped)}.")
    def_path = next(iter(sorted((folder / "op_host").glob("*_def.cpp"))), folder / "op_host")
    lines = {d: int(at.rsplit(":", 1)[1]) for d in dtypes
             if (at := facts.sources.get(f"dtype {d}", "")).rsplit(":", 1)[-1].isdigit()}
    return OpSpec(op=facts.op, class_id=".", topologies=(topology,), properties={"dtypes": dtypes},
                  target=target, criteria=criteria, widening=widening, wrapper=None,
                  description=" ".join(notes), path=def_path, dtype_lines=lines)
