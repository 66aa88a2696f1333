"""Wall-clock comparisons that a notebook may show but never assert.

A time measured once on a shared machine says little: another process can take the core
in the middle of it. So every callable is timed many times, the callables interleaved (a
burst of load then hits all of them alike), the median kept, and two medians are called
different only when they differ by more than a stated margin.
"""

from __future__ import annotations

import statistics
import time
from typing import Callable


def interleaved_medians(fns: dict[str, Callable[[], object]], repeats: int = 15,
                        sync: Callable[[], object] = lambda: None) -> dict[str, float]:
    """Median milliseconds per call of each function, timed in rounds of one call each.

    ``sync`` waits for queued device work (``torch.cuda.synchronize``) around each call."""
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for fn in fns.values():  # warm-up: first-call allocations and dispatch caches
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            sync()
            start = time.perf_counter()
            fn()
            sync()
            samples[name].append((time.perf_counter() - start) * 1e3)
    return {name: statistics.median(times) for name, times in samples.items()}


def compare(a: float, b: float, margin: float = 0.10) -> str:
    """'slower', 'faster' or 'within margin': how ``a`` stands to ``b`` beyond ``margin``
    (a fraction of the smaller of the two)."""
    if abs(a - b) <= margin * min(a, b):
        return "within margin"
    return "slower" if a > b else "faster"
