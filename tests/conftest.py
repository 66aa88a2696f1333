"""Shared fixtures: the repository root, an isolated copy of the KB, and a ``kbt`` runner
that calls the CLI in-process and captures what a user would see."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from kb_tools.cli import main

REPO = Path(__file__).resolve().parents[1]
# Fixtures are inputs (a user's project, an audited tree), never opkb's tests: their test_*.py
# files are run, where at all, by the test that copies them.
collect_ignore_glob = ["fixtures/*"]


def copy_example(op: str, dest: Path, ignore=("__pycache__",)) -> Path:
    """examples/<op> copied to ``dest`` as its README says a user copies it: with the files every
    example shares (harness.py, and conftest.py, which fixes the seed TS105 looks for) beside it."""
    shutil.copytree(REPO / "examples" / op, dest, ignore=shutil.ignore_patterns(*ignore))
    for shared in ("conftest.py", "harness.py"):
        shutil.copy(REPO / "examples" / shared, dest.parent / shared)
    return dest


@pytest.fixture(scope="session", autouse=True)
def private_kb_cache(tmp_path_factory):
    """The suite's parsed-KB cache lives in its own folder, never in the user's ~/.cache/opkb:
    the tests build many throwaway KBs, and a developer's cache should not fill up with them.
    Tests that study the cache itself still set OPKB_CACHE_DIR for themselves. It is left set
    to the end of the process, since the spec memo is saved at exit."""
    os.environ.setdefault("OPKB_CACHE_DIR", str(tmp_path_factory.mktemp("opkb-cache")))


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def kbt(capsys):
    """``kbt("lint", root=...)`` -> Result(code, stdout, stderr)."""

    def run(*argv, root: Path | None = None) -> Result:
        args = ([f"--kb-root={root}"] if root else []) + [str(a) for a in argv]
        capsys.readouterr()
        code = main(args)
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def copy_repo(dest: Path) -> Path:
    """A copy of everything the KB commands read: ROUTER.md, CONTRACT.md, kb/, ops/, notebooks/,
    docs/ (pages link it, and a number a page repeats may be explained there)."""
    for name in ("ROUTER.md", "CONTRACT.md"):
        shutil.copy(REPO / name, dest / name)
    for name in ("kb", "ops", "notebooks", "docs"):
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, dest / name, ignore=shutil.ignore_patterns("*.ipynb", "__pycache__"))
    return dest


@pytest.fixture
def repo_copy(tmp_path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return copy_repo(root)
