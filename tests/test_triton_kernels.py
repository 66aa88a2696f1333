"""Every Triton kernel in kb_tools runs on the triton backend (Triton's interpreter on the CPU)
and is compared with its CPU path: one interpreting subprocess runs tests/triton_cases.py, each
case is reported here by name, and a kernel that no case launches fails the coverage test.
triton is a dependency of the project: its absence fails, it is never skipped."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

import pytest

import triton_cases
from conftest import REPO

# its module fixture is costly: every test of the module on one worker (make test: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("triton-cases")


@pytest.fixture(scope="module")
def run():
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    result = subprocess.run([sys.executable, str(REPO / "tests" / "triton_cases.py")], cwd=REPO, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", sorted(triton_cases.CASES))
def test_kernel_matches_its_cpu_path_on_the_interpreter(case, run):
    assert run["results"][case] is None, f"{case}: {triton_cases.CASES[case].__doc__}\n{run['results'][case]}"


def _jit_definitions(*folders: str) -> dict[str, list[str]]:
    """Name -> the files defining it, for every @triton.jit function under ``folders`` that is
    launched (not a ``_helper``)."""
    found: dict[str, list[str]] = {}
    for folder in folders:
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") and any(
                        ast.unparse(d) in ("triton.jit", "jit") for d in node.decorator_list):
                    found.setdefault(node.name, []).append(str(path.relative_to(REPO)))
    return found


def _jit_kernels() -> dict[str, str]:
    """Name -> file of every launched @triton.jit function in kb_tools."""
    return {name: files[0] for name, files in _jit_definitions("kb_tools").items()}


def test_each_kernel_has_one_home():
    """No kernel name of kb_tools or of a notebook is defined twice: a notebook, a test or a
    page's demonstration imports the one definition, so no copy drifts from it."""
    twice = {name: files for name, files in _jit_definitions("kb_tools", "notebooks").items() if len(files) > 1}
    assert not twice, f"defined more than once: {twice}"


def test_every_kernel_is_launched_by_a_case(run):
    kernels = _jit_kernels()
    assert len(kernels) >= 15, kernels
    missing = {name: where for name, where in kernels.items() if name not in run["launched"]}
    assert not missing, f"no case in tests/triton_cases.py launches {missing}"
