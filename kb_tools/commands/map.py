NAME = "map"
HELP = "write the routing map derived from the pages, shaped like the public KB's topology-map.json"


def configure(parser):
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")


def run(args):
    from kb_tools.commands._common import emit, knowledge_base
    from kb_tools.files.jsonio import dumps
    from kb_tools.kb.topomap import routing_map

    text = dumps(routing_map(knowledge_base(args)))
    emit(text, args.output)
    return 0
