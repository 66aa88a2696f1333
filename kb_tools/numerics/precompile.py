"""Compile the one-pass comparison loops once, at set-up, for every leg dtype they read.

numba caches each compiled signature beside its source (``kb_tools/numerics/__pycache__``), and
a fresh clone has none: its first comparison of each dtype combination would stop for a compile
(a few seconds of CPU each). ``make setup`` runs this module, as an install builds an extension,
so that a user's first ``kbt compare`` does not pay for it. It compiles the legs TTK's Promote
produces for an operator that follows the rules (seed 000 §3, ``numerics.promote``): for the pair
criteria a golden in the DUT's dtype or in its promoted one, for cross_check the golden promoted
and the third party in the DUT's dtype; each with and without metrics. Any other combination (a
golden two steps above, a collapsed golden in a cross_check case) still works, compiled on its
first use and cached from then on: issue 41 set set-up at 60 s of CPU, and the full cross
product (32 combinations) cost 105 s. Combinations the loops read as the same arrays (the two
fp8 formats are both bytes and a decode table) compile once, and each unit prints a line as it
ends, so a set-up under load is never silent.
Run: python -m kb_tools.numerics.precompile [--jobs N]
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed

from kb_tools.numerics.onepass import BITS_DTYPES, DIRECT_DTYPES

DTYPES = DIRECT_DTYPES + BITS_DTYPES


def combinations() -> list[tuple[str, ...]]:
    """(dut, golden) for the pair criteria and (dut, golden, third party) for cross_check."""
    from kb_tools.numerics.promote import promoted

    pairs = [(dut, golden) for dut in DTYPES for golden in dict.fromkeys((dut, promoted(dut)))]
    return pairs + [(dut, promoted(dut), dut) for dut in DTYPES]


def signature(names: tuple[str, ...]) -> tuple:
    """What numba compiles a combination for: each leg's array dtype and whether it carries a
    decode table (``onepass._leg``), and the working dtype, so combinations alike here share
    one compile."""
    import torch

    from kb_tools.numerics import chunks, onepass

    legs = [torch.zeros(1, dtype=getattr(torch, name)) for name in names]
    work = chunks.work_dtype(torch, *legs)
    return (str(work),) + tuple((array.dtype.str, table.size > 0) for array, table in map(onepass._leg, legs))


def units() -> list[tuple[str, ...]]:
    """One combination per distinct signature, in ``combinations()``'s order."""
    first: dict[tuple, tuple[str, ...]] = {}
    for names in combinations():
        first.setdefault(signature(names), names)
    return list(first.values())


def compile_one(names: tuple[str, ...]) -> tuple[str, ...]:
    """Run the pass once on eight zeros of these dtypes: each criterion's verdict alone, and with metrics."""
    import torch

    from kb_tools.numerics import chunks, onepass
    from kb_tools.numerics import tolerances as tol

    legs = [torch.zeros(8, dtype=getattr(torch, name)) for name in names]
    work_is_f64 = chunks.work_dtype(torch, *legs) == torch.float64
    if len(legs) == 2:
        for stats in (onepass.MIX_STATS, onepass.STAT_STATS):
            onepass.pair(*legs, work_is_f64, 0.0, 0.0, False, stats)
        onepass.pair(*legs, work_is_f64, 0.0, 0.0, True)
    else:
        for metrics in (False, True):
            onepass.cross(*legs, work_is_f64, tol.SMALL_VALUE["float32"], metrics)
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kb_tools.numerics.precompile", description=__doc__.split("\n")[0])
    # one process by default: two compile the loops' shared helpers twice (58 s of CPU against 49 s
    # for one, from a fresh cache on the 2-core machine at load 2.5, where one also ended first)
    parser.add_argument("--jobs", type=int, default=1, help="processes compiling side by side (default 1)")
    args = parser.parse_args(argv)
    todo = units()
    started = time.monotonic()
    print(f"precompile: {len(todo)} units to compile ({len(combinations())} dtype combinations), "
          f"{max(1, args.jobs)} at a time", flush=True)
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        futures = [pool.submit(compile_one, names) for names in todo]
        for done, future in enumerate(as_completed(futures), 1):
            names = future.result()
            kind = "cross_check" if len(names) == 3 else "pair"
            print(f"precompile: [{done}/{len(todo)}] {kind} {' / '.join(names)} "
                  f"({time.monotonic() - started:.0f} s)", file=sys.stdout, flush=True)
    print(f"precompile: done, {len(todo)} units in {time.monotonic() - started:.0f} s; "
          "other dtype combinations compile on their first use")
    return 0

if __name__ == "__main__":
    raise SystemExit(main())
