"""One wrapper case for the blind-batch cause tests: a module with one Triton kernel ``k`` above
the case's code, audited as w.py; the findings as (line within the case, code)."""

from __future__ import annotations

import textwrap

from kb_tools.audit import audit_source

HEAD = "import torch\nimport triton\n\n\n@triton.jit\ndef k(x, y, n, m):\n    pass\n\n\n"


def codes(body: str, **options) -> list[tuple[int, str]]:
    result = audit_source(HEAD + textwrap.dedent(body), "w.py", **options)
    assert result.wrappers, "no wrapper found: the case proves nothing"
    first = HEAD.count("\n")
    return sorted((f.line - first, f.code) for f in result.findings)
