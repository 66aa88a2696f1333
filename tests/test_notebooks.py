"""Every notebook executes the way `kbt notebooks` runs it (jupytext + nbclient, kernel
python3, one kernel per backend pass) and its own asserts hold. A notebook that times anything
(it uses kb_tools.runtime.timing) runs while another CPU-bound process competes for the cores,
because a notebook asserts only what holds on a loaded machine too; the others count work, and a
busy core would only cost the suite time. A failure names the notebook, the cell and the backend. A notebook with Triton kernels
reports at least two backends (cpu and the interpreter). Neither the kernel's transport
warning nor the profiler's log lines reach the terminal or the executed notebook."""

from __future__ import annotations

import contextlib
import subprocess
import sys

import nbformat
import pytest

from conftest import REPO
from kb_tools.outputs.notebook_runner import notebook_sources, run
from kb_tools.runtime import backends

SOURCES = notebook_sources(REPO)
NOISE = ("USDT:", "STAGE:", "without encryption")
TIMES = "kb_tools.runtime.timing"  # a notebook that uses it times something
# The named rules whose kernels must pass on triton-ascend's interpreter, and the line that says so.
ON_ASCEND = {"promote": "{'triton-ascend': 'ok'}", "narrowing": "{'triton-ascend': 'ok'}",
             "wrapper_boundary": "{'triton-ascend': 'ok'}", "random_statistics": "{'triton-ascend': 'ok'}",
             "wave_expansion": "triton-ascend: 10 dtypes bit-exact"}


@contextlib.contextmanager
def cpu_burner():
    """A busy loop in another process for as long as the block runs."""
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield burner
    finally:
        burner.kill()
        burner.wait()


def _streams(ipynb) -> str:
    nb = nbformat.read(ipynb, as_version=4)
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))


def _first_output(ipynb) -> str:
    """The notebook's very first output, whatever its kind (a stream's text, else its kind)."""
    nb = nbformat.read(ipynb, as_version=4)
    first = next(o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    return first.get("text", "") if first.get("output_type") == "stream" else first.get("output_type", "")


def test_there_are_notebooks():
    assert SOURCES, "notebooks/ has no notebook sources"


def test_a_notebook_that_times_runs_under_load():
    """The loaded run is not vacuous: at least one notebook times something (wrapper_boundary)."""
    assert any(TIMES in s.read_text(encoding="utf-8") for s in SOURCES)


@pytest.mark.notebook
@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_notebook_executes(source, tmp_path, capfd):
    present = backends.available()
    text = source.read_text(encoding="utf-8")
    if TIMES in text:
        with cpu_burner() as burner:
            result = run(source, tmp_path, present, html=False)
            assert burner.poll() is None, "the competing process ended before the notebook did"
    else:
        result = run(source, tmp_path, present, html=False)
    assert result.error is None, f"{source.name}: {result.error}"
    first = _first_output(result.ipynb).splitlines()[0]
    assert first.startswith("backends: "), f"{source.name}: its first output is not the backends line: {first}"
    if "announce(backends.KNOWN)" in text:
        ran = first.removeprefix("backends: ").split(", ")
        assert "cpu" in ran and "triton" in ran, f"{source.name} ran its Triton kernels on {ran} only"
    ascend = tmp_path / f"{source.stem}.triton-ascend.ipynb"
    if source.stem in ON_ASCEND and "triton-ascend" in present:
        streams, opening = _streams(ascend), _first_output(ascend)
        assert opening.splitlines()[0] == "backends: triton-ascend", opening
        assert ON_ASCEND[source.stem] in streams, f"{source.name}: its kernel check did not pass on triton-ascend"
    terminal = capfd.readouterr()
    for noise in NOISE:
        assert noise not in terminal.err + terminal.out, f"{source.name}: {noise!r} reached the terminal"
        assert noise not in _streams(result.ipynb), f"{source.name}: {noise!r} is in the executed notebook"


def test_notebooks_cuda_backend():
    """Say in the summary when the notebooks could not run their CUDA cells here."""
    if "cuda" not in backends.available():
        pytest.skip("no CUDA device: the notebooks ran on cpu and the Triton interpreter only")
    assert backends.passes(backends.available())[-1] == ["cuda"]
