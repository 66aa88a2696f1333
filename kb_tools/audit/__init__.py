"""The static audit of operator code (seed 003 and the pages' static invariants): wrappers
against the wrapper boundary, and goldens, tests and kernels against their rule families.

``audit_source`` / ``audit_path`` parse with ``ast`` and never import or run the audited
code; ``batch.audit_files`` audits many files as one tree (``package``: imports between them
followed; both cores for many files) under a named reading of the rule (``policies``);
``report`` renders the findings as text, JSON or SARIF. The stages of one wrapper's walk:
``checker`` (the walk), ``kind_flow`` (tensor kinds), ``launches``, ``host_ops`` (what each
host operation is reported as), ``buffers`` (outputs against scratch). The engine loads on
first use: ``kbt lint`` reads ``kb_tools.audit.codes`` alone and need not import the checker.
"""

from __future__ import annotations

import importlib

__all__ = ["AuditResult", "Finding", "audit_path", "audit_source", "select_codes"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module("kb_tools.audit.engine"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
