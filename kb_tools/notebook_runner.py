"""Execute the jupytext percent-format notebooks one at a time and write .ipynb and HTML.

jupytext reads the source, nbclient runs it on the ``python3`` kernel with a per-cell
timeout, nbconvert renders HTML. A failing cell is reported by notebook and cell number.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from kb_tools.backends import ENV_VAR

CELL_TIMEOUT_S = 300


@dataclass
class NotebookResult:
    source: Path
    ipynb: Path | None
    html: Path | None
    error: str | None  # "cell N: <what happened>" when a cell failed


def notebook_sources(root: Path) -> list[Path]:
    return sorted(p for p in (Path(root) / "notebooks").glob("*.py") if not p.name.startswith("_"))


def _failing_cell(nb) -> int | None:
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return index + 1
    return None


def execute(source: Path, out_dir: Path, backends: list[str] | None = None,
            timeout: int = CELL_TIMEOUT_S, html: bool = True) -> NotebookResult:
    """Run one notebook; the executed notebook is written even when a cell fails."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    nb = jupytext.read(source)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    env_backup = os.environ.get(ENV_VAR)
    if backends:
        os.environ[ENV_VAR] = ",".join(backends)
    error = None
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(Path(source).parent)}})
    try:
        client.execute()
    except CellTimeoutError:
        error = f"cell {_failing_cell(nb) or '?'}: timed out after {timeout} s"
    except CellExecutionError as exc:
        cell = _failing_cell(nb)
        summary = f"{exc.ename}: {exc.evalue}" if getattr(exc, "ename", None) else str(exc).strip().splitlines()[-1]
        error = f"cell {cell or '?'}: {summary}"
    except DeadKernelError as exc:
        error = f"kernel died: {exc}"
    finally:
        if backends:
            if env_backup is None:
                os.environ.pop(ENV_VAR, None)
            else:
                os.environ[ENV_VAR] = env_backup
    ipynb = out_dir / f"{Path(source).stem}.ipynb"
    nbformat.write(nb, ipynb)
    html_path = None
    if html:
        from nbconvert import HTMLExporter

        body, _ = HTMLExporter().from_notebook_node(nb)
        html_path = out_dir / f"{Path(source).stem}.html"
        html_path.write_text(body, encoding="utf-8")
    return NotebookResult(Path(source), ipynb, html_path, error)
