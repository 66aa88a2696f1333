"""A whole CANN operator repository in one run: every operator folder's facts (what ``kbt
spec`` reads) and every Python file's findings (what ``kbt audit`` reports), read by the same
processes. A folder's facts are read in the job that audits its files, right after them, from
the syntax tree the audit parsed (``audit.batch.Beside``): each golden is parsed once, and the
repository is listed, imported and forked for once, not once per command.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kb_tools.audit.batch import Beside, audit_files_beside
from kb_tools.audit.codes import RULES
from kb_tools.audit.discover import python_files
from kb_tools.audit.engine import AuditResult
from kb_tools.audit.families import FamilyOptions
from kb_tools.cann.folder import GOLDEN, OperatorFacts, listed_operators, read_listed
from kb_tools.diagnostics import Diagnostic


@dataclass
class RepositoryReading:
    """The facts of each operator folder (in folder order), the audit's result for each usable
    Python file, and one diagnostic for each file the audit could not use."""

    facts: list[OperatorFacts]
    results: list[AuditResult]
    errors: list[Diagnostic]


def _facts(item, trees: dict) -> OperatorFacts:
    return read_listed(item, trees.get(item[0] / GOLDEN))


def read_repository(root: Path, *, jobs: int | None = None, progress=None) -> RepositoryReading:
    """Read ``root`` (a repository, a category or one operator folder) whole, as ``kbt spec`` and
    ``kbt audit`` would with their defaults; ``progress(files done, files)`` as runs finish."""
    given = root.as_posix()
    items = listed_operators(given)
    folders = [folder for folder, _, _ in items]
    beside = Beside(items, folders, frozenset(f / GOLDEN for f in folders), _facts)
    results, errors, _, facts = audit_files_beside(python_files([given]), beside, roots=[root], jobs=jobs,
                                                   progress=progress, families=FamilyOptions(),
                                                   select=set(RULES), policy="strict")
    return RepositoryReading(facts, results, errors)
