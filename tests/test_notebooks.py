"""Every notebook executes the way `kbt notebooks` runs it (jupytext + nbclient, kernel
python3) and its own asserts hold. A failure names the notebook and the cell."""

from __future__ import annotations

import pytest

from kb_tools import backends
from kb_tools.notebook_runner import execute, notebook_sources

from conftest import REPO

SOURCES = notebook_sources(REPO)


def test_there_are_notebooks():
    assert SOURCES, "notebooks/ has no notebook sources"


@pytest.mark.notebook
@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_notebook_executes(source, tmp_path):
    present = backends.available()
    if "cuda" not in present:
        print(f"{source.stem}: cuda backend skipped: torch.cuda.is_available() is False on this machine")
    result = execute(source, tmp_path, present, html=False)
    assert result.error is None, f"{source.name}: {result.error}"
