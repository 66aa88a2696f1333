"""Cases for the audit's cause tests: one wrapper (a module with one Triton kernel ``k`` above the
case's code, audited as w.py; the findings as (line within the case, code)), or a folder audited
as one tree the way ``kbt audit <folder>`` does."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb_tools.audit import audit_source
from kb_tools.audit.batch import audit_files
from kb_tools.audit.discover import python_files

HEAD = "import torch\nimport triton\n\n\n@triton.jit\ndef k(x, y, n, m):\n    pass\n\n\n"


def codes(body: str, **options) -> list[tuple[int, str]]:
    result = audit_source(HEAD + textwrap.dedent(body), "w.py", **options)
    assert result.wrappers, "no wrapper found: the case proves nothing"
    first = HEAD.count("\n")
    return sorted((f.line - first, f.code) for f in result.findings)


def tree_findings(folder: Path, **options) -> list[tuple[str, int, str, tuple[str, ...]]]:
    """(path under ``folder``, line, code, wrappers reaching it) of every finding of the tree."""
    results, errors, _ = audit_files(python_files([str(folder)]), roots=[folder], **options)
    assert errors == [] and any(r.wrappers for r in results), "no wrapper found: the case proves nothing"
    return [(Path(f.path).relative_to(folder).as_posix(), f.line, f.code, f.wrappers) for r in results for f in r.findings]
