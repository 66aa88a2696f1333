"""A CANN operator folder as opkb's ``OpSpec``, so every command that takes a spec takes the folder.

The folder says the dtypes, the criteria TTK reaches and the kernel's widening. It does not say
the router's topology or the target: those are inferred here from the folder's category and
name and from its SoC configs, each with the reason written into the spec's description; where
the inference is wrong, write an ``ops/<op>.yaml`` and pass it with ``--spec``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kb_tools.cann.folder import GOLDEN, read_operator
from kb_tools.cann.opdef import DT_NAMES
from kb_tools.contract.opspec import OpSpec
from kb_tools.diagnostics import Diagnostic
from kb_tools.kb import vocabulary as V

# SoC names of AddConfig -> opkb's targets (Atlas A2 = 910B, A3 = 910_93, A5 = 950)
SOC_TARGETS = {"ascend910b": "a2", "ascend910_93": "a3", "ascend950": "a5"}


_GE_NAMES = {ttk: ge for ge, ttk in DT_NAMES.items()}


@dataclass(frozen=True)
class CannSpec(OpSpec):
    """An OpSpec read from a folder: its gaps are fixed in the folder, not in an ops/<op>.yaml."""

    golden: str = ""  # the folder's tests/assets/golden.py as shown
    folder: str = ""  # the operator folder as shown: what a command is given to read this spec again
    inferred: tuple = ()  # (fact, value, reason, note in the description) for what the folder cannot say

    def criterion_gaps(self) -> list[Diagnostic]:
        """SP030 at the OpDef line registering the dtype, with the fix a CANN developer makes."""
        golden = _near(self.golden) if self.golden else f"{self.folder or '.'}/{GOLDEN.as_posix()}"
        return [Diagnostic(str(self.path), self.dtype_lines.get(d), "SP030",
                           f"dtype {d} is registered here but no tolerance TTK reaches covers it: TTK would "
                           f"judge it by its default {V.undeclared_criterion(d)} instead of this operator's "
                           f"standard (seed 000 §7); add \"{d}\": {{\"standard\": ...}} (binary_equal, stat_rel_err or "
                           f"cross_check) to the tolerance of the TestSpec class that __spec__ names in {golden} "
                           f"(write one where it holds only a legacy __golden__), or drop "
                           f"ge::{_GE_NAMES.get(d, d)} from this DataType list")
                for d in self.uncovered_dtypes()]


def _near(path: str) -> str:
    """``path`` relative to the current folder when it lies below it, as a user would type it."""
    here = Path.cwd()
    full = Path(path).absolute()
    return full.relative_to(here).as_posix() if full.is_relative_to(here) else path


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
    host = folder / "op_host"
    if not (host.is_dir() and any(p.is_file() for p in host.glob("*_def.cpp"))):
        return None  # no OpDef registers a dtype: the folder's golden, cases and kernel are not read for nothing
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
    inferred = (("topology", topology, why_topology, f"Topology {topology}: {why_topology}."),
                ("target", target, why_target, f"Target {target or 'unknown'}: {why_target}."))
    notes = [f"Read from the CANN operator folder {_near(str(folder))}.", inferred[0][3], inferred[1][3]]
    if widening:
        notes.append(f"Widening float32 for half dtypes: {_near(facts.widening_at)}.")
    if dropped:
        notes.append(f"Registered but outside opkb's dtypes: {', '.join(dropped)}.")
    def_path = next(iter(sorted((folder / "op_host").glob("*_def.cpp"))), folder / "op_host")
    lines = {d: int(at.rsplit(":", 1)[1]) for d in dtypes
             if (at := facts.sources.get(f"dtype {d}", "")).rsplit(":", 1)[-1].isdigit()}
    return CannSpec(op=facts.op, class_id=".", topologies=(topology,), properties={"dtypes": dtypes},
                  target=target, criteria=criteria, widening=widening, wrapper=None,
                  description=" ".join(notes), path=def_path, dtype_lines=lines, golden=_near(facts.golden_path) if facts.golden_path else "",
                    folder=_near(str(folder)), inferred=inferred)


def overridden(spec: CannSpec, given: dict) -> tuple[CannSpec, list[str]]:
    """``spec`` with the facts named by flags (``{"topology": ..., "target": ...}``, None where
    not given) in place of the inferred ones, and one line per fact saying what was used and why:
    a given value still names the inference it replaces, so a wrong guess stays visible."""
    from dataclasses import replace

    description, lines, changes = spec.description, [], {}
    for fact, value, reason, note in spec.inferred:
        chosen = given.get(fact)
        if chosen is None:
            lines.append(f"{fact} {value or 'unknown'} inferred: {reason} (pass --{fact} to set it)")
            continue
        lines.append(f"{fact} {chosen} given by --{fact} (inferred {value or 'unknown'}: {reason})")
        description = description.replace(note, f"{fact.capitalize()} {chosen}: given by --{fact}; "
                                                f"inferred {value or 'unknown'} ({reason}).")
        changes["topologies" if fact == "topology" else "target"] = (chosen,) if fact == "topology" else chosen
    return (replace(spec, description=description, **changes) if changes else spec), lines
