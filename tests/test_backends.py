"""The backends: cpu, triton (Triton's interpreter on the CPU), cuda, npu. Asking for one this
machine lacks is one line and exit 2; the interpreter and the devices run in separate passes;
a notebook that fails on one backend is reported with the notebook, the cell and the backend."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kb_tools.outputs.notebook_runner import run as run_notebook
from kb_tools.runtime import backends

from conftest import REPO


def kbt(*args, env=None):
    return subprocess.run([sys.executable, "-m", "kb_tools", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=env)


def test_the_interpreter_is_a_backend_here():
    assert backends.available()[:2] == ["cpu", "triton"], backends.missing("triton")


@pytest.mark.parametrize("backends_, expected", [
    (["cpu", "triton"], [["cpu", "triton"]]),
    (["cpu", "triton", "cuda"], [["cpu", "triton"], ["cuda"]]),
    (["triton", "npu"], [["triton"], ["npu"]]),
    (["cpu", "cuda"], [["cpu", "cuda"]]),
    (["cuda"], [["cuda"]]),
])
def test_interpreter_and_devices_run_in_separate_passes(backends_, expected):
    assert backends.passes(backends_) == expected
    for group in expected:
        assert backends.pass_env(group)[backends.INTERPRET_VAR] == ("1" if "triton" in group else "0")


def test_npu_without_torch_npu_is_one_line_exit_2(tmp_path):
    if backends.missing("npu") is None:
        pytest.skip("torch_npu and an NPU are present")
    result = kbt("notebooks", "--backend", "cpu,npu", "-o", str(tmp_path / "nb"))
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"kbt notebooks: --backend npu: {backends.missing('npu')} (available: {', '.join(backends.available())})"]
    assert not (tmp_path / "nb").exists()


def test_triton_that_does_not_import_is_one_line_exit_2(tmp_path):
    broken = tmp_path / "site" / "triton"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('libtriton.so: cannot open shared object file')\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path / "site"),
           backends.ASCEND_PYTHON_VAR: str(tmp_path / "no-ascend-env" / "python")}
    result = kbt("notebooks", "--backend", "triton", "-o", str(tmp_path / "nb"), env=env)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith("kbt notebooks: --backend triton: triton does not import (ImportError: libtriton.so")
    assert lines[0].endswith("(available: cpu)")


def test_launch_refuses_a_backend_that_runs_no_triton_kernel():
    with pytest.raises(backends.BackendError, match="'cpu' does not run Triton kernels"):
        backends.launch(object(), (1,), backend="cpu")


def test_launch_on_the_interpreter_needs_an_interpreting_process(monkeypatch):
    monkeypatch.delenv(backends.INTERPRET_VAR, raising=False)
    with pytest.raises(backends.BackendError, match="TRITON_INTERPRET is not 1"):
        backends.launch(object(), (1,), backend="triton")


def test_a_failing_notebook_names_the_cell_and_the_backend(tmp_path):
    source = tmp_path / "fails_on_triton.py"
    source.write_text(
        "# %%\nfrom kb_tools.runtime import backends\nBACKENDS = backends.announce(backends.KNOWN)\n"
        "# %%\nfor backend in BACKENDS:\n    assert backend != 'triton', f'planted failure on {backend}'\n")
    result = run_notebook(source, tmp_path / "out", ["cpu", "triton"], html=False)
    assert result.error.startswith("cell 2: AssertionError: planted failure on triton"), result.error
    assert result.error.endswith("[backends cpu, triton; failing alone: triton (cell 2)]")
    assert (tmp_path / "out" / "fails_on_triton.ipynb").is_file()


def test_a_refused_kernel_is_one_failed_line_and_the_others_still_run(capsys):
    ran = []

    def check(backend):
        ran.append(backend)
        if backend == "cuda":
            raise backends.BackendError("launch: backend cuda: refused\nsecond line")

    outcome = backends.each_kernel_backend(["cpu", "cuda", "triton"], check)
    assert ran == ["cuda", "triton"]
    assert outcome == {"cuda": "failed: BackendError: launch: backend cuda: refused", "triton": "ok"}
    assert capsys.readouterr().out == "cuda: failed (BackendError: launch: backend cuda: refused)\n"


def test_a_failed_check_or_a_bug_in_it_is_not_a_refused_kernel():
    def wrong(backend):
        assert backend == "cpu", "the check itself failed"

    with pytest.raises(AssertionError, match="the check itself failed"):
        backends.each_kernel_backend(["triton"], wrong)
    with pytest.raises(TypeError):
        backends.each_kernel_backend(["triton"], lambda backend: len(3))


def test_kernel_and_torch_paths_split_the_backends_run():
    run = ["cpu", "triton", "cuda"]
    assert backends.kernel_backends(run) == ["triton", "cuda"]
    assert backends.torch_paths(run) == ["cpu", "cuda"]
    assert backends.torch_paths(["triton"]) == ["cpu"]


def test_triton_ascend_runs_in_a_pass_of_its_own():
    assert backends.passes(["cpu", "triton", "triton-ascend"]) == [["cpu", "triton"], ["triton-ascend"]]
    assert backends.pass_env(["triton-ascend"])[backends.INTERPRET_VAR] == "1"


def test_no_ascend_environment_is_one_reason(monkeypatch, tmp_path):
    monkeypatch.setenv(backends.ASCEND_PYTHON_VAR, str(tmp_path / "missing" / "python"))
    assert not backends.ascend_triton_here()  # this process's triton is Triton's
    assert backends.missing("triton-ascend").startswith("no triton-ascend environment (")
