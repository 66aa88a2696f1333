"""The static audit of operator code (seed 003 and the pages' static invariants): wrappers
against the wrapper boundary, and goldens, tests and kernels against their rule families.

``audit_source`` / ``audit_path`` parse with ``ast`` and never import or run the audited
code; ``report`` renders the findings as text, JSON or SARIF. The engine loads on first
use: ``kbt lint`` reads ``kb_tools.audit.codes`` alone and need not import the checker.
"""

from __future__ import annotations

import importlib

__all__ = ["AuditResult", "Finding", "audit_path", "audit_source", "select_codes"]


def __getattr__(name: str):
    if name in __all__:
        return getattr(importlib.import_module("kb_tools.audit.engine"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
