"""A time limit on work done on the main thread (a hook's check, an MCP tool call): a SIGALRM
timer raises ``TimeUp`` inside the work, so no call can keep an agent waiting for ever."""

from __future__ import annotations

import contextlib
import signal


class TimeUp(Exception):
    """The work ran past its time limit."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise ``TimeUp`` in the block once ``seconds`` have passed (main thread only)."""
    def time_up(signum, frame):
        raise TimeUp(f"over the {seconds:g} s time limit")

    previous = signal.signal(signal.SIGALRM, time_up)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
