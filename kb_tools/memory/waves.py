"""The high-to-low wave plan of the in-place expansion (seed 001 §3.4.2) and its proof.

The packed mask sits in the first ceil(n/8) bytes of the output. A wave expands the range
[start, end) whose writes, bytes [d·start, d·end), must miss every mask byte still to be
read. Each wave starts at align_up(ceil(ceil(end/8)/d), 256); the last prefix (at most 256
elements) is read whole into local memory before it is written, so it needs no such bound.
"""

from __future__ import annotations

from typing import NamedTuple

from kb_tools.memory.tiling import ALIGN_ELEMENTS, align_up, ceil_div


class Wave(NamedTuple):
    start: int
    end: int
    buffered: bool  # the final prefix: read whole before any of it is written

    def read_bytes(self) -> tuple[int, int]:
        """Mask bytes this wave reads: those holding bits start .. end-1."""
        return self.start // 8, ceil_div(self.end, 8)

    def write_bytes(self, width: int) -> tuple[int, int]:
        return width * self.start, width * self.end


def wave_start(end: int, width: int, align: int = ALIGN_ELEMENTS) -> int:
    return align_up(ceil_div(ceil_div(end, 8), width), align)


def plan_waves(n: int, width: int, align: int = ALIGN_ELEMENTS) -> list[Wave]:
    """Waves from the highest down; empty for n == 0."""
    if n < 0:
        raise ValueError(f"element count must be >= 0, got {n}")
    if width < 1:
        raise ValueError(f"element width must be >= 1 byte, got {width}")
    waves, end = [], n
    while end > align:
        start = wave_start(end, width, align)
        waves.append(Wave(start, end, False))
        end = start
    if end:
        waves.append(Wave(0, end, True))
    return waves


def plan_problems(plan: list[Wave], n: int, width: int, align: int = ALIGN_ELEMENTS) -> list[str]:
    """Why ``plan`` is unsafe or incomplete for n elements of ``width`` bytes ([] = safe).

    Interval arithmetic, no simulation: the waves must tile [0, n) from the top down, every
    unbuffered wave must start on the alignment and leave the prefix below it non-empty,
    and its write interval must be disjoint from the union of the read intervals of itself
    and of every later wave (the bytes still to be read when it writes). A buffered wave
    may overwrite what it reads, but only if it is the last and at most ``align`` long.
    """
    problems = []
    expected_end = n
    for i, wave in enumerate(plan):
        if wave.end != expected_end or not 0 <= wave.start < wave.end:
            problems.append(f"wave {i} {wave.start}..{wave.end} does not continue the cover below {expected_end}")
            break
        expected_end = wave.start
        if wave.buffered:
            if i != len(plan) - 1 or wave.start != 0 or wave.end > align:
                problems.append(f"buffered wave {i} {wave.start}..{wave.end} is not a final prefix of <= {align}")
            continue
        if wave.start % align:
            problems.append(f"wave {i} starts at {wave.start}, not a multiple of {align}")
        pending = [w.read_bytes() for w in plan[i:]]
        lo, hi = min(r[0] for r in pending), max(r[1] for r in pending)
        w_lo, w_hi = wave.write_bytes(width)
        if w_lo < hi and lo < w_hi:
            problems.append(f"wave {i} writes bytes {w_lo}..{w_hi} over unread mask bytes {lo}..{hi}")
    if expected_end != 0 and not problems:
        problems.append(f"plan leaves elements 0..{expected_end} unexpanded")
    return problems
