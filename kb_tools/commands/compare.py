NAME = "compare"
HELP = "judge saved DUT, golden and third-party tensors (.npy/.pt) by a TTK criterion, with the reason"


def configure(parser):
    from kb_tools.numerics.routing import REQUESTABLE

    parser.add_argument("--dut", required=True, metavar="FILE", help="the kernel's output (.npy or .pt)")
    parser.add_argument("--golden", required=True, metavar="FILE", help="the golden output (.npy or .pt); may be promoted")
    parser.add_argument("--third-party", metavar="FILE", help="the third-party leg's output; required by cross_check")
    parser.add_argument("--dtype", metavar="DTYPE", help="the operator's declared output dtype (default: the DUT's)")
    parser.add_argument("--spec", metavar="SPEC_OR_FOLDER",
                        help="take the criterion for the output dtype from this ops/<op>.yaml or CANN operator "
                             "folder (its golden's tolerance) when --criterion is not given")
    parser.add_argument("--criterion", choices=REQUESTABLE, default=None,
                        help="TTK criterion, or TTK's spelling of one (mixed, isclose, binary); integer and bool "
                             "outputs are judged by binary_equal whatever is asked, as TTK does; quant is for an "
                             "int4/int8 output the operator declares quantised; gym_gate is the PyPTO-Pro samples' "
                             "check, mix_tolerance plus the MERE/MARE gates (default: mix_tolerance, TTK's default)")
    parser.add_argument("--level", choices=("L0", "L1", "L2"), default="L1", help="cross_check level (default: L1)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")


def _usage(path, message):
    from kb_tools.diagnostics import EXIT_USAGE, fail

    fail(path, None, "CMP001", message, EXIT_USAGE)


def _tensor_file(read, path):
    """``read(path)`` (a check or a load from tensors_io), its refusal turned into a usage error."""
    from kb_tools.numerics.tensors_io import TensorFileError

    try:
        return read(path)
    except TensorFileError as exc:
        _usage(path, str(exc).removeprefix(f"{path}: "))


def _check_arguments(args) -> str | None:
    """Everything that can be checked before torch is imported: the dtype name, the files, the
    third-party leg cross_check needs. Returns the declared dtype's torch name, if one was given."""
    from kb_tools.numerics.routing import dtype_name
    from kb_tools.numerics.tensors_io import check_path

    declared = None
    if args.dtype is not None:  # "" is a mistake to report, not "use the DUT's dtype"
        declared = dtype_name(args.dtype)
        if declared is None:
            _usage("--dtype", f"unknown dtype {args.dtype!r}")
    for path in (args.dut, args.golden, args.third_party):
        if path is not None:
            _tensor_file(check_path, path)
    if args.spec is None and args.criterion is None:
        args.criterion = "mix_tolerance"
    if args.criterion == "cross_check" and args.third_party is None:
        _usage("--third-party", "cross_check needs --third-party (the same-precision third-party leg's output)")
    return declared


def _criterion_from_spec(args, dtype: str) -> str | None:
    """The spec's (or CANN folder's) criterion for ``dtype``, with a note saying where it came from."""
    from pathlib import Path

    from kb_tools.contract.specs import load_spec

    spec = load_spec(Path(args.spec))
    criterion = spec.criteria.get(dtype)
    if criterion is None:
        _usage(args.spec, f"declares no criterion for {dtype}; pass --criterion (TTK would use its default)")
    if criterion == "cross_check" and args.third_party is None:
        _usage("--third-party", f"{args.spec} declares cross_check for {dtype}, which needs --third-party")
    return criterion


def _fmt(value) -> str:
    if value is None:
        return "undefined"
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def _text(verdict, legs, warnings) -> str:
    d = verdict.as_dict()
    asked = f", asked for {d['requested']}" if d["requested"] else ""
    head = f"kbt compare: {d['verdict'].upper()} {d['criterion']} ({d['dtype']}"
    lines = [head + (f", level {d['level']}" if d["level"] else "") + asked + ")"]
    lines += [f"  warning: {w}" for w in warnings]
    lines += [f"  why: {r}" for r in d["reasons"]]
    lines += [f"  note: {n}" for n in d["notes"]]
    if d["ratios"]:
        lines.append("  ratios (DUT / third party, TTK's safe_div): "
                     + ", ".join(f"{k} {_fmt(v)}" for k, v in d["ratios"].items()))
    lines.append("  criterion: " + ", ".join(f"{k} {_fmt(v)}" for k, v in d["metrics"].items() if k != "limits"))
    if legs:
        names = list(legs)
        lines.append("  " + "metric".ljust(16) + "".join(leg.rjust(16) for leg in names))
        for key in legs[names[0]]:
            if key != "dtype":
                lines.append("  " + key.ljust(16) + "".join(_fmt(legs[leg][key]).rjust(16) for leg in names))
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

    from kb_tools.numerics.tensors_io import load
    from kb_tools.numerics.verdict import dtype_name

    declared = _check_arguments(args)
    dut = _tensor_file(load, args.dut)
    golden = _tensor_file(load, args.golden)
    third_party = _tensor_file(load, args.third_party) if args.third_party else None
    actual = dtype_name(dut)
    if declared and declared != actual:
        _usage(args.dut, f"holds {actual}, but --dtype says the output is {declared}")
    if args.criterion is None:
        args.criterion = _criterion_from_spec(args, declared or actual)

    from kb_tools.numerics import criteria, promote

    warnings = []
    if third_party is not None and args.criterion != "cross_check":
        warnings += promote.case_mode({"output": "cross_check"}, override=args.criterion).warnings
        warnings.append("--third-party is ignored: only cross_check reads it")
    elif third_party is not None:
        from kb_tools.numerics.collapsed import collapsed_warning

        warnings += [w for w in [collapsed_warning(golden, third_party)] if w]
    try:  # the verdict and every leg's metrics, from one pass over the tensors where it can
        verdict, metrics = criteria.compare(args.criterion, dut, golden, third_party, actual, args.level)
        legs = {leg: m.as_dict() for leg, m in metrics.items()}
    except ValueError as exc:
        _usage(args.dut, str(exc))
    except (TypeError, RuntimeError) as exc:  # torch has no kernel for this dtype pair
        _usage(args.dut, f"cannot be compared: {(str(exc).splitlines() or [type(exc).__name__])[0]}")
    if args.format == "json":
        out = verdict.as_dict()
        out["legs"] = legs
        out["warnings"] = warnings
        print(json.dumps(_json_safe(out), indent=2, allow_nan=False))
    else:
        print(_text(verdict, legs, warnings))
    return 0 if verdict.passed else 1
