"""Every path a tool reads or writes stays inside the server's root.

An agent's arguments are untrusted input: ``../../etc``, an absolute path, or a symbolic link
that leads out of the root are refused before any command sees them.
"""

from __future__ import annotations

import os
from pathlib import Path


class OutsideRoot(ValueError):
    """A path argument that resolves outside the root."""


def inside(root: Path, raw: str, what: str) -> str:
    """``raw`` as the commands should see it (relative to the root, the server's working
    directory), once it is known to resolve inside ``root``; symbolic links are followed."""
    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        raise OutsideRoot(f"{what}: expected a path inside {root}, got {raw!r}")
    base = Path(os.path.realpath(root))
    target = Path(os.path.realpath(base / raw))  # absolute raw replaces base, as the OS would
    if target != base and base not in target.parents:
        raise OutsideRoot(f"{what}: {raw} resolves to {target}, outside the server's root {base}; "
                          "give a path inside the root (or start kbt mcp with --root)")
    return os.path.relpath(target, base)
