NAME = "explain"
HELP = "say what an audit rule code reports, how to fix it and which pages state it (as `ruff rule`); no code: list them all"


def configure(parser):
    parser.add_argument("codes", nargs="*", metavar="CODE", help="rule codes (default: one line per rule, its code, name and what it reports)")


def run(args):
    from kb_tools.audit.codes import RULES
    from kb_tools.audit.explain import explain
    from kb_tools.diagnostics import EXIT_OK, EXIT_USAGE, KbError

    unknown = [c for c in args.codes if c.upper() not in RULES]
    if unknown:
        raise KbError(f"explain: AU023 unknown rule code {unknown[0]!r}; known: {', '.join(sorted(RULES))}", EXIT_USAGE)
    if not args.codes:
        print("\n".join(f"{c} {RULES[c].name}: {RULES[c].summary}" for c in sorted(RULES)))
        return EXIT_OK
    print("\n\n".join(explain(c.upper()) for c in args.codes))
    return EXIT_OK
