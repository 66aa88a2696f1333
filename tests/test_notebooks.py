"""Every notebook executes the way `kbt notebooks` runs it (jupytext + nbclient, kernel
python3, one kernel per backend pass) and its own asserts hold — while another CPU-bound
process competes for the cores, because a notebook asserts only what holds on a loaded machine
too. A failure names the notebook, the cell and the backend. A notebook with Triton kernels
reports at least two backends (cpu and the interpreter). Neither the kernel's transport
warning nor the profiler's log lines reach the terminal or the executed notebook."""

from __future__ import annotations

import subprocess
import sys

import nbformat
import pytest

from conftest import REPO
from kb_tools.outputs.notebook_runner import notebook_sources, run
from kb_tools.runtime import backends

SOURCES = notebook_sources(REPO)
NOISE = ("USDT:", "STAGE:", "without encryption")


@pytest.fixture
def cpu_burner():
    """A busy loop in another process for as long as the test runs."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield burner
    finally:
        burner.kill()
        burner.wait()


def _streams(ipynb) -> str:
    nb = nbformat.read(ipynb, as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def test_there_are_notebooks():
    assert SOURCES, "notebooks/ has no notebook sources"


@pytest.mark.notebook
@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_notebook_executes_under_cpu_load(source, tmp_path, cpu_burner, capfd):
    present = backends.available()
    result = run(source, tmp_path, present, html=False)
    assert cpu_burner.poll() is None, "the competing process ended before the notebook did"
    assert result.error is None, f"{source.name}: {result.error}"
    first = _streams(result.ipynb).splitlines()[0]
    assert first.startswith("backends: "), first
    if "announce(backends.KNOWN)" in source.read_text(encoding="utf-8"):
        ran = first.removeprefix("backends: ").split(", ")
        assert "cpu" in ran and "triton" in ran, f"{source.name} ran its Triton kernels on {ran} only"
    terminal = capfd.readouterr()
    for noise in NOISE:
        assert noise not in terminal.err + terminal.out, f"{source.name}: {noise!r} reached the terminal"
        assert noise not in _streams(result.ipynb), f"{source.name}: {noise!r} is in the executed notebook"


def test_notebooks_cuda_backend():
    """Say in the summary when the notebooks could not run their CUDA cells here."""
    if "cuda" not in backends.available():
        pytest.skip("no CUDA device: the notebooks ran on cpu and the Triton interpreter only")
    assert backends.passes(backends.available())[-1] == ["cuda"]
