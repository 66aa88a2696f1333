"""One rule for every path a user's file or an agent names: it must lead, after every symbolic
link is followed, to a place inside the root it is relative to.

A lexical test (normpath, commonpath) lets ``link -> /etc`` through; this resolves first. An
option-shaped name (``--spec=/x``) is returned with a leading ``./``, so that a command line
built from it reads it as a path, never as an option.
"""

from __future__ import annotations

import os
from pathlib import Path


class OutsideRoot(ValueError):
    """A path that resolves outside its root, or that is no path at all."""


def resolve_inside(root, name, what: str = "path", root_name: str = "the root") -> Path:
    """The real location of ``name`` (relative to ``root``, or absolute), once it is known to
    lie inside ``root``'s real location; ``OutsideRoot`` with one line saying where it leads."""
    if not isinstance(name, (str, os.PathLike)) or not str(name).strip():
        raise OutsideRoot(f"{what}: expected a path inside {root}, got {str(name)[:80]!r}")
    if "\x00" in str(name):
        raise OutsideRoot(f"{what}: {str(name)[:80]!r} holds a NUL byte; no file can be named so")
    base = Path(os.path.realpath(root))
    target = Path(os.path.realpath(base / name))  # an absolute name replaces base, as the OS would
    if target != base and base not in target.parents:
        via = "" if target == Path(os.path.normpath(base / name)) else " through a symbolic link"
        raise OutsideRoot(f"{what}: {name} resolves{via} to {target}, outside {root_name} {base}")
    return target


def as_argument(root, name, what: str = "path", root_name: str = "the root") -> str:
    """``name`` relative to ``root`` as a command-line argument: confined, and never read as an option."""
    rel = os.path.relpath(resolve_inside(root, name, what, root_name), os.path.realpath(root))
    return "./" + rel if rel.startswith("-") else rel
