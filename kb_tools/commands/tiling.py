"""``kbt tiling``: tile size, core split and single-buffer UB budget (seed 001 §3.3.2, §3.4.3)."""

NAME = "tiling"
HELP = "print tileElements, blockDim, elementsPerCore and the UB budget of the mask expansion (seed 001 §3.3, §3.4.3)"


def configure(parser):
    parser.add_argument("--ub", required=True, metavar="BYTES", help="unified buffer size in bytes (A2: 196608)")
    parser.add_argument("--dtype", default="float16", help="output dtype (default float16)")
    parser.add_argument("--cores", default="40", metavar="C", help="vector cores (default 40, A2)")
    parser.add_argument("--n", required=True, metavar="N", help="number of output elements")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args):
    import json

    from kb_tools.commands.waves import parse_count, parse_width
    from kb_tools.diagnostics import EXIT_USAGE, fail
    from kb_tools.memory.tiling import plan_tiling

    ub = parse_count(args.ub, "--ub")
    cores = parse_count(args.cores, "--cores")
    n = parse_count(args.n, "--n")
    width = parse_width(args.dtype)
    if cores < 1:
        fail("kbt", None, "ARG001", "--cores must be >= 1", EXIT_USAGE)
    try:
        t = plan_tiling(ub, width, cores, n)
    except ValueError as exc:
        fail("kbt", None, "ARG003", str(exc), EXIT_USAGE)
    if args.format == "json":
        print(json.dumps({"dtype": args.dtype, "width": width, "ub": ub, "cores": cores, "n": n,
                          "tileElements": t.tile_elements, "blockDim": t.block_dim,
                          "elementsPerCore": t.elements_per_core, "maskQueue": t.mask_queue,
                          "outQueue": t.out_queue, "workBuf": t.work_buf, "total": t.ub_total}))
        return 0
    print(f"{args.dtype} ({width} B), n={n}, UB={ub} B, {cores} cores")
    print(f"  tileElements    {t.tile_elements}")
    print(f"  blockDim        {t.block_dim}")
    print(f"  elementsPerCore {t.elements_per_core}")
    print(f"  maskQueue       {t.mask_queue} B")
    print(f"  outQueue        {t.out_queue} B")
    print(f"  workBuf         {t.work_buf} B")
    print(f"  total           {t.ub_total} B of {ub} B")
    return 0
