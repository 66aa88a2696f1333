NAME = "compare"
HELP = "judge saved DUT, golden and third-party tensors (.npy/.pt) by a TTK criterion, with the reason"

CRITERIA = ("binary_equal", "close", "mix_tolerance", "stat_rel_err", "cross_check")


def configure(parser):
    parser.add_argument("--dut", required=True, metavar="FILE", help="the kernel's output (.npy or .pt)")
    parser.add_argument("--golden", required=True, metavar="FILE", help="the golden output (.npy or .pt); may be promoted")
    parser.add_argument("--third-party", metavar="FILE", help="the third-party leg's output; required by cross_check")
    parser.add_argument("--dtype", metavar="DTYPE", help="the operator's declared output dtype (default: the DUT's)")
    parser.add_argument("--criterion", choices=CRITERIA, default="mix_tolerance",
                        help="TTK criterion (default: mix_tolerance, TTK's fallback)")
    parser.add_argument("--level", choices=("L0", "L1", "L2"), default="L1", help="cross_check level (default: L1)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")


def _usage(path, message):
    from kb_tools.diagnostics import EXIT_USAGE, fail

    fail(path, None, "CMP001", message, EXIT_USAGE)


def _load(path):
    from kb_tools.numerics.tensors_io import TensorFileError, load

    try:
        return load(path)
    except TensorFileError as exc:
        _usage(path, str(exc).removeprefix(f"{path}: "))


def _fmt(value) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _text(verdict, warnings) -> str:
    d = verdict.as_dict()
    head = f"kbt compare: {d['verdict'].upper()} {d['criterion']} ({d['dtype']}"
    lines = [head + (f", level {d['level']})" if d["level"] else ")")]
    lines += [f"  warning: {w}" for w in warnings]
    lines += [f"  why: {r}" for r in d["reasons"]]
    lines += [f"  note: {n}" for n in d["notes"]]
    if d["ratios"]:
        lines.append("  ratios (DUT error / third-party error): "
                     + ", ".join(f"{k} {_fmt(v)}" for k, v in d["ratios"].items()))
    legs = list(d["metrics"])
    if legs:
        lines.append("  " + "metric".ljust(16) + "".join(leg.rjust(16) for leg in legs))
        for key in d["metrics"][legs[0]]:
            if key != "dtype":
                lines.append("  " + key.ljust(16) + "".join(_fmt(d["metrics"][leg][key]).rjust(16) for leg in legs))
    return "\n".join(lines)


def _json_safe(value):
    import math

    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_safe(v) for v in value]
    return value


def run(args):
    import json

    from kb_tools.numerics import criteria, promote
    from kb_tools.vocabulary import canonical_dtype

    dut = _load(args.dut)
    golden = _load(args.golden)
    third_party = _load(args.third_party) if args.third_party else None
    actual = str(dut.dtype).removeprefix("torch.")
    dtype = actual
    if args.dtype:
        dtype = canonical_dtype(args.dtype)
        if dtype is None:
            _usage(args.dut, f"unknown --dtype {args.dtype!r}")
        if dtype != actual:
            _usage(args.dut, f"holds {actual}, but --dtype says the output is {dtype}")
    for path, tensor in ((args.golden, golden), (args.third_party, third_party)):
        if tensor is not None and tuple(tensor.shape) != tuple(dut.shape):
            _usage(path, f"shape {tuple(tensor.shape)} does not match the DUT's {tuple(dut.shape)}")
    if args.criterion == "cross_check" and third_party is None:
        _usage(args.dut, "cross_check needs --third-party (the same-precision third-party leg's output)")
    warnings = []
    if third_party is not None and args.criterion != "cross_check":
        warnings += promote.case_mode({"output": "cross_check"}, override=args.criterion).warnings
        warnings.append("--third-party is ignored: only cross_check reads it")
    try:
        verdict = criteria.judge(args.criterion, dut, golden, third_party, dtype, args.level)
    except ValueError as exc:
        _usage(args.dut, str(exc))
    if args.format == "json":
        out = verdict.as_dict()
        out["warnings"] = warnings
        print(json.dumps(_json_safe(out), indent=2, allow_nan=False))
    else:
        print(_text(verdict, warnings))
    return 0 if verdict.passed else 1
