"""Which devices this machine offers, so notebooks and tests run the same code on each.

The notebook runner passes the chosen backends to the kernels through one environment
variable, ``KBT_BACKENDS`` (comma-separated), which a notebook reads once at its top.
"""

from __future__ import annotations

import importlib.util
import os
import platform

ENV_VAR = "KBT_BACKENDS"
KNOWN = ("cpu", "cuda", "npu")


def available() -> list[str]:
    """cpu always; cuda when torch sees a CUDA device; npu when torch_npu imports."""
    found = ["cpu"]
    try:
        import torch
    except ImportError:
        return found
    if torch.cuda.is_available():
        found.append("cuda")
    if importlib.util.find_spec("torch_npu") is not None:
        try:
            import torch_npu  # noqa: F401

            if torch.npu.is_available():
                found.append("npu")
        except Exception:  # a broken torch_npu install means no npu, not a crash
            pass
    return found


def selected() -> tuple[list[str], list[str]]:
    """(backends to run, reasons for the ones skipped): $KBT_BACKENDS intersected with
    what is available. Each skip comes with a printed reason, never silently."""
    present = available()
    wanted = [b.strip() for b in os.environ.get(ENV_VAR, ",".join(present)).split(",") if b.strip()]
    run = [b for b in wanted if b in present]
    skipped = [f"{b}: not available on this machine" for b in wanted if b not in present]
    skipped += [f"{b}: not requested ({ENV_VAR}={os.environ[ENV_VAR]})" for b in present if b not in wanted and ENV_VAR in os.environ]
    return run or ["cpu"], skipped


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def describe(backend: str) -> str:
    """The device behind a backend, named so that a printed figure says where it was made."""
    import torch

    if backend == "cuda":
        return f"cuda = {torch.cuda.get_device_name()} (CUDA {torch.version.cuda}, torch {torch.__version__})"
    if backend == "cpu":
        return f"cpu = {_cpu_model()}, {torch.get_num_threads()} torch threads (torch {torch.__version__})"
    return f"{backend} = {backend} device"


def describe_backends(run: list[str], skipped: list[str]) -> str:
    """The lines a notebook prints first: the backends it ran on and the devices behind them,
    then each backend skipped and why."""
    lines = [f"backends: {', '.join(run)}"] + [f"  {describe(b)}" for b in run]
    return "\n".join(lines + [f"skipped backend {reason}" for reason in skipped])


def announce() -> list[str]:
    """Select the backends, print which run on which device and which are skipped and why."""
    run, skipped = selected()
    print(describe_backends(run, skipped))
    return run
