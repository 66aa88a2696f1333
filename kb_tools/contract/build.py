"""``kbt build``: the main job, a selection and a usage skeleton for every operator spec."""

from __future__ import annotations

import gc
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kb_tools.contract.selection import Router
from kb_tools.contract.specs import OpSpec, load_spec, spec_files, whole_catalog
from kb_tools.contract.usage import write_operator
from kb_tools.diagnostics import Diagnostic, KbError, KbErrors
from kb_tools.kb.pages import KnowledgeBase

PROGRESS_FROM = 50  # catalogs at least this large show a progress bar


@dataclass
class BuildRow:
    op: str
    required: int
    patterns: int
    invariants: int
    stale: int


def build_catalog(kb: KnowledgeBase, ops_dir: Path, out_dir: Path) -> tuple[list[BuildRow], list[Diagnostic]]:
    files = spec_files(ops_dir)
    rows, diags = [], []
    router, skeletons = Router(kb), {}  # each page judged and each skeleton made once per build
    with whole_catalog(len(files)), _fewer_collections():
        specs = _one_spec_per_class([(path, _loaded(path, diags)) for path in files], diags)
        iterator = specs
        if len(specs) >= PROGRESS_FROM and sys.stderr.isatty():  # tqdm would hide itself anyway; its import is not free
            from tqdm import tqdm

            iterator = tqdm(specs, desc="kbt build", unit="op", file=sys.stderr, disable=None)
        for spec in iterator:
            row = _build_one(spec, router, skeletons, Path(out_dir), diags)
            if row is not None:
                rows.append(row)
    return rows, diags


def _loaded(path: Path, diags: list[Diagnostic]) -> OpSpec | None:
    try:
        return load_spec(path)
    except KbErrors as exc:
        diags.extend(exc.diagnostics)
    except KbError as exc:
        diags.append(exc.diagnostic)
    return None


def _one_spec_per_class(loaded: list[tuple[Path, OpSpec | None]], diags: list[Diagnostic]) -> list[OpSpec]:
    """The specs to build: two specs for one (op, class_id) would write one folder in turn,
    each undoing the other, so neither is built and one line names them all."""
    by_class: dict[tuple[str, str], list[OpSpec]] = {}
    for _, spec in loaded:
        if spec is not None:
            by_class.setdefault((spec.op, spec.class_id), []).append(spec)
    for (op, class_id), same in by_class.items():
        if len(same) > 1:
            others = ", ".join(str(s.path) for s in same[1:])
            shown_class = "" if class_id == "." else f" class {class_id!r}"
            diags.append(Diagnostic(str(same[0].path), None, "BU002",
                                    f"op {op!r}{shown_class} is also specified by {others}: one spec per operator class "
                                    "(rename an op or give each a class_id); none of them was built"))
    return [spec for same in by_class.values() if len(same) == 1 for spec in same]


@contextmanager
def _fewer_collections():
    """A build makes hundreds of thousands of small dicts and lists, and the cyclic
    collector's default pass every 700 allocations spent a tenth of the build looking at
    them. Collect a hundred times less often while it runs (mypy does the same); it still
    collects, so error tracebacks' cycles are freed."""
    before = gc.get_threshold()
    gc.set_threshold(100_000, 50, 100)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _build_one(spec: OpSpec, router: Router, skeletons: dict, out_dir: Path, diags: list[Diagnostic]) -> BuildRow | None:
    """One operator's two files; its findings go to ``diags`` and give no row. A spec with a
    dtype but no criterion is not built, as ``kbt usage`` refuses it (issue 41)."""
    gaps = spec.criterion_gaps()
    if gaps:
        diags.extend(gaps)
        return None
    try:
        selection = router.select(spec)
        target = out_dir / spec.op if spec.class_id == "." else out_dir / spec.op / spec.class_id
        _, report = write_operator(selection, target, skeletons)
    except KbErrors as exc:
        diags.extend(exc.diagnostics)
        return None
    except KbError as exc:
        diags.append(exc.diagnostic)
        return None
    n_inv = sum(len(v.page.invariants) for v in selection.references)
    return BuildRow(spec.op, len(selection.constraints), len(selection.patterns), n_inv, len(report.stale))


def format_table(rows: list[BuildRow]) -> str:
    header = ("op", "required", "patterns", "invariants", "stale")
    body = [(r.op, str(r.required), str(r.patterns), str(r.invariants), str(r.stale)) for r in rows]
    widths = [max(len(x) for x in col) for col in zip(header, *body)]
    fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))  # noqa: E731
    return "\n".join([fmt(header), fmt(tuple("-" * w for w in widths)), *(fmt(b) for b in body)])
