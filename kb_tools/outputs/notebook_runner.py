"""Execute the jupytext percent-format notebooks one at a time and write .ipynb and HTML.

jupytext reads the source, nbclient runs it on the ``python3`` kernel with a per-cell
timeout, nbconvert renders HTML. A failing cell is reported by notebook and cell number.

The kernel talks to us over CurveZMQ-encrypted sockets when its kernelspec supports it (it
otherwise warns on every start that it runs "over TCP without encryption"), and the PyTorch
profiler's own log lines (``USDT:``/``STAGE:`` on the kernel's stderr) are switched off in its
environment, so neither reaches the terminal nor the executed notebook.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kb_tools.runtime import backends as backend_sets

CELL_TIMEOUT_S = 300
# Kineto logs at levels 0 (verbose) to 5 (USDT markers) and prints them unconditionally to
# stderr; a level above all of them keeps it quiet. A value the user already set wins.
QUIET_PROFILER = {"KINETO_LOG_LEVEL": "6"}


@dataclass
class NotebookResult:
    source: Path
    ipynb: Path | None
    html: Path | None
    error: str | None  # "cell N: <what happened>" when a cell failed
    refused: str | None = None  # "triton-ascend: cell N: <why>" when that interpreter refused a kernel


def notebook_sources(root: Path) -> list[Path]:
    return sorted(p for p in (Path(root) / "notebooks").glob("*.py") if not p.name.startswith("_"))


def _failing_cell(nb) -> int | None:
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return index + 1
    return None


def kernel_env(backends: list[str] | None) -> dict[str, str]:
    """The kernel's environment: ours, the chosen backends (and Triton's interpreter switched on
    exactly when ``triton`` is among them), a quiet profiler."""
    env = {**QUIET_PROFILER, **os.environ}
    if backends:
        env.update(backend_sets.pass_env(backends))
    return env


def run(source: Path, out_dir: Path, backends: list[str], timeout: int = CELL_TIMEOUT_S,
        html: bool = True) -> NotebookResult:
    """Run one notebook on ``backends``, one kernel per pass (:func:`backend_sets.passes`): the
    first pass writes ``<stem>.ipynb``, a device pass after the interpreter's ``<stem>.<device>.ipynb``.
    A failure names the cell and the backend it fails on: a pass of several backends that fails
    is rerun on each alone (outputs discarded) to find which."""
    first = None
    for number, group in enumerate(backend_sets.passes(backends)):
        suffix = "" if number == 0 else "." + "-".join(group)
        result = execute(source, out_dir, group, timeout=timeout, html=html, suffix=suffix)
        if result.error and group == ["triton-ascend"] and ": InterpreterError" in result.error:
            # the interpreter refused a kernel: a finding about triton-ascend, not a failed check
            refused, result.error = f"triton-ascend refused a kernel, {result.error}", None
            if first:
                first.refused = refused
            continue
        if result.error:
            result.error = _which_backend(source, group, result.error, timeout)
        first = first or result
        if result.error and not first.error:
            first.error = result.error
    return first


def _which_backend(source: Path, group: list[str], error: str, timeout: int) -> str:
    if len(group) == 1:
        return f"{error} [backend {group[0]}]"
    import tempfile

    failing = []
    with tempfile.TemporaryDirectory(prefix="kbt-notebook-") as scratch:
        for backend in group:
            alone = execute(source, Path(scratch), [backend], timeout=timeout, html=False)
            if alone.error:
                failing.append(f"{backend} ({alone.error.split(':', 1)[0]})")
    where = ", ".join(failing) if failing else f"none alone, only {' + '.join(group)} together"
    return f"{error} [backends {', '.join(group)}; failing alone: {where}]"


def _ascend_kernel_manager():
    """A kernel manager whose kernel runs on the triton-ascend environment's python (its own
    ``triton``; torch and the rest come from the main environment through a .pth file)."""
    from jupyter_client.manager import KernelManager

    class AscendKernelManager(KernelManager):
        def format_kernel_cmd(self, extra_arguments=None):
            cmd = super().format_kernel_cmd(extra_arguments)
            return [backend_sets.ascend_python(), *cmd[1:]]

    return AscendKernelManager


def execute(source: Path, out_dir: Path, backends: list[str] | None = None,
            timeout: int = CELL_TIMEOUT_S, html: bool = True, suffix: str = "") -> NotebookResult:
    """Run one notebook in one kernel; the executed notebook is written even when a cell fails."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    from traitlets.config import Config

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    error = None
    config = Config({"KernelManager": {"transport_encryption": "auto"}})
    extra = {"kernel_manager_class": _ascend_kernel_manager()} if backends and "triton-ascend" in backends else {}
    client = NotebookClient(nb, config=config, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(Path(source).parent)}}, **extra)
    try:
        client.execute(env=kernel_env(backends))
    except CellTimeoutError:
        error = f"cell {_failing_cell(nb) or '?'}: timed out after {timeout} s"
    except CellExecutionError as exc:
        cell = _failing_cell(nb)
        if getattr(exc, "ename", None):
            summary = f"{exc.ename}: {exc.evalue}" if exc.evalue else f"{exc.ename} (the assert gives no message)"
        else:
            summary = str(exc).strip().splitlines()[-1]
        error = f"cell {cell or '?'}: {summary}"
    except DeadKernelError as exc:
        error = f"kernel died: {exc}"
    ipynb = out_dir / f"{Path(source).stem}{suffix}.ipynb"
    nbformat.write(nb, ipynb)
    html_path = None
    if html:
        from nbconvert import HTMLExporter

        body, _ = HTMLExporter().from_notebook_node(nb)
        html_path = out_dir / f"{Path(source).stem}{suffix}.html"
        html_path.write_text(body, encoding="utf-8")
    return NotebookResult(Path(source), ipynb, html_path, error)
