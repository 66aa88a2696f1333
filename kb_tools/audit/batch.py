"""Audit many files as one tree: each file is parsed and indexed once, imports between the
audited files are followed (``package.Tree``), and a folder of many files is shared among
the machine's cores. The report is the same whatever the number of jobs: the files are cut
into runs of neighbours (a package's files import each other, so a job mostly reads modules it
already parsed), each job takes the next run when it is free (a core another program holds
slows one job, not the whole audit) and hands back finished findings, and they are merged in
the files' order, a line reached from several wrappers listed once with all of them.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from bisect import bisect_left
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from kb_tools.audit.engine import AuditResult, Placed, audit_parsed, parse_file
from kb_tools.audit.family_context import one_run
from kb_tools.audit.package import Tree
from kb_tools.diagnostics import KbError

PARALLEL_FROM = 64  # fewer files than this: one process (starting a second costs more)
RUNS_PER_JOB = 8  # runs handed to each job on average: fewer, more files parsed twice; more, less balance
MIN_RUN = 8
GC_THRESHOLDS = (50_000, 20, 100)  # the collector's, while files are audited (Python's default: 700, 10, 10)


def default_jobs(n_files: int) -> int:
    if n_files < PARALLEL_FROM:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, 2))


@dataclass(frozen=True)
class Beside:
    """Work read in the audit's own processes, next to the files it concerns (``kbt build`` on
    a CANN repository reads each operator folder's facts there). Each item is read by
    ``read(item, trees)`` in the run that audits the files sorted next to its place ``at[i]``,
    after them; ``trees`` maps each path in ``wants`` that the run audited to the syntax tree
    the audit parsed, so that a file both need is parsed once."""
    items: list
    at: list[Path]
    wants: frozenset[Path]
    read: Callable


@dataclass
class Outcome:
    """What auditing one file gave: its own result, or the one line saying why it could not
    be used, and the findings its wrappers reached in other files."""
    index: int
    result: AuditResult | None = None
    error: str | None = None
    foreign: dict[str, list[Placed]] = field(default_factory=dict)
    opaque: set[str] = field(default_factory=set)


def _audit_share(files: list[Path], roots: list[Path], options: dict, indices, beside: Beside | None = None,
                 items=()) -> tuple[list[Outcome], list]:
    """Audit the files at ``indices`` in one process (the serial run). The modules the tree
    kept are let go at the end: whatever still holds the tree (a cache keyed by it) then holds
    no syntax tree, and the collector no longer walks them through the merge and the report."""
    tree = _tree(files, roots, options)
    try:
        return _audit_with(tree, files, options, indices, beside, items)
    finally:
        tree.release()


def _tree(files: list[Path], roots: list[Path], options: dict) -> Tree:
    """The tree the files are read through; ``options`` keeps only the audit's own."""
    reading = {k: options.pop(k) for k in ("wrapper_patterns", "launchers") if k in options}
    return Tree(files, roots, partial(parse_file, **reading))


def _audit_with(tree: Tree, files: list[Path], options: dict, indices, beside: Beside | None = None,
                items=()) -> tuple[list[Outcome], list]:
    """Audit the files at ``indices``, then read the ``beside`` items numbered ``items``:
    (the outcomes, [(item number, what ``beside.read`` gave)]). Syntax trees hold no cycles and
    are freed as each file ends, but building one allocates so many objects that the cyclic
    collector would run every few hundred allocations; it runs less often here (about a third
    of the run's time on real trees), and as usual again after."""
    out = []
    trees: dict[Path, object] = {}  # the trees ``beside`` wants, held until its items are read
    thresholds = gc.get_threshold()
    gc.set_threshold(*GC_THRESHOLDS)
    try:
        for i in indices:
            outcome = Outcome(i)
            try:
                parsed = tree.module(files[i], strict=True)
                if beside is not None and files[i] in beside.wants:
                    trees[files[i]] = parsed.tree
                outcome.result, outcome.foreign, outcome.opaque = audit_parsed(parsed, tree, **options)
            except KbError as exc:
                outcome.error = exc.diagnostic
            out.append(outcome)
        read = [(k, beside.read(beside.items[k], trees)) for k in items] if beside is not None else []
    finally:
        gc.set_threshold(*thresholds)
    return out, read


_JOB: dict = {}  # in a job process only: its files, options and tree (kept across the runs it is handed)


