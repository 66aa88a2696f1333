"""Which files ``kbt audit`` reads: the files it is given, and every ``*.py`` under the
directories it is given, minus hidden folders, virtual environments, ``build/`` and what
``--exclude`` names. Symbolic links to directories are not followed (no loop can form).
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

SKIPPED_DIRS = frozenset({"build", "__pycache__", "node_modules", "site-packages", "venv", "env"})


def _is_venv(folder: str, name: str) -> bool:
    return os.path.isfile(os.path.join(folder, name, "pyvenv.cfg"))


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
        for folder, dirs, files in os.walk(given):  # folders as text: a tree of thousands builds no Path for each
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS
                             and not _is_venv(folder, d))
            for name in files:
                if name.endswith(".py") and not name.startswith("."):
                    path = Path(folder, name)
                    if not exclude or not excluded(PurePosixPath(path.relative_to(given).as_posix()), exclude):
                        found.append(path)
        out.extend(sorted(found))
    return out
