"""The live checks of a design-review notebook: each check cell of a review calls one of these.

A review must run to its checklist whatever its inputs lack, so a check never raises for bad
input: what it could not use becomes a ``MISSING`` verdict that says what and where, in the
cell that needed it. Every check prints one verdict line, ``[PASS|FAIL|MISSING] name: why``,
which ``kbt review --execute`` reads back from the executed notebook (:data:`VERDICT_LINE`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from kb_tools.audit.codes import code_named
from kb_tools.diagnostics import KbError, KbErrors
from kb_tools.outputs.folds import Folded, png_of
from kb_tools.outputs.review import NO_IMPLEMENTATION
from kb_tools.kb import vocabulary as V
from kb_tools.numerics.collapsed import GOLDEN_PAGE

VERDICT_LINE = re.compile(r"^\[(PASS|FAIL|MISSING)\] ([^:\n]+): (.*)$", re.M)
TENSOR_SUFFIXES = (".npy", ".pt")
# The wave plan and tiling are shown for specs with these properties (seed 001's expansion).
MEMORY_PROPERTIES = ("packed_intermediate", "memory_optimization")
# Seed 001 §3.3.2's worked table: a 192 KiB UB and 40 vector cores (A2); an unaligned count.
UB_BYTES, CORES, MEMORY_N = 196608, 40, 2**20 + 100


@dataclass
class Check:
    name: str
    status: str  # PASS, FAIL or MISSING (the input the check needed could not be used)
    summary: str
    table: object = None  # a pandas DataFrame with the evidence, when there is any
    holds: str = ""  # what the table holds, in a few words (the folded evidence's summary)
    figure: bytes | None = None  # a PNG drawn from the evidence

    def __str__(self) -> str:
        return f"[{self.status}] {self.name}: {self.summary}"

    @property
    def folded(self) -> Folded | None:
        """The evidence folded under one line (open when the check failed); None when there is none."""
        if self.table is None:
            return None
        return Folded(self.holds, self.table, self.figure, opened=self.status == "FAIL")


def _frame(rows, columns=None):
    import pandas as pd

    return pd.DataFrame(rows, columns=columns)


def _load_usage(usage_path, op: str) -> tuple[dict | None, str | None]:
    """(usage, why it cannot be used); a usage for another operator, or one whose records have
    the wrong shape, is not used."""
    from kb_tools.contract.usage_shape import load_usage

    if usage_path is None:
        return None, "no KB_USAGE.json was given or found beside the selection (make one: kbt usage <spec>)"
    path = Path(usage_path)
    if not path.is_file():
        return None, f"{path}: no such KB_USAGE.json"
    try:
        usage = load_usage(path)
    except (KbError, KbErrors) as exc:
        return None, str(exc).splitlines()[0]
    if usage.get("op") != op:
        return None, f"{path}: this KB_USAGE.json is for operator {usage.get('op')!r}, not {op!r}"
    return usage, None


@dataclass
class ReviewSession:
    """One operator's review inputs, loaded once by the notebook's first cell."""

    kb: object
    spec: object
    selection: object
    root: Path
    usage_path: Path | None
    usage: dict | None
    usage_problem: str | None
    results: list = field(default_factory=list)

    @classmethod
    def open(cls, spec, root=".", usage=None, kb_root=None, topology=None, target=None) -> "ReviewSession":
        from kb_tools.contract.selection import select
        from kb_tools.contract.specs import load_spec
        from kb_tools.kb.pages import load_kb
        from kb_tools.kb.root import find_root

        kb = load_kb(find_root(kb_root))
        op_spec = load_spec(Path(spec))
        if topology or target:  # a CANN folder's facts set by --topology / --target
            from kb_tools.contract.cann_spec import overridden

            op_spec = overridden(op_spec, {"topology": topology, "target": target})[0]
        return cls.of(kb, op_spec, select(kb, op_spec), root, usage)

    @classmethod
    def of(cls, kb, spec, selection, root, usage=None) -> "ReviewSession":
        """A session over inputs already loaded (the command's, which wrote the notebook)."""
        loaded, problem = _load_usage(usage, spec.op)
        return cls(kb, spec, selection, Path(root), Path(usage) if usage else None, loaded, problem)

    def _record(self, check: Check) -> Check:
        self.results.append(check)
        print(check)
        return check

    # --- the facts -------------------------------------------------------------------------

    def tolerance_table(self):
        """dtype x criterion x tolerance, with what each leg computes in."""
        from kb_tools.numerics.promote import golden_policy, third_party_policy

        spec = self.spec
        rows = []
        for dtype in spec.dtypes:
            criterion = spec.criteria.get(dtype)
            # Each dtype is its own test case, whose mode its declared criterion decides (seed
            # 000 §2), as in the Markdown review and in compare() below.
            three_party = criterion == "cross_check"
            golden = golden_policy(dtype, three_party, spec.widening.get(dtype))
            third = third_party_policy(dtype, three_party, spec.widening.get(dtype))
            rows.append({"dtype": dtype, "criterion": criterion or f"MISSING (TTK default {V.undeclared_criterion(dtype)})",
                         "tolerance": _tolerance(criterion, dtype), "DUT accumulates in": spec.widening.get(dtype, dtype),
                         "golden computes in": golden.compute, "third party": third.compute if third else "not run",
                         "mode": "three-party" if three_party else "two-party"})
        return _frame(rows)

    def properties_table(self):
        """Every routing fact that holds, with its evidence."""
        rows = [{"fact": key, "evidence": why, "derived": key in V.DERIVED_FACTS}
                for key, why in self.spec.facts().items()]
        return _frame(rows, ["fact", "evidence", "derived"])

    def operator_table(self):
        spec = self.spec
        rows = [("operator", spec.op if spec.class_id == "." else f"{spec.op} (class {spec.class_id})"), ("topologies", ", ".join(spec.topologies) or "—"),
                ("target", spec.target or "—"), ("wrapper", spec.wrapper or "— (no wrapper: in the spec)"),
                ("saved tensors", spec.tensors or "— (no tensors: in the spec)"), ("source root", str(self.root)),
                ("KB_USAGE.json", str(self.usage_path) if self.usage is not None else f"not used: {self.usage_problem}")]
        return _frame(rows, ["fact", "value"])

    # --- the pages -------------------------------------------------------------------------

    def page_table(self, rel_path: str):
        """One selected page's invariants with the coder's claim and, for static ones, the audit."""
        rows = []
        for row in self._claim_rows(rel_path):
            inv = row.invariant
            audit = "—"
            if inv.check == "static":
                audit = (f"FAIL at line {', '.join(map(str, row.audit_lines))}" if row.audit_lines else
                         "clean" if row.audit_lines is not None else "not audited")
            rows.append({"invariant": inv.id, "text": inv.text, "check": f"{inv.check} {inv.rule or ''}".strip(),
                         "claim": row.status, "location": f"{row.file} : {row.symbol}" if row.file else "—",
                         "justification": row.justification or "—", "audit": audit})
        return _frame(rows)

    def page(self, rel_path: str) -> Folded:
        """The page's invariant table folded under its claims in one line (open when the audit breaks one)."""
        from kb_tools.outputs.review import audit_breaks, claims_summary

        rows = self._claim_rows(rel_path)
        return Folded(claims_summary(rows), self.page_table(rel_path), opened=audit_breaks(rows))

    def excluded_table(self):
        return _frame([{"page": v.page.rel_path, "why not": v.reason} for v in self.selection.excluded], ["page", "why not"])

    def excluded(self) -> Folded:
        return Folded(f"{len(self.selection.excluded)} pages, each with the predicate that failed", self.excluded_table())

    def _claim_rows(self, rel_path: str) -> list:
        from kb_tools.outputs.review import claims_of, invariant_claims, lines_by_code

        # suppressed findings count here: they still fail `kbt verify`
        findings_lines = lines_by_code(self._audit_findings()) if self._audit[0] is not None else None
        return invariant_claims(self.kb.by_path(rel_path), claims_of(self.usage), findings_lines)

    # --- the live checks -------------------------------------------------------------------

    def _audit_findings(self) -> list:
        result = self._audit[0]
        return list(result.findings) + list(result.suppressed) if result is not None else []

    @cached_property
    def _audit(self) -> tuple:
        """(the AuditResult or None, the file audited or why nothing was); run once per session."""
        from kb_tools.audit import audit_path

        golden = getattr(self.spec, "golden", "")  # a CANN folder: the static rules judge its golden
        if not self.spec.wrapper and golden and Path(golden).is_file():
            from kb_tools.audit.families import FamilyOptions

            return audit_path(golden, families=FamilyOptions(roles=frozenset({"golden"}))), golden
        if not self.spec.wrapper:
            return None, (f"{NO_IMPLEMENTATION}: the spec {self.spec.path.name} names no wrapper file (add `wrapper:`); "
                          "the static invariants stay unaudited")
        path = self.root / self.spec.wrapper
        if not path.is_file():
            return None, f"{path}: no such file, though the spec {self.spec.path.name} names it as its wrapper; nothing was audited"
        try:
            return audit_path(path), str(path)
        except (KbError, KbErrors) as exc:
            return None, str(exc).splitlines()[0]

    def audit(self) -> Check:
        """``kbt audit`` of the spec's wrapper: every finding, suppressed ones included."""
        result = self._audit[0]
        if result is None:
            return self._record(Check("wrapper audit", "MISSING", self._audit[1]))
        findings = self._audit_findings()
        table = _frame([f.to_json() for f in findings]) if findings else None
        holds = f"{len(findings)} finding{'' if len(findings) == 1 else 's'}, each with its line"
        names = [getattr(w, "name", w) for w in result.wrappers] or ([self._audit[1]] if getattr(self.spec, "golden", "") else [])
        if not names:
            return self._record(Check("wrapper audit", "FAIL", f"{self._audit[1]}: no wrapper function found", table, holds))
        if findings:
            codes = sorted({f.code for f in findings})
            return self._record(Check("wrapper audit", "FAIL", f"{len(findings)} findings ({', '.join(codes)}) in "
                                      f"{', '.join(names)}", table, holds))
        return self._record(Check("wrapper audit", "PASS", f"0 findings in {', '.join(names)} ({self._audit[1]})"))

    def claims(self) -> Check:
        """``kbt verify``: the claims against the contract, the selection beside them and the audit."""
        from os.path import relpath

        from kb_tools.audit.verify import verify
        from kb_tools.outputs.review import implementation

        if self.usage is None:
            return self._record(Check("claims", "MISSING", self.usage_problem))
        try:
            # the re-run command it prints names the folder from the repository root, where it is run
            shown = Path(relpath(self.usage_path.parent, self.root)).as_posix()
            diags, _ = verify(self.usage_path.parent, self.kb, self.root, shown_dir=shown)
        except (KbError, KbErrors) as exc:
            return self._record(Check("claims", "MISSING", str(exc).splitlines()[0]))
        records = [r for r in self.usage.get("invariants", []) if isinstance(r, dict)]
        statuses = Counter(implementation(r).get("status") or "open" for r in records)
        counted = ", ".join(f"{n} {s}" for s, n in sorted(statuses.items()))
        errors = [d for d in diags if d.severity == "error"]
        table = _frame([{"where": f"{d.path}:{d.line or ''}", "code": d.code, "message": d.message, "severity": d.severity}
                        for d in diags]) if diags else None
        holds = f"{len(diags)} diagnostics of kbt verify"
        if errors:
            return self._record(Check("claims", "FAIL", f"kbt verify finds {len(errors)} error(s) ({counted}); first: {errors[0]}",
                                      table, holds))
        return self._record(Check("claims", "PASS", f"kbt verify passes: {counted}", table, holds))

    @staticmethod
    def _leg_file(folder: Path, leg: str) -> Path:
        return next(folder / f"{leg}{s}" for s in TENSOR_SUFFIXES if (folder / f"{leg}{s}").is_file())

    def _tensor(self, folder: Path, leg: str):
        from kb_tools.numerics.tensors_io import load

        return load(self._leg_file(folder, leg))

    def _tensor_problem(self, dtype: str) -> str | None:
        """Why the saved legs of ``dtype`` cannot be compared, or None when every file is there."""
        if not self.spec.tensors:
            return f"the spec {self.spec.path.name} names no saved tensors (add `tensors:`)"
        criterion = self.spec.criteria.get(dtype)
        if not criterion:
            return f"the spec declares no criterion for {dtype}"
        folder = self.root / self.spec.tensors / dtype
        absent = [leg for leg in _legs(criterion) if not any((folder / f"{leg}{s}").is_file() for s in TENSOR_SUFFIXES)]
        return f"no {', '.join(absent)} (.npy or .pt) in {folder}" if absent else None

    def _leg_mismatch(self, folder: Path, dtype: str, tensors: dict) -> str | None:
        """The first saved leg whose dtype is not the one the spec gives it (the DUT's and the
        third party's: the declared dtype; the golden's: its policy's, Promote's or the DUT's
        widening), or whose shape is not the DUT's, named by its file; None when all agree.
        A golden at the declared dtype where Promote widens it is the cast back, named as such."""
        from kb_tools.numerics.promote import golden_policy
        from kb_tools.numerics.verdict import dtype_name

        policy = golden_policy(dtype, self.spec.criteria.get(dtype) == "cross_check", self.spec.widening.get(dtype))
        wanted = {"dut": dtype, "third_party": dtype, "golden": policy.output}
        path = {leg: self._leg_file(folder, leg) for leg in tensors}
        for leg, tensor in tensors.items():
            if dtype_name(tensor) != wanted[leg]:
                cause = (f": the golden computes at the device's precision (a cast back, {code_named('golden-casts-floats')}; "
                         f"see {GOLDEN_PAGE})"
                         if leg == "golden" and dtype_name(tensor) == dtype and policy.output != dtype else "")
                return (f"{path[leg]} holds {dtype_name(tensor)}, but the spec makes the {leg.replace('_', '-')} leg of "
                        f"{dtype} {wanted[leg]}{cause}")
        shape = tuple(tensors["dut"].shape)
        for leg, tensor in tensors.items():
            if tuple(tensor.shape) != shape:
                return f"{path[leg]} has shape {tuple(tensor.shape)}, but the DUT's ({path['dut'].name}) is {shape}"
        return None

    def input_problems(self) -> list[str]:
        """What a check would report MISSING, found without running the checks (for an unexecuted review)."""
        problems = [] if self._audit[0] is not None else [self._audit[1]]
        problems += [self.usage_problem] if self.usage is None else []
        problems += [p for p in map(self._tensor_problem, self.spec.dtypes) if p]
        return list(dict.fromkeys(problems))

    def compare(self, dtype: str) -> Check:
        """The saved legs of one dtype judged by the spec's criterion, with the error distribution drawn."""
        from kb_tools.numerics.criteria import compare
        from kb_tools.numerics.metrics import compute
        from kb_tools.numerics.tensors_io import TensorFileError

        name = f"comparison {dtype}"
        criterion = self.spec.criteria.get(dtype)
        missing = self._tensor_problem(dtype)
        if missing:
            return self._record(Check(name, "MISSING", missing))
        folder = self.root / self.spec.tensors / dtype
        try:
            tensors = {leg: self._tensor(folder, leg) for leg in _legs(criterion)}
        except TensorFileError as exc:
            return self._record(Check(name, "MISSING", str(exc)))
        mismatch = self._leg_mismatch(folder, dtype, tensors)
        if mismatch:  # the leg is there and wrong: a finding, not a missing input
            return self._record(Check(name, "FAIL", mismatch))
        try:
            verdict, judged = compare(criterion, tensors["dut"], tensors["golden"], tensors.get("third_party"),
                                      dtype=dtype)  # the verdict and its legs' metrics from one pass
        except ValueError as exc:
            return self._record(Check(name, "FAIL", f"{criterion} cannot judge the saved tensors: {exc}"))
        figure = png_of(_plot_errors(tensors, dtype, criterion))
        table = _frame([{"leg": leg, **(judged.get(leg) or compute(tensors[leg], tensors["golden"], dtype)).as_dict()}
                        for leg in ("dut", "third_party") if leg in tensors])  # compute: a bit-for-bit criterion's legs
        ratios = ", ".join(f"{k} {v:.3g}" for k, v in verdict.ratios.items() if v is not None)
        detail = "; ".join(verdict.reasons) if verdict.reasons else (ratios or "within tolerance")
        return self._record(Check(name, "PASS" if verdict.passed else "FAIL", f"{criterion}: {detail}", table,
                                  f"{dtype}: each leg's metrics against the golden, and its relative errors drawn", figure))

    def memory(self) -> Check:
        """The high-to-low wave plan and the tiling / UB budget, per dtype (seed 001 §3.3, §3.4)."""
        from kb_tools.memory.tiling import dtype_bytes, plan_tiling
        from kb_tools.memory.waves import plan_problems, plan_waves

        rows, bad = [], []
        for dtype in self.spec.dtypes:
            width = dtype_bytes(dtype)
            plan = plan_waves(MEMORY_N, width)
            problems = plan_problems(plan, MEMORY_N, width)
            tiling = plan_tiling(UB_BYTES, width, CORES, MEMORY_N)
            if problems or tiling.ub_total > UB_BYTES:
                bad.append(dtype)
            rows.append({"dtype": dtype, "bytes": width, "waves": len(plan), "highest wave starts at": plan[0].start,
                         "wave problems": "; ".join(problems) or "none", "tileElements": tiling.tile_elements,
                         "blockDim": tiling.block_dim, "elementsPerCore": tiling.elements_per_core,
                         "UB used (B)": tiling.ub_total, "UB (B)": UB_BYTES})
        where = f"n = {MEMORY_N}, UB {UB_BYTES} B, {CORES} cores"
        holds = f"the wave plan and the tiling of each of {len(rows)} dtypes"
        if bad:
            return self._record(Check("memory plan", "FAIL", f"unsafe plan or UB overflow for {', '.join(bad)} ({where})",
                                      _frame(rows), holds))
        return self._record(Check("memory plan", "PASS", f"every wave plan is safe and every tile fits UB ({where})",
                                  _frame(rows), holds))

    def summary(self) -> str:
        counts = {s: sum(c.status == s for c in self.results) for s in ("PASS", "FAIL", "MISSING")}
        return f"{len(self.results)} checks: " + ", ".join(f"{n} {s}" for s, n in counts.items())


def _legs(criterion: str) -> tuple[str, ...]:
    return ("dut", "golden", "third_party") if criterion == "cross_check" else ("dut", "golden")


def has_memory_checks(spec) -> bool:
    return any(spec.properties.get(key) for key in MEMORY_PROPERTIES)


def _tolerance(criterion: str | None, dtype: str) -> str:
    """The numbers the criterion applies to this dtype (TTK's, from numerics.tolerances)."""
    from kb_tools.numerics import tolerances as tol

    if criterion == "binary_equal":
        return "bit for bit"
    if criterion == "cross_check":
        level = tol.LEVELS[tol.DEFAULT_LEVEL]
        small = tol.SMALL_VALUE.get(dtype)
        region = f"; |g| < {small.small_value:.3g} judged by error count <= {tol.SMALL_COUNT_RATIO:g}x" if small else ""
        return f"{tol.DEFAULT_LEVEL}: ratios mare <= {level.mare:g}, mere <= {level.mere:g}, rmse <= {level.rmse:g}{region}"
    if criterion == "mix_tolerance":
        row = tol.mix_row(dtype)
        return f"rtol {row.rtol:.3g}, atol {row.atol:.3g}, matched >= {row.required_matched_ratio:g}"
    if criterion == "close":
        return f"rtol {tol.close_rtol(dtype):g}, atol {tol.CLOSE_ATOL:g}"
    if criterion == "stat_rel_err":
        return f"MERE < {tol.stat_threshold(dtype):.3g}, MARE < {tol.STAT_MARE_FACTOR} x that"
    return "—"


def _plot_errors(tensors: dict, dtype: str, criterion: str):
    """Histogram of log10 relative error against the golden, one curve per leg."""
    import matplotlib.pyplot as plt
    import numpy as np

    from kb_tools.numerics.tolerances import REL_EPS

    golden = tensors["golden"].double().reshape(-1).numpy()
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    for leg, style in (("dut", {"linewidth": 2.0}), ("third_party", {"linestyle": "--"})):
        if leg in tensors:
            actual = tensors[leg].double().reshape(-1).numpy()
            rel = np.abs(actual - golden) / (np.abs(golden) + REL_EPS)
            rel = rel[np.isfinite(rel)]
            ax.hist(np.log10(rel + 1e-20), bins=60, histtype="step", label=leg.replace("_", "-"), **style)
    ax.set_xlabel("log10 relative error vs golden (1e-20 = exact)")
    ax.set_ylabel("elements")
    ax.set_title(f"{dtype}: error distribution ({criterion})")
    ax.legend()
    fig.tight_layout()
    return fig
