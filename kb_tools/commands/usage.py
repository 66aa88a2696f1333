NAME = "usage"
HELP = "write or merge the KB_USAGE.json skeleton (and its KB_SELECTION.json) for one operator spec"


def configure(parser):
    parser.add_argument("spec", help="operator spec, e.g. ops/softmax.yaml")
    parser.add_argument("-o", "--output", metavar="DIR", default=None, help="directory to write into (default: build/<op>)")


def run(args):
    from kb_tools.commands._common import knowledge_base, warn_uncovered
    from kb_tools.commands.select import out_dir
    from kb_tools.contract.selection import select
    from kb_tools.contract.specs import load_spec
    from kb_tools.contract.usage import write_operator

    spec = load_spec(args.spec)
    warn_uncovered(spec)
    selection = select(knowledge_base(args), spec)
    path, report = write_operator(selection, out_dir(args, spec))
    restored = f", {report.restored} restored from stale" if report.restored else ""
    print(f"wrote {path}: {report.added} new records, {report.kept} kept{restored}, {len(report.stale)} stale")
    for line in report.stale:
        print(f"  stale: {line}")
    return 0
