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


def add_spec_arguments(parser) -> None:
    """The arguments ``spec_of`` reads: the spec or a path that leads to it, ``--spec``, and
    --topology / --target, what a CANN operator folder cannot say (kb_tools.contract.cann_spec)."""
    from kb_tools.kb import vocabulary as V

    parser.add_argument("spec", nargs="?", default=None, metavar="SPEC_OR_PATH",
                        help="operator spec (ops/softmax.yaml), or the operator's code or folder to find its spec from "
                             "(default: the current folder; see kb_tools/contract/discovery.py for the order)")
    parser.add_argument("--spec", dest="spec_flag", metavar="OPS_YAML", help="the operator spec, when it cannot be found")
    parser.add_argument("--topology", choices=V.TOPOLOGIES, metavar="NAME",
                        help="for a CANN operator folder: the router's topology, in place of the one inferred from "
                             "its category and name (the inference is still printed)")
    parser.add_argument("--target", choices=V.TARGETS, help="for a CANN operator folder: the target "
                        f"({', '.join(V.TARGETS)}), in place of the newest SoC its configs register")


def spec_of(args):
    """The operator spec a command's ``spec`` argument and ``--spec`` name or lead to
    (kb_tools.contract.discovery); a spec found, not given, is said on standard error, and
    so is each fact a CANN folder's spec inferred or took from --topology / --target."""
    from kb_tools.contract.discovery import spec_for

    found = spec_for(args.spec, args.spec_flag, flag=f"--spec ops/<op>.yaml to kbt {args.command}")
    if found.how == "given":
        return _folder_facts(args, found.spec)
    from dataclasses import replace
    from pathlib import Path

    print(_shown(f"kbt {args.command}: spec {found.spec.path} ({found.how})"), file=sys.stderr)
    spec = _folder_facts(args, found.spec)
    return replace(spec, path=Path(_shown(str(spec.path))))  # its findings name it as the user would


def _folder_facts(args, spec):
    """``spec`` with --topology / --target applied where it is a CANN folder's; either flag on
    an ops/<op>.yaml, which declares both, is refused in one line."""
    from kb_tools.contract.cann_spec import CannSpec, overridden
    from kb_tools.diagnostics import EXIT_USAGE, fail

    given = {fact: getattr(args, fact, None) for fact in ("topology", "target")}
    if not isinstance(spec, CannSpec):
        named = [f"--{fact}" for fact, value in given.items() if value is not None]
        if named:
            fail(spec.path, None, "SP041", f"{' and '.join(named)} set what a CANN operator folder cannot say; "
                 "this spec declares it: edit the spec instead", EXIT_USAGE)
        return spec
    spec, lines = overridden(spec, given)
    for line in lines:
        print(f"kbt {args.command}: {line}", file=sys.stderr)
    return spec


def _shown(line: str) -> str:
    """``line`` with the paths below the current folder shown relative to it."""
    import os

    return line.replace(os.getcwd() + os.sep, "")


def refuse_gaps(spec) -> bool:
    """Print one error per declared dtype without a criterion; True when there was one, and
    the command then writes nothing (a gap is an oversight the skeleton must not inherit)."""
    gaps = spec.criterion_gaps()
    for d in gaps:
        print(d, file=sys.stderr)
    return bool(gaps)


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
