"""What a rule reports before the engine places it: a line, a column and a code, and where
on a call a finding sits (the method's own name on a chain, so each link is told apart).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import NamedTuple


@dataclass(frozen=True)
class RawFinding:
    line: int
    col: int  # 0-based UTF-8 byte offset, as ast gives it
    code: str
    message: str
    helper: str | None = None  # the helper it sits in, None when in the wrapper itself
    path: str | None = None  # the audited file it sits in, None for the wrapper's own file
    op: str = ""  # the operation that made it (``contiguous``, ``zeros``, ...): what a policy may let pass


class Report(NamedTuple):
    """What a wrapper rule says about one host operation; the walk adds where it sits."""
    code: str
    message: str
    op: str = ""


class Claim(NamedTuple):
    """A rule's report on a method or call, and the kind of value that call gives back."""
    report: Report
    kind: object


def method_pos(func: ast.Attribute) -> tuple[int, int]:
    """Where ``.attr`` itself starts, so that a chain's findings point at each method."""
    return func.end_lineno, max(func.end_col_offset - len(func.attr), 0)


def call_pos(call: ast.Call) -> tuple[int, int]:
    """Where a finding on a call sits: at the method's name when ``x.to`` fits on one line,
    else at the call itself."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.end_lineno == func.lineno:
        return method_pos(func)
    return call.lineno, call.col_offset