def _start_job(files: list[Path], roots: list[Path], options: dict, beside: Beside | None = None) -> None:
    """A job process begins: it builds the tree it reads through (forked: nothing is pickled)."""
    _JOB.update(files=files, tree=_tree(files, roots, options), options=options, beside=beside)


def _audit_run(task: tuple[range, list[int]]) -> tuple[list[Outcome], list]:
    """One run of neighbouring files, audited in a job process through the tree it keeps
    (a module one run imported is still parsed when the next run imports it), and the
    ``beside`` items placed among them."""
    run, items = task
    return _audit_with(_JOB["tree"], _JOB["files"], _JOB["options"], run, _JOB["beside"], items)


def runs(n_files: int, jobs: int) -> list[range]:
    """Runs of neighbouring files, several per job so that a job slowed by the machine takes
    fewer: about ``RUNS_PER_JOB`` each, at least ``MIN_RUN`` files long."""
    size = max(MIN_RUN, -(-n_files // (jobs * RUNS_PER_JOB)))
    return [range(k, min(k + size, n_files)) for k in range(0, n_files, size)]


def audit_files(paths, *, roots=(), jobs: int | None = None, **options) -> tuple[list[AuditResult], list[str], set[str]]:
    """(a result per usable file in the order given, the one-line reason for each unusable
    file, the imported modules outside the tree that wrappers call). ``options`` are
    ``audit_source``'s; ``roots`` the folders given (a file's dotted name under them)."""
    results, errors, opaque, _ = audit_files_beside(paths, None, roots=roots, jobs=jobs, **options)
    return results, errors, opaque


def audit_files_beside(paths, beside: Beside | None, *, roots=(), jobs: int | None = None, progress=None,
                       **options) -> tuple[list[AuditResult], list[str], set[str], list]:
    """``audit_files``'s three, and what ``beside.read`` gave for each of its items, in their
    order. ``progress(files done, files)`` is called as runs finish."""
    with one_run():  # the files' folders are searched for a spec once each, not once per file
        return _audit_files([Path(p) for p in paths], [Path(r) for r in roots], jobs, options, beside, progress)


def _placed(files: list[Path], tasks: list[range], beside: Beside | None) -> list[list[int]]:
    """The ``beside`` items each run reads: an item goes to the run holding the first file
    sorted at or after its place (the last run when it sorts after every file)."""
    placed: list[list[int]] = [[] for _ in tasks]
    if beside is None or not tasks:
        return placed
    starts = [t.start for t in tasks]
    for k, at in enumerate(beside.at):
        first = min(bisect_left(files, at), len(files) - 1) if files else 0
        placed[max(0, bisect_left(starts, first + 1) - 1)].append(k)
    return placed


def _audit_files(files: list[Path], roots: list[Path], jobs: int | None, options: dict, beside: Beside | None = None,
                 progress=None):
    jobs = default_jobs(len(files)) if jobs is None else max(1, jobs)
    if jobs == 1 or len(files) < 2:
        tasks = [range(len(files))]
        outcomes, read = _audit_share(files, roots, dict(options), tasks[0], beside, _placed(files, tasks, beside)[0])
        if progress:
            progress(len(files), len(files))
        return (*merge(files, outcomes), [r for _, r in sorted(read, key=lambda kr: kr[0])])
    tasks = runs(len(files), jobs)
    outcomes, read, done = [], [], 0
    gc.freeze()  # what the jobs inherit is never collected there: no copy of every page it sits on
    try:
        with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_start_job,
                                 initargs=(files, roots, dict(options), beside)) as pool:
            for task, (part, part_read) in zip(tasks, pool.map(_audit_run, zip(tasks, _placed(files, tasks, beside)))):
                outcomes += part
                read += part_read
                done += len(task)
                if progress:
                    progress(done, len(files))
    finally:
        gc.unfreeze()
    return (*merge(files, outcomes), [r for _, r in sorted(read, key=lambda kr: kr[0])])


def merge(files: list[Path], outcomes: list[Outcome]) -> tuple[list[AuditResult], list[str], set[str]]:
    outcomes.sort(key=lambda o: o.index)
    by_path = {str(files[o.index]): o.result for o in outcomes if o.result is not None}
    for o in outcomes:
        for path, found in o.foreign.items():
            target = by_path.get(path)
            if target is not None:
                target.add_reached(found)
    errors = [o.error for o in outcomes if o.error]
    opaque = set().union(*(o.opaque for o in outcomes)) if outcomes else set()
    return [o.result for o in outcomes if o.result is not None], errors, opaque
