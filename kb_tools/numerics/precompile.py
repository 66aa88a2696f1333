"""Compile the one-pass comparison loops once, at set-up, for every leg dtype they read.

numba caches each compiled signature beside its source (``kb_tools/numerics/__pycache__``), and
a fresh clone has none: its first comparison of each dtype combination would stop for a compile
(about half a second each; the suite alone meets some 120). ``make setup`` runs this module, as an
install builds an extension, so that neither a user's first ``kbt compare`` nor the test suite pays
for it. The combinations: every DUT dtype the pass decodes against a golden in the DUT's own dtype,
in float32 or in float64 (a golden computed at the DUT's precision or above it), for the pair
criteria and for cross_check with the third party in the DUT's dtype; each with and without
metrics. Any other combination still works, compiled on first use.
Run: python -m kb_tools.numerics.precompile [--jobs N]
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

from kb_tools.numerics.onepass import BITS_DTYPES, DIRECT_DTYPES

DTYPES = DIRECT_DTYPES + BITS_DTYPES


def combinations() -> list[tuple[str, ...]]:
    """(dut, golden) for the pair criteria and (dut, golden, third party) for cross_check."""
    pairs = [(dut, golden) for dut in DTYPES for golden in dict.fromkeys((dut, "float32", "float64"))]
    return pairs + [(dut, golden, dut) for dut, golden in pairs]


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
    parser.add_argument("--jobs", type=int, default=2, help="processes compiling side by side (default 2)")
    args = parser.parse_args(argv)
    todo = combinations()
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        done = sum(1 for _ in pool.map(compile_one, todo))
    print(f"precompile: the one-pass loops compiled for {done} dtype combinations")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
