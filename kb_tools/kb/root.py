"""Where the KB lives: ``--kb-root``, else $OPKB_ROOT, else the nearest directory upward
from here holding ROUTER.md and kb/, else the checkout this package was installed from,
else the copy an installed wheel carries under ``<prefix>/share/opkb``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from kb_tools.diagnostics import EXIT_USAGE, fail


def _is_root(path: Path) -> bool:
    return (path / "ROUTER.md").is_file() and (path / "kb").is_dir()


def find_root(explicit: str | None = None) -> Path:
    if explicit or os.environ.get("OPKB_ROOT"):
        root = Path(explicit or os.environ["OPKB_ROOT"])
        if not _is_root(root):
            fail(root, None, "KB001", "not a KB root: expected ROUTER.md and kb/ in it", EXIT_USAGE)
        return root
    here = Path.cwd()
    for candidate in (here, *here.parents):
        if _is_root(candidate):
            return candidate
    for shipped in (Path(__file__).resolve().parents[2], Path(sys.prefix) / "share" / "opkb"):
        if _is_root(shipped):
            return shipped
    fail(here, None, "KB001", "no KB found here or above; pass --kb-root DIR", EXIT_USAGE)
