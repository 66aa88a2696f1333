"""Which files are rule pages: every ``kb/<kind folder>/*.md`` but a README.

Its own module so that the content-keyed caches can list the pages without importing the
page parser (kb_tools.kb.pages re-exports it). A kind folder that is missing, is not a folder,
or cannot be listed stops the command here (exit 2): the KB would otherwise read as one
without those pages, and ``kbt usage`` would park every record that names them as stale."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from kb_tools.diagnostics import EXIT_USAGE, Diagnostic, KbErrors
from kb_tools.kb import vocabulary as V


def page_files(kb_dir: Path) -> list[Path]:
    files, unusable = [], []
    for sub in V.PAGE_KINDS.values():
        folder = Path(kb_dir) / sub
        try:
            names = os.listdir(folder)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # reported beside the pages that did load (kb_tools.kb.pages, PG007)
                continue
            unusable.append(_unusable(folder, exc))
            continue
        files += [folder / name for name in names if name.endswith(".md") and not name.startswith(".") and name != "README.md"]
    if unusable:
        raise KbErrors(unusable, EXIT_USAGE)
    return sorted(files)


def _unusable(folder: Path, exc: OSError) -> Diagnostic:
    shown = shown_path(folder)
    if isinstance(exc, FileNotFoundError):
        return Diagnostic(shown, None, "PG016", "the KB's page folder is missing; restore it (a checkout in progress?) before running kbt")
    if isinstance(exc, NotADirectoryError):
        return Diagnostic(shown, None, "PG016", "is not a folder; the KB's pages of this kind belong in a folder of this name")
    return Diagnostic(shown, None, "PG017", f"the KB's page folder cannot be listed ({exc.strerror or exc}); "
                      "no page in it could be read, so nothing was checked or written")


def shown_path(path: Path) -> str:
    """A path as the user would type it: relative to the current directory when possible.

    Only the folders are resolved: a page that is a symbolic link is named by its own name,
    not by the file it points to, and a link loop is named as it was found."""
    path = Path(path)
    try:
        absolute = path.parent.resolve() / path.name
    except (RuntimeError, OSError):  # RuntimeError: Python 3.11's word for a link loop
        absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(Path.cwd().resolve()).as_posix()
    except (ValueError, OSError):  # elsewhere, or the current directory is gone
        return str(path)
