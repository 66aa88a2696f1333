"""Each bound on what kbt reads, its default, and the environment setting that raises it.

A limit that stops a hostile file also stops a real one that is merely large; the user raises
it with ``OPKB_<NAME>=N`` without editing code. A module's bound is read once, at its import
(the tensor bound on each load, so a test or a long-lived server sees a change). A setting
that is not a whole number in its range is not ignored: ``malformed()`` names it in one line
at the command-line edge (``kbt``, ``kbt mcp``, ``kbt hook`` all pass through it), and until
then the default holds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class Limit:
    default: int
    ceiling: int  # the most a setting may ask for (the nesting depth: Python's recursion)
    bounds: str  # what it bounds, for the one line and the README


LIMITS = {
    "OPKB_MAX_TEXT_BYTES": Limit(16 << 20, 1 << 40, "bytes of one text file read (a page, a spec, Python code, a CSV)"),
    "OPKB_MAX_YAML_BYTES": Limit(256 << 10, 1 << 30, "bytes of one YAML file (a spec, facts, the glossary)"),
    "OPKB_MAX_JSON_BYTES": Limit(1 << 20, 1 << 30, "bytes of one JSON file (KB_SELECTION.json, KB_USAGE.json)"),
    "OPKB_MAX_NESTING": Limit(32, 256, "levels of nesting in one JSON or YAML document"),
    "OPKB_MAX_AUDIT_PATHS": Limit(256, 1 << 20, "paths in one MCP audit call"),
    "OPKB_MAX_HOOK_PAYLOAD": Limit(1 << 20, 1 << 30, "bytes of one hook payload"),
    "OPKB_MAX_TENSOR_BYTES": Limit(2 << 30, 1 << 50, "bytes of one loaded tensor (never more than the machine's memory)"),
}


def setting(name: str) -> int | None:
    """The setting's value when it is present and a whole number in 1..ceiling, else None."""
    raw = os.environ.get(name, "").strip()
    if raw.isdigit() and len(raw) < 20 and 0 < int(raw) <= LIMITS[name].ceiling:
        return int(raw)
    return None


def limit(name: str) -> int:
    """The bound ``name`` as set in the environment, else its default."""
    value = setting(name)
    return LIMITS[name].default if value is None else value


def malformed() -> list[str]:
    """One line for each ``OPKB_MAX_*`` setting that is present but not a whole number in range."""
    lines = []
    for name, spec in LIMITS.items():
        raw = os.environ.get(name)
        if raw is not None and raw.strip() and setting(name) is None:
            shown = raw if len(raw) <= 40 else raw[:40] + "..."
            lines.append(f"kbt: ENV001 {name}={shown!r} is not a whole number from 1 to {spec.ceiling} "
                         f"(it bounds the {spec.bounds}; default {spec.default})")
    return lines
