"""Which files ``kbt audit`` reads: the files it is given, and every ``*.py`` under the
directories it is given, minus hidden folders, virtual environments, ``build/`` and what
``--exclude`` names. Symbolic links to directories are not followed (no loop can form).
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

SKIPPED_DIRS = frozenset({"build", "__pycache__", "node_modules", "site-packages", "venv", "env"})


def excluded(path: PurePosixPath, patterns: list[str]) -> bool:
    """A glob matches the path, any of its trailing parts, or any folder on it."""
    text = str(path)
    parts = path.parts
    return any(fnmatchcase(text, p) or fnmatchcase(path.name, p)
               or any(fnmatchcase("/".join(parts[i:]), p) for i in range(len(parts)))
               or any(fnmatchcase(part, p.rstrip("/")) for part in parts[:-1]) for p in patterns)


def python_files(paths, exclude: list[str] | None = None) -> list[Path]:
    """Files in the order given; a directory's files sorted. A path that does not exist is
    passed on, so that reading it reports one clear error."""
    exclude = exclude or []
    out: list[Path] = []
    for given in map(Path, paths):
        if not given.is_dir():
            if not excluded(PurePosixPath(given.as_posix()), exclude):
                out.append(given)
            continue
        found = []
        for folder, name in _walk(os.fspath(given)):
            path = Path(folder, name)
            if not exclude or not excluded(PurePosixPath(path.relative_to(given).as_posix()), exclude):
                found.append(path)
        out.extend(sorted(found))
    return out


def _walk(top: str):
    """(folder, name) of each ``*.py`` under ``top``, in no particular order. Each folder is
    listed once and nothing else is asked of the file system: a link or a folder is told from
    the listing's own entry (``os.walk`` asked ``islink`` of every folder), and a folder is a
    virtual environment when its own listing holds a ``pyvenv.cfg`` file (it was one more
    ``stat`` per folder). Folders as text: a tree of thousands builds no Path for each."""
    todo = [(top, False)]
    while todo:
        folder, below = todo.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError:
            continue
        files, dirs = [], []
        for entry in entries:
            name = entry.name
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if is_dir:
                if not name.startswith(".") and name not in SKIPPED_DIRS and not _is_link(entry):
                    dirs.append(entry.path)
            elif name.endswith(".py") and not name.startswith("."):
                files.append(name)
            elif below and name == "pyvenv.cfg" and _is_file(entry):
                break  # a virtual environment (the folder given is walked whatever it is)
        else:
            yield from ((folder, name) for name in files)
            todo.extend((d, True) for d in dirs)


def _is_link(entry) -> bool:
    try:
        return entry.is_symlink()
    except OSError:
        return False


def _is_file(entry) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return False
