NAME = "usage"
HELP = "write or merge the KB_USAGE.json skeleton (and its KB_SELECTION.json) for one operator spec"


def configure(parser):
    from kb_tools.commands._common import add_spec_arguments

    add_spec_arguments(parser)
    parser.add_argument("-o", "--output", metavar="DIR", default=None, help="directory to write into (default: build/<op>)")
    parser.add_argument("--invariant-format", choices=("opkb", "upstream", "upstream-v3"), default=None,
                        help="upstream: each invariant as '[<selection_field>:<page-id>/<invariant-id> | <anchors>] <text>'; "
                             "upstream-v3: as pypto-gym's contract-v3 template writes it, the req_id and the anchors each "
                             "json.dumps-quoted, '[<selection_field>:\"<page-id>/<invariant-id>\" | [\"<anchor>\", ...]] <text>' "
                             "(default: the existing file's format, else opkb)")


def run(args):
    from kb_tools.diagnostics import EXIT_FINDINGS
    from kb_tools.commands._common import knowledge_base
    from kb_tools.commands.select import selected
    from kb_tools.contract.usage import write_operator

    found = selected(args)
    if found is None:
        return EXIT_FINDINGS
    selection, target = found
    encoding = args.invariant_format or _existing_format(target / "KB_USAGE.json")
    path, report = write_operator(selection, target)
    if encoding in ("upstream", "upstream-v3"):
        _encode(path, knowledge_base(args), selection, quoted=encoding == "upstream-v3")
    restored = f", {report.restored} restored from stale" if report.restored else ""
    print(f"wrote {path}: {report.added} new records, {report.kept} kept{restored}, {len(report.stale)} stale")
    for line in report.stale:
        print(f"  stale: {line}")
    return 0


def _existing_format(path) -> str:
    """The spelling of the file already there (upstream, upstream-v3 or opkb), so a merge keeps it.
    A look at the bytes, not a parse: the merge reads the file properly (and reports it), and
    ``kbt usage`` stays free of the YAML and schema imports a strict read brings."""
    from kb_tools.contract.upstream import spelling
    from kb_tools.files.jsonio import MAX_JSON_BYTES

    try:
        if not path.is_file() or path.stat().st_size > MAX_JSON_BYTES:
            return "opkb"
        data = path.read_bytes()
    except OSError:
        return "opkb"
    return spelling(data)


def _encode(path, kb, selection, *, quoted: bool = False) -> None:
    from kb_tools.contract import upstream
    from kb_tools.files.jsonio import dump_bytes, load_json, write_atomic

    fields = {ref.page.rel_path: "optional_patterns" for ref in selection.patterns}
    doc = upstream.encoded_usage(load_json(path, code_prefix="US"), kb, fields, quoted=quoted)
    doc = upstream.active_only(doc) if quoted else doc
    write_atomic(path, dump_bytes(doc))
