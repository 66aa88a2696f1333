"""Helpers shared by the command modules: the KB root, loading with errors surfaced."""

from __future__ import annotations

import sys

from kb_tools.diagnostics import EXIT_FINDINGS, Diagnostic, KbErrors
from kb_tools.kb.pages import KnowledgeBase, load_kb
from kb_tools.kb.root import find_root


def knowledge_base(args, *, strict: bool = True) -> KnowledgeBase:
    """The KB; with ``strict`` a page that fails to load stops the command (exit 1)."""
    kb = load_kb(find_root(args.kb_root))
    if strict and kb.diagnostics:
        raise KbErrors(kb.diagnostics, EXIT_FINDINGS)
    return kb


def report(diags: list[Diagnostic]) -> int:
    """Print diagnostics, notes (summaries) last; exit 1 when any is an error."""
    for d in sorted(diags, key=lambda d: d.severity == "note"):
        print(d, file=sys.stderr if d.severity == "error" else sys.stdout)
    return EXIT_FINDINGS if any(d.severity == "error" for d in diags) else 0


def warn_uncovered(spec) -> None:
    """A dtype with no criterion is legal but almost always an oversight: say so, with its line."""
    for d in spec.criterion_warnings():
        print(d, file=sys.stderr)


def emit(text: str, output: str | None) -> None:
    """Write a command's document to ``output`` (atomically), or to standard output."""
    if output:
        from kb_tools.files.jsonio import write_atomic

        write_atomic(output, text)
        print(f"wrote {output}")
    else:
        print(text, end="")


def categories_note(diags) -> str:
    """The failure categories of the upstream verifier that these errors fall under, for a
    summary line (kbt check-usage, kbt verify): '; categories: kb_usage_invalid'."""
    from kb_tools.contract.upstream import categories

    found = categories(diags)
    return f"; categories: {', '.join(found)}" if found else ""
