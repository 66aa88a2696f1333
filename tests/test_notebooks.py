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
    result = execute(source, tmp_path, present, html=False)
    assert result.error is None, f"{source.name}: {result.error}"


def test_notebooks_cuda_backend():
    """Say in the summary when the notebooks could not run their CUDA cells here."""
    if "cuda" not in backends.available():
        pytest.skip("no CUDA device: every notebook ran on the cpu backend only")
    assert "cuda" in backends.selected()[0]
