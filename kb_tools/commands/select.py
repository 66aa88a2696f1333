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
    from kb_tools.contract.selection import SELECTION_FILENAME, select
    from kb_tools.contract.specs import load_spec
    from kb_tools.contract.usage import write_operator

    spec = load_spec(args.spec)
    warn_uncovered(spec)
    selection = select(knowledge_base(args), spec)
    folder = out_dir(args, spec)
    write_operator(selection, folder, with_usage=False)  # never beside another operator's usage file
    path = folder / SELECTION_FILENAME
    print(f"wrote {path}: {len(selection.constraints)} required constraints, {len(selection.patterns)} patterns, "
          f"{len(selection.playbooks)} playbooks, {len(selection.excluded)} excluded")
    return 0
