"""The audit's view of a CANN golden: its findings as the audit's RawFindings, one code at a time.

``kbt audit`` runs one rule module per code on every file; a CANN golden
(``<op>/tests/assets/golden.py`` beside ``op_host/``) is judged once with its own folder's
facts (``golden_flow``) and each rule module takes the findings of its code. Certain findings
keep their code; a finding whose case mode or kernel widening is uncertain is reported under
the golden-rule-uncertain code (a warning) and names the code it would be.
"""

from __future__ import annotations

import ast
from pathlib import Path

from kb_tools.audit.codes import code_named
from kb_tools.audit.findings import RawFinding
from kb_tools.cann.golden_flow import GOLDEN, judge_golden

UNCERTAIN = code_named("golden-rule-uncertain")


def is_cann_golden(path: str) -> bool:
    """A golden.py in the CANN layout: ``tests/assets/golden.py`` of a folder with ``op_host/``."""
    p = Path(path).absolute()  # a golden named from inside its own folder ("golden.py") too
    return p.as_posix().endswith(GOLDEN.as_posix()) and (p.parents[2] / "op_host").is_dir()


_JUDGED: list = [None, None]  # [the audit's tree of the golden judged last, its judgement]


def _judged(path: str, tree: ast.Module | None):
    """One judgement per reading of a golden, however many rules ask: they all hold the audit's
    own parse of it (compared by identity and held here, so its id is never reused), which is
    handed on, so the file is parsed once. The next audit parses again and judges afresh: the
    folder's OpDef, cases or kernel may have changed, which the golden's own stamp would not show."""
    if tree is None or _JUDGED[0] is not tree:
        _JUDGED[:] = [tree, judge_golden(Path(path), path, tree=tree)]
    return _JUDGED[1]


def cann_findings(path: str, code: str, tree: ast.Module | None = None) -> list[RawFinding]:
    """The findings of ``code`` for the CANN golden at ``path`` (none when it cannot be read:
    the audit's own parse reports that once); ``tree`` is the audit's parse of it."""
    if not Path(path).is_file():
        return []
    findings, _ = _judged(path, tree)
    out = []
    for f in findings:
        if code == UNCERTAIN and f.severity == "warning":
            out.append(RawFinding(f.line, 0, code, f"uncertain {f.code}: {f.message}. Fix: {f.fix}"))
        elif f.code == code and f.severity == "error":
            out.append(RawFinding(f.line, 0, code, f"{f.message}. Fix: {f.fix}"))
    return out
