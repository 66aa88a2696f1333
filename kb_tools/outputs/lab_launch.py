"""``make lab``: JupyterLab started the way this repository needs it, in one place, so that the
Makefile and the browser test (tests/lab_server.py) start the same server.

What it sets: the repository as the server's root (a notebook's ``../kb/*.md`` links open), the
start in notebooks/, :mod:`kb_tools.outputs.lab_contents` as the contents manager (a review
``.py`` is served as a notebook, a plain module as a file), the frontend extension in
``labextensions/`` beside this module (a ``.py`` opens in the view the server serves it as: a
review in jupytext's notebook view, kb_tools/cli.py in the editor; its source is labextension/
at the repository's top, ``make lab-extension`` rebuilds it), and two JupyterLab settings written
as ``overrides.json`` into the application settings folder: the python3 kernel started without
the Select Kernel dialog, and no "receive official Jupyter news?" question (nor a news request). Kernels talk over encrypted sockets and the torch profiler stays quiet.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

SETTINGS = {"@jupyterlab/notebook-extension:tracker": {"autoStartDefaultKernel": True},
            "@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}
EXTENSIONS = Path(__file__).resolve().parent / "labextensions"  # built, committed: make lab needs no node


def default_settings_dir() -> Path:
    """JupyterLab's own application settings folder for this environment."""
    return Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings"


def write_settings(settings_dir: Path) -> Path:
    settings_dir = Path(settings_dir)
    settings_dir.mkdir(parents=True, exist_ok=True)
    path = settings_dir / "overrides.json"
    path.write_text(json.dumps(SETTINGS, indent=2) + "\n", encoding="utf-8")
    return path


def lab_argv(root: Path, settings_dir: Path, extra: list[str] = ()) -> list[str]:
    """The command line that starts JupyterLab over ``root`` with the settings in ``settings_dir``."""
    argv = [sys.executable, "-m", "jupyterlab"]
    if hasattr(os, "getuid") and os.getuid() == 0:
        argv.append("--allow-root")
    return argv + [f"--ServerApp.root_dir={Path(root).resolve()}", "--LabApp.default_url=/lab/tree/notebooks",
                   f"--LabApp.app_settings_dir={Path(settings_dir).resolve()}",
                   f"--LabApp.extra_labextensions_path={EXTENSIONS}",
                   "--ServerApp.contents_manager_class=kb_tools.outputs.lab_contents.ScriptNotebooksContentsManager",
                   "--KernelManager.transport_encryption=auto", *extra]


def lab_env() -> dict:
    """This process's environment, the torch profiler's notices silenced unless asked for."""
    return {"KINETO_LOG_LEVEL": "6", **os.environ}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m kb_tools.outputs.lab_launch",
                                     description="start JupyterLab as make lab configures it; other options go to jupyter lab")
    parser.add_argument("--root", type=Path, default=Path.cwd(), help="the server's root (default: here)")
    parser.add_argument("--settings-dir", type=Path, default=default_settings_dir(),
                        help="where overrides.json is written (default: this environment's JupyterLab settings)")
    args, extra = parser.parse_known_args(argv)
    write_settings(args.settings_dir)
    command = lab_argv(args.root, args.settings_dir, extra)
    print(" ".join(command), flush=True)
    os.execve(command[0], command, lab_env())  # the server replaces this process


if __name__ == "__main__":
    main()
