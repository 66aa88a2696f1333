"""`make gpu-check` (scripts/gpu_check.py) and `kbt notebooks --backend cuda`: without a CUDA
device the CUDA parts skip with their reason and every result lands under the output folder;
unusable arguments get one line and exit 2."""

import json
import subprocess
import sys

import pytest
import torch

from conftest import REPO

SCRIPT = REPO / "scripts" / "gpu_check.py"


def gpu_check(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_environment_and_device_benchmark_write_under_the_output(tmp_path):
    out = tmp_path / "gpu-check"
    result = gpu_check("-o", str(out), "--steps", "environment,bench-cuda", "--log2n", "16", "--repeats", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads((out / "summary.json").read_text())
    steps = {s["name"]: s for s in summary["steps"]}
    environment = json.loads((out / "environment.json").read_text())
    assert environment["torch"] == torch.__version__
    assert summary["cuda"] == torch.cuda.is_available() == environment["cuda_usable"]
    if torch.cuda.is_available():
        assert steps["bench-cuda"]["status"] == "ran"
        rows = json.loads((out / "bench_expand_cuda.json").read_text())["rows"]
        assert {r["dtype"] for r in rows} == {"float16", "float32", "int64"}
    else:
        assert steps["bench-cuda"]["status"] == "skipped"
        assert "CUDA" in steps["bench-cuda"]["detail"] or "cuda" in steps["bench-cuda"]["detail"]
        assert "the GPU half awaits a GPU" in (out / "summary.md").read_text()
        assert not (out / "bench_expand_cuda.json").exists()


def test_cpu_benchmark_step_reports_the_ratio(tmp_path):
    out = tmp_path / "gc"
    result = gpu_check("-o", str(out), "--steps", "bench-cpu", "--log2n", "14", "--repeats", "1", "--memory-runs", "0")
    assert result.returncode == 0, result.stdout + result.stderr
    step = json.loads((out / "summary.json").read_text())["steps"][0]
    assert step["status"] == "ran" and "x hot fill_" in step["detail"]
    bench = json.loads((out / "bench_expand_cpu.json").read_text())
    compiled = [r for r in bench["rows"] if "compiled" in r["route"]]
    assert len(compiled) == 6 and all(r["ratio_to_floor"] > 0 for r in compiled)
    assert (out / "bench-cpu.log").read_text().startswith("$ ")


def test_output_that_is_a_file_and_unknown_step_exit_2(tmp_path):
    occupied = tmp_path / "taken"
    occupied.write_text("mine")
    result = gpu_check("-o", str(occupied), "--steps", "environment")
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1
    assert "not a folder" in result.stderr and occupied.read_text() == "mine"
    result = gpu_check("-o", str(tmp_path / "x"), "--steps", "environment,warp-drive")
    assert result.returncode == 2 and "unknown step warp-drive" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is present")
def test_notebooks_on_an_absent_backend_is_one_line_exit_2(tmp_path):
    from kb_tools.runtime import backends

    result = subprocess.run([sys.executable, "-m", "kb_tools", "notebooks", "--backend", "cpu,cuda",
                             "-o", str(tmp_path / "nb")], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"kbt notebooks: --backend cuda: torch sees no CUDA device (available: {', '.join(backends.available())})"]
    assert not (tmp_path / "nb").exists()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_bench_expand_cuda_runs_on_a_device(tmp_path):
    result = subprocess.run([sys.executable, "benchmarks/bench_expand.py", "--device", "cuda", "--log2n", "16",
                             "--repeats", "1", "--memory-runs", "0", "--json", str(tmp_path / "b.json")],
                            cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    rows = json.loads((tmp_path / "b.json").read_text())["rows"]
    assert all(r["bandwidth_share"] > 0 for r in rows if "bandwidth_share" in r)


def test_backend_line_names_the_device_of_each_figure(capsys, monkeypatch):
    from kb_tools.runtime import backends

    monkeypatch.setenv(backends.ENV_VAR, "cpu,cuda")
    run = backends.announce()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"backends: {', '.join(run)}"
    assert lines[1].startswith("  cpu = ") and f"{torch.get_num_threads()} torch threads" in lines[1]
    if "cuda" in run:
        assert lines[2] == f"  cuda = {torch.cuda.get_device_name()} (CUDA {torch.version.cuda}, torch {torch.__version__})"
    else:
        assert lines[2] == "skipped backend cuda: not available on this machine (torch sees no CUDA device)"
        named = [line.split(":", 1)[0].removeprefix("skipped backend ") for line in lines[3:]]
        assert sorted(named) == sorted(b for b in backends.KNOWN if b not in ("cpu", "cuda"))


def test_notebooks_step_runs_the_rule_notebooks_on_the_interpreter(tmp_path):
    """The notebooks step covers every notebook (the rule notebooks with Triton kernels too) on
    cpu and the interpreter, and says visibly when the CUDA pass is skipped; one notebook here."""
    out = tmp_path / "gc"
    result = gpu_check("-o", str(out), "--steps", "notebooks", "--notebooks", "verification_rules")
    assert result.returncode == 0, result.stdout + result.stderr
    step = json.loads((out / "summary.json").read_text())["steps"][0]
    assert step["status"] == "ran" and "1 notebooks (verification_rules)" in step["detail"]
    log = (out / "notebooks.log").read_text()
    assert "--backend cpu,triton" in log.splitlines()[0]
    assert (out / "notebooks" / "verification_rules.ipynb").is_file()
    if not torch.cuda.is_available():
        assert "cpu and the Triton interpreter only, CUDA cells skipped" in step["detail"]
        assert "skipped" in result.stdout or "CUDA" in result.stdout
