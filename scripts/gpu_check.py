"""`make gpu-check`: every CUDA path of the project run once, all results in one folder.

Steps, each writing its log (and JSON where it has numbers) under the output folder
(default ``build/gpu-check/``):

1. ``environment``  — torch / CUDA / Triton / numba versions and the device, so each figure
   names the machine it came from;
2. ``cuda-tests``   — the tests whose name or parameters mention CUDA (``pytest -k cuda``);
3. ``notebooks``    — ``kbt notebooks --backend cpu,triton,cuda``, every notebook (the rule
   notebooks with Triton kernels included: their kernels compiled for the device in a second
   pass beside the interpreter's), the executed notebooks kept;
4. ``bench-cuda``   — ``benchmarks/bench_expand.py --device cuda``: the per-wave Triton
   expansion against a device-to-device copy of the same bytes (mark: 70 % of its bandwidth);
5. ``bench-cpu``    — the same benchmark on the CPU against a hot ``fill_``;
6. ``compare-cuda`` — ``benchmarks/bench_compare.py --device cuda``: the TTK criteria
   (mix_tolerance, stat_rel_err, cross_check, and with every leg's metrics) on device-resident
   tensors, against a device-to-device copy of the same bytes (aims: 2.5x, 2.5x, 3x).

Without a CUDA device the CUDA-only steps are skipped with the reason and the rest runs on
the CPU (the notebooks with ``--backend cpu,triton``), so the check runs as far as a CPU allows. The
summary (``summary.md``, ``summary.json``) lists each step as ran, skipped or failed; the exit
status is 1 when a step failed, 2 for unusable arguments, else 0.

    .venv/bin/python scripts/gpu_check.py [-o build/gpu-check] [--steps a,b] [--repeats N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("environment", "cuda-tests", "notebooks", "bench-cuda", "bench-cpu", "compare-cuda")


@dataclass
class Step:
    name: str
    status: str  # ran | skipped | failed
    detail: str
    files: list[str]
    seconds: float = 0.0


def cuda_state() -> tuple[bool, str]:
    """(usable, why not) — why names a CPU-only torch build apart from a missing device."""
    import torch

    if torch.cuda.is_available():
        return True, ""
    if torch.version.cuda is None:
        return False, f"torch {torch.__version__} is a CPU-only build (install a CUDA build of torch to run the GPU half)"
    return False, f"torch {torch.__version__} (CUDA {torch.version.cuda}) sees no CUDA device"


def versions() -> dict:
    import numpy
    import torch

    found = {"python": sys.version.split()[0], "torch": torch.__version__, "torch_cuda": torch.version.cuda,
             "numpy": numpy.__version__, "cpu_threads": torch.get_num_threads()}
    for name in ("triton", "numba"):
        try:
            found[name] = __import__(name).__version__
        except ImportError:
            found[name] = None
    if torch.cuda.is_available():
        found["device"] = torch.cuda.get_device_name()
        found["device_capability"] = ".".join(map(str, torch.cuda.get_device_capability()))
    return found


def run_logged(name: str, command: list[str], out_dir: Path, files: list[str], flag: str | None = None) -> Step:
    """Run one command with stdout+stderr in ``<name>.log``; failed when it exits non-zero.
    The detail is the log's last line, after every line that contains ``flag``."""
    log = out_dir / f"{name}.log"
    start = time.monotonic()
    with open(log, "w", encoding="utf-8") as fh:
        fh.write("$ " + " ".join(command) + "\n")
        fh.flush()
        rc = subprocess.call(command, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT)
    seconds = time.monotonic() - start
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    flagged = [line for line in lines if flag and flag in line]
    detail = "; ".join(flagged + lines[-1:])
    status = "ran" if rc == 0 else "failed"
    return Step(name, status, (f"exit {rc}: " if rc else "") + detail, [log.name, *files], round(seconds, 1))


def step_environment(out_dir: Path, cuda: bool, why: str, args) -> Step:
    found = versions()
    found["cuda_usable"] = cuda
    found["cuda_skip_reason"] = why or None
    (out_dir / "environment.json").write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    where = found.get("device", "no CUDA device")
    return Step("environment", "ran", f"torch {found['torch']}, {where}", ["environment.json"])


def step_cuda_tests(out_dir: Path, cuda: bool, why: str, args) -> Step:
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs", "-k", "cuda",
               f"--junitxml={out_dir / 'cuda-tests.xml'}", "tests"]
    step = run_logged("cuda-tests", command, out_dir, ["cuda-tests.xml"])
    if not cuda and step.status == "ran":
        step.status, step.detail = "skipped", f"every CUDA test skipped: {why} ({step.detail})"
    return step


def step_notebooks(out_dir: Path, cuda: bool, why: str, args) -> Step:
    from kb_tools.outputs.notebook_runner import notebook_sources

    backend = "cpu,triton,cuda" if cuda else "cpu,triton"
    command = [sys.executable, "-m", "kb_tools", "notebooks", "--backend", backend,
               "-o", str(out_dir / "notebooks"), *args.notebooks]
    step = run_logged("notebooks", command, out_dir, ["notebooks/"], flag="NB001")
    names = args.notebooks or [s.stem for s in notebook_sources(ROOT)]
    step.detail = f"{len(names)} notebooks ({', '.join(names)}); {step.detail}"
    if not cuda and step.status == "ran":
        step.detail = f"cpu and the Triton interpreter only, CUDA cells skipped: {why}; {step.detail}"
    return step


