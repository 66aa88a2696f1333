NAME = "select"
HELP = "write KB_SELECTION.json for one operator spec"


def configure(parser):
    from kb_tools.commands._common import add_spec_arguments

    add_spec_arguments(parser)
    parser.add_argument("-o", "--output", metavar="DIR", default=None, help="directory to write into (default: build/<op>)")


def out_dir(args, spec):
    from pathlib import Path

    if args.output:
        return Path(args.output)
    base = Path("build") / spec.op
    return base if spec.class_id == "." else base / spec.class_id


def selected(args):
    """``(selection, output folder)`` of the spec the arguments name (``kbt select`` and
    ``kbt usage`` alike); None when the spec has gaps, which refuse_gaps has said."""
    from kb_tools.commands._common import knowledge_base, refuse_gaps, spec_of
    from kb_tools.contract.selection import select

    spec = spec_of(args)
    if refuse_gaps(spec):
        return None
    return select(knowledge_base(args), spec), out_dir(args, spec)


def run(args):
    from kb_tools.diagnostics import EXIT_FINDINGS
    from kb_tools.contract.selection import SELECTION_FILENAME
    from kb_tools.contract.usage import write_operator

    found = selected(args)
    if found is None:
        return EXIT_FINDINGS
    selection, folder = found
    write_operator(selection, folder, with_usage=False)  # never beside another operator's usage file
    path = folder / SELECTION_FILENAME
    print(f"wrote {path}: {len(selection.constraints)} required constraints, {len(selection.patterns)} patterns, "
          f"{len(selection.playbooks)} playbooks, {len(selection.excluded)} excluded")
    return 0
