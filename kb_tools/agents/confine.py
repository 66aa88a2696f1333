"""Every path a tool reads or writes stays inside the server's root (files.confine's rule).

An agent's arguments are untrusted input: ``../../etc``, an absolute path, a symbolic link
that leads out of the root, or a value shaped like an option are refused or made plain data
before any command sees them.
"""

from __future__ import annotations

from pathlib import Path

from kb_tools.files.confine import OutsideRoot, as_argument

__all__ = ["OutsideRoot", "inside"]


def inside(root: Path, raw: str, what: str) -> str:
    """``raw`` as the commands should see it (relative to the root, the server's working
    directory), once it is known to resolve inside ``root``; symbolic links are followed."""
    try:
        return as_argument(root, raw, what, "the server's root")
    except OutsideRoot as exc:
        raise OutsideRoot(f"{exc}; give a path inside the root (or start kbt mcp with --root)") from None
