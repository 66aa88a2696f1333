"""Where the KB lives: ``--kb-root``, else $OPKB_ROOT, else the nearest directory upward
from here holding ROUTER.md and kb/, else the checkout this package was installed from,
else the copy an installed wheel carries under ``<prefix>/share/opkb``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from kb_tools.diagnostics import EXIT_USAGE, fail, shortened


def _is_root(path: Path) -> bool:
    return (path / "ROUTER.md").is_file() and (path / "kb").is_dir()


def _why_not_root(path: Path) -> str | None:
    """None for a KB root, else why it is not one (a name too long or a folder that cannot
    be entered is said so, not called a missing KB)."""
    try:
        return None if _is_root(path) else "not a KB root: expected ROUTER.md and kb/ in it"
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc}); a KB root holds ROUTER.md and kb/"


def _broken_root(path: Path) -> tuple[str, str] | None:
    """(the missing or unusable part, why) for a folder that is a KB checkout but for that part:
    it has kb/constraints/ or a ROUTER.md of any kind. None for any other folder."""
    from kb_tools.files.text import not_regular

    try:
        router, kb = path / "ROUTER.md", path / "kb"
        if not (os.path.lexists(router) or (kb / "constraints").is_dir()):
            return None
        if not os.path.lexists(router):
            return "ROUTER.md", "missing: this folder holds kb/constraints/ but no ROUTER.md; restore it, or pass --kb-root DIR"
        if not router.is_file():
            kind = not_regular(os.stat(router).st_mode) if os.path.exists(router) else "a dangling link"
            return "ROUTER.md", f"is {kind}, not a regular file; a KB root needs its ROUTER.md (or pass --kb-root DIR)"
        if not kb.is_dir():
            return "kb", "missing: this folder holds ROUTER.md but no kb/ folder; restore it, or pass --kb-root DIR"
    except OSError:
        return None
    return None


def find_root(explicit: str | None = None) -> Path:
    if explicit == "":
        fail("--kb-root", None, "KB001", "is empty: give the folder holding ROUTER.md and kb/, or leave the option out", EXIT_USAGE)
    if explicit is not None or os.environ.get("OPKB_ROOT"):
        root = Path(explicit if explicit is not None else os.environ["OPKB_ROOT"])
        why = _why_not_root(root)
        if why:
            fail(shortened(root, 200), None, "KB001", why, EXIT_USAGE)
        return root
    try:
        here = Path.cwd()
    except FileNotFoundError:
        fail("kbt", None, "KB002", "the current directory no longer exists: cd to one that does, or pass --kb-root DIR", EXIT_USAGE)
    for candidate in (here, *here.parents):
        if _is_root(candidate):
            return candidate
        broken = _broken_root(candidate)
        if broken:  # a KB checkout missing a part: said, never passed over for another KB
            fail(candidate / broken[0], None, "KB003", broken[1], EXIT_USAGE)
    for shipped in (Path(__file__).resolve().parents[2], Path(sys.prefix) / "share" / "opkb"):
        if _is_root(shipped):
            return shipped
    fail(here, None, "KB001", "no KB found here or above; pass --kb-root DIR", EXIT_USAGE)
