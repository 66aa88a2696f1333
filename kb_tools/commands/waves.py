"""``kbt waves``: the high-to-low wave plan of seed 001 §3.4.2 for n elements of a dtype."""

NAME = "waves"
HELP = "print the high-to-low wave plan of the in-place mask expansion (seed 001 §3.4.2)"


def configure(parser):
    parser.add_argument("--n", required=True, metavar="N", help="number of output elements")
    parser.add_argument("--dtype", default="float32", help="output dtype (default float32)")
    parser.add_argument("--format", choices=("text", "json"), default="text")


MAX_COUNT = 2**63 - 1  # element counts and offsets are int64 on every device


def parse_count(value, flag: str) -> int:
    """A non-negative integer argument of at most MAX_COUNT, or the one-line usage error (exit 2)."""
    from kb_tools.diagnostics import EXIT_USAGE, fail, shortened

    text = str(value).replace("_", "").strip()
    shown = shortened(text, 30)
    if len(text.lstrip("+-")) > len(str(MAX_COUNT)):  # before int(): 5000 digits is a ValueError there
        fail("kbt", None, "ARG001", f"{flag} must be at most {MAX_COUNT} (int64), got {shown}", EXIT_USAGE)
    try:
        number = int(text)
    except ValueError:
        fail("kbt", None, "ARG001", f"{flag} must be an integer, got {shown!r}", EXIT_USAGE)
    if number < 0:
        fail("kbt", None, "ARG001", f"{flag} must be >= 0, got {number}", EXIT_USAGE)
    if number > MAX_COUNT:
        fail("kbt", None, "ARG001", f"{flag} must be at most {MAX_COUNT} (int64), got {number}", EXIT_USAGE)
    return number


def parse_width(name) -> int:
    from kb_tools.diagnostics import EXIT_USAGE, fail
    from kb_tools.memory.tiling import dtype_bytes

    try:
        return dtype_bytes(name)
    except ValueError as exc:
        fail("kbt", None, "ARG002", str(exc), EXIT_USAGE)


def run(args):
    import json

    from kb_tools.memory.waves import plan_waves

    n = parse_count(args.n, "--n")
    width = parse_width(args.dtype)
    plan = plan_waves(n, width)
    if args.format == "json":
        print(json.dumps([{"start": w.start, "end": w.end} for w in plan]))
        return 0
    print(f"{n} elements of {args.dtype} ({width} B): {len(plan)} wave(s), highest first")
    for i, w in enumerate(plan):
        lo, hi = w.read_bytes()
        wlo, whi = w.write_bytes(width)
        note = "final prefix, read whole before written" if w.buffered else f"writes bytes {wlo}..{whi} >= unread mask end {hi}"
        print(f"  wave {i}: elements [{w.start}, {w.end})  reads mask bytes [{lo}, {hi})  {note}")
    return 0
