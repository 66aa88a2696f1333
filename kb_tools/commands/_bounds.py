"""Numbers from the command line, checked where they come in: a count of processes or a time
limit outside its range is one argparse error line and exit 2, before any work starts
(``--jobs 10**30`` once built range(N) lists until memory ran out; ``--timeout -5`` meant none)."""

from __future__ import annotations

import argparse
import math

MAX_JOBS = 64  # processes at once: more than any machine kbt runs on gains from; a bound on fork()s
MAX_SECONDS = 24 * 3600


def jobs(text: str) -> int:
    """A process count, 1..MAX_JOBS."""
    try:
        value = int(text) if len(text) <= 20 else None
    except ValueError:
        value = None
    if value is None or not 1 <= value <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"expected a whole number of processes from 1 to {MAX_JOBS}, got {text[:40]!r}")
    return value


def seconds(text: str) -> float:
    """A time limit in seconds, more than 0 and at most a day."""
    try:
        value = float(text) if len(text) <= 40 else math.nan
    except ValueError:
        value = math.nan
    if not 0 < value <= MAX_SECONDS:  # NaN fails too
        raise argparse.ArgumentTypeError(f"expected seconds, more than 0 and at most {MAX_SECONDS}, got {text[:40]!r}")
    return value


def whole_seconds(text: str) -> int:
    """``seconds`` as a whole number (nbclient's per-cell timeout is an integer)."""
    value = seconds(text)
    if value != int(value):
        raise argparse.ArgumentTypeError(f"expected a whole number of seconds, got {text[:40]!r}")
    return int(value)
