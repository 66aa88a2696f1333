NAME = "select"
HELP = "write KB_SELECTION.json for one operator spec"


def configure(parser):
    parser.add_argument("spec", help="operator spec, e.g. ops/softmax.yaml")
    parser.add_argument("-o", "--output", metavar="DIR", default=None, help="directory to write into (default: build/<op>)")


def out_dir(args, spec):
    from pathlib import Path

    if args.output:
        return Path(args.output)
    base = Path("build") / spec.op
    return base if spec.class_id == "." else base / spec.class_id


def run(args):
    from kb_tools.commands._common import knowledge_base, warn_uncovered
    from kb_tools.contract.selection import select, write_selection
    from kb_tools.contract.specs import load_spec

    spec = load_spec(args.spec)
    warn_uncovered(spec)
    selection = select(knowledge_base(args), spec)
    path = write_selection(selection, out_dir(args, spec))
    print(f"wrote {path}: {len(selection.constraints)} required constraints, {len(selection.patterns)} patterns, "
          f"{len(selection.playbooks)} playbooks, {len(selection.excluded)} excluded")
    return 0