def step_bench(device: str):
    def bench(out_dir: Path, cuda: bool, why: str, args) -> Step:
        name = f"bench-{device}"
        if device == "cuda" and not cuda:
            return Step(name, "skipped", why, [])
        result = f"bench_expand_{device}.json"
        command = [sys.executable, "benchmarks/bench_expand.py", "--device", device, "--log2n", str(args.log2n),
                   "--repeats", str(args.repeats), "--memory-runs", str(args.memory_runs),
                   "--json", str(out_dir / result)]
        step = run_logged(name, command, out_dir, [result])
        if step.status == "ran":
            verdict = json.loads((out_dir / result).read_text(encoding="utf-8"))["verdict"]
            step.detail = "; ".join(verdict)
        return step
    return bench


def step_compare_cuda(out_dir: Path, cuda: bool, why: str, args) -> Step:
    """The criteria on the device, each as a multiple of a device-to-device copy of its inputs."""
    if not cuda:
        return Step("compare-cuda", "skipped", why, [])
    result = "bench_compare_cuda.json"
    sizes = ",".join(str(n) for n in sorted({min(24, args.log2n), args.log2n}))
    command = [sys.executable, "benchmarks/bench_compare.py", "--device", "cuda", "--log2n", sizes,
               "--rounds", str(args.repeats), "--memory-log2n", str(args.log2n), "--json", str(out_dir / result)]
    step = run_logged("compare-cuda", command, out_dir, [result])
    if step.status == "ran":
        rows = json.loads((out_dir / result).read_text(encoding="utf-8"))["rows"]
        step.detail = "; ".join(f"2^{r['log2n']} {r['contender']} {r['ratio_wall']:.2f}x copy (aim {r['aim']:g})"
                                for r in rows if r["aim"])
    return step


RUNNERS = {"environment": step_environment, "cuda-tests": step_cuda_tests, "notebooks": step_notebooks,
           "bench-cuda": step_bench("cuda"), "bench-cpu": step_bench("cpu"), "compare-cuda": step_compare_cuda}


def write_summary(out_dir: Path, steps: list[Step], cuda: bool, why: str) -> None:
    if cuda:
        import torch

        head = f"GPU check on {torch.cuda.get_device_name()}"
    else:
        head = f"GPU check without a GPU: {why}; the GPU half awaits a GPU"
    lines = [f"# {head}", "", "| step | status | seconds | detail | files |", "|---|---|---|---|---|"]
    for s in steps:
        lines.append(f"| {s.name} | {s.status} | {s.seconds} | {s.detail.replace('|', '/')} | {', '.join(s.files)} |")
    (out_dir / "summary.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out_dir / "summary.json").write_text(json.dumps({"cuda": cuda, "cuda_skip_reason": why or None,
                                                      "steps": [asdict(s) for s in steps]}, indent=1) + "\n",
                                          encoding="utf-8")


def parse(argv):
    parser = argparse.ArgumentParser(prog="gpu_check", description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default="build/gpu-check", metavar="DIR")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated subset of {', '.join(STEPS)}")
    parser.add_argument("--notebooks", nargs="*", default=[], metavar="NAME", help="only these notebooks (default all)")
    parser.add_argument("--log2n", type=int, default=26, help="benchmark size, 2^N elements (default 26)")
    parser.add_argument("--repeats", type=int, default=5, help="benchmark repeats (default 5)")
    parser.add_argument("--memory-runs", type=int, default=2, help="fresh processes per peak-memory figure (default 2)")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse(argv)
    steps = [s.strip() for s in args.steps.split(",") if s.strip()]
    unknown = [s for s in steps if s not in STEPS]
    if unknown:
        print(f"gpu_check: unknown step {', '.join(unknown)} (known: {', '.join(STEPS)})", file=sys.stderr)
        return 2
    out_dir = Path(args.output)
    if out_dir.exists() and not out_dir.is_dir():
        print(f"gpu_check: {out_dir}: exists and is not a folder", file=sys.stderr)
        return 2
    out_dir.mkdir(parents=True, exist_ok=True)
    out_dir = out_dir.resolve()
    cuda, why = cuda_state()
    if not cuda:
        print(f"gpu_check: {why}: the CUDA steps are skipped, the rest runs on the CPU")
    results = []
    for name in steps:
        print(f"gpu_check: {name} ...", flush=True)
        results.append(RUNNERS[name](out_dir, cuda, why, args))
        print(f"gpu_check: {name}: {results[-1].status}: {results[-1].detail}", flush=True)
    write_summary(out_dir, results, cuda, why)
    print(f"gpu_check: summary in {out_dir / 'summary.md'}")
    return 1 if any(s.status == "failed" for s in results) else 0


if __name__ == "__main__":
    sys.exit(main())
