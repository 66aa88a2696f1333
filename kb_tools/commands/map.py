NAME = "map"
HELP = "write the routing map derived from the pages, shaped like the public KB's topology-map.json"


def configure(parser):
    parser.add_argument("-o", "--output", metavar="FILE", help="write here (default: standard output)")
    parser.add_argument("--schema", type=int, choices=(2, 3), default=2,
                        help="2: the public map's stored shape (default); 3: with the v3 contract's reference classes and roles")


def run(args):
    from kb_tools.commands._common import emit, knowledge_base
    from kb_tools.files.jsonio import dumps
    from kb_tools.kb.topomap import routing_map, routing_map_v3

    text = dumps((routing_map_v3 if args.schema == 3 else routing_map)(knowledge_base(args)))
    emit(text, args.output)
    return 0
