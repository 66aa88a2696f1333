"""The wrapper-boundary verifier (seed 003): a static audit of ``*_wrapper`` functions.

``audit_source`` / ``audit_path`` parse with ``ast`` and never import or run the audited
code; ``report`` renders the findings as text, JSON or SARIF.
"""

from kb_tools.audit.engine import AuditResult, Finding, audit_path, audit_source, select_codes

__all__ = ["AuditResult", "Finding", "audit_path", "audit_source", "select_codes"]
