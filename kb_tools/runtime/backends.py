"""Which backends this machine offers, so notebooks and tests run the same code on each.

``cpu`` is torch on the CPU, the reference path of every kernel. ``triton`` runs the project's
Triton kernels on the CPU through Triton's interpreter (``TRITON_INTERPRET=1``): the same kernel
source that compiles for CUDA and, through triton-ascend, for an Ascend NPU. ``cuda`` and
``npu`` are the devices, with Triton kernels compiled for them. The interpreter is functional
evidence only: a figure timed on it says so and is never compared with a device.

The interpreter is a property of the process: triton reads ``TRITON_INTERPRET`` when it is
imported (its own ``tl.cdiv`` or ``tl.max`` are kernels too), so one process either interprets
every kernel or compiles every kernel. :func:`passes` splits the chosen backends into the
processes that can run them; the notebook runner starts one kernel per pass and passes each
its backends through ``KBT_BACKENDS`` (comma-separated), which a notebook reads once at its top.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import platform
from collections import Counter

ENV_VAR = "KBT_BACKENDS"
INTERPRET_VAR = "TRITON_INTERPRET"
KNOWN = ("cpu", "triton", "triton-ascend", "cuda", "npu")
KERNEL_BACKENDS = ("triton", "triton-ascend", "cuda", "npu")  # the backends that run Triton kernels
INTERPRETED = ("triton", "triton-ascend")  # Triton kernels on the CPU, through an interpreter
DEVICE = {"cpu": "cpu", "triton": "cpu", "triton-ascend": "cpu", "cuda": "cuda", "npu": "npu"}
# triton-ascend is also the ``triton`` package, so it lives in an environment of its own that
# shares this one's torch (make setup); its notebooks run in a kernel started from its python.
ASCEND_PYTHON_VAR = "KBT_ASCEND_PYTHON"


def ascend_python() -> str:
    """The python of the triton-ascend environment ($KBT_ASCEND_PYTHON, else the repository's
    .venv-ascend); it may not exist."""
    from pathlib import Path

    default = Path(__file__).resolve().parents[2] / ".venv-ascend" / "bin" / "python"
    return os.environ.get(ASCEND_PYTHON_VAR) or str(default)


@functools.cache
def ascend_triton_here() -> bool:
    """Whether this process's ``triton`` is triton-ascend (it carries an ascend backend)."""
    spec = importlib.util.find_spec("triton")
    return bool(spec and spec.origin) and os.path.isdir(os.path.join(os.path.dirname(spec.origin), "backends", "ascend"))

# Every launch through launch(), by kernel name: notebooks count launches instead of timing them.
launches: Counter = Counter()


class BackendError(RuntimeError):
    """A backend asked for is missing here, or a kernel was launched on the wrong one."""


@functools.cache
def _triton_missing() -> str | None:
    """Why triton cannot run here, or None."""
    if importlib.util.find_spec("triton") is None:
        return "triton is not installed (pip install 'opkb[science]'; Linux only)"
    try:
        import triton  # noqa: F401
    except Exception as exc:  # a broken install means no triton backend, not a crash
        return f"triton does not import ({type(exc).__name__}: {exc})"
    return None


@functools.cache
def _npu_missing() -> str | None:
    if importlib.util.find_spec("torch_npu") is None:
        return "torch_npu is not installed"
    try:
        import torch
        import torch_npu  # noqa: F401
    except Exception as exc:
        return f"torch_npu does not import ({type(exc).__name__}: {exc})"
    if not torch.npu.is_available():
        return "torch_npu imports but sees no NPU"
    return None


def missing(backend: str) -> str | None:
    """Why ``backend`` cannot run on this machine, or None when it can."""
    if backend not in KNOWN:
        return f"unknown backend (known: {', '.join(KNOWN)})"
    if backend == "cpu":
        return None
    if backend == "triton":
        return "this process's triton is triton-ascend" if ascend_triton_here() else _triton_missing()
    if backend == "triton-ascend":
        if ascend_triton_here() or os.access(ascend_python(), os.X_OK):
            return None
        return f"no triton-ascend environment ({ascend_python()} is missing; make setup creates it)"
    if backend == "npu":
        return _npu_missing()
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None


def available() -> list[str]:
    """cpu always; triton when it imports; cuda when torch sees a device; npu when torch_npu does."""
    return [b for b in KNOWN if missing(b) is None]


def interpreting() -> bool:
    """Whether this process runs Triton kernels in the interpreter."""
    return os.environ.get(INTERPRET_VAR, "0") not in ("", "0")


def passes(backends: list[str]) -> list[list[str]]:
    """The processes that run ``backends``: the interpreter (with cpu) in one, the devices in
    another, since one process cannot both interpret and compile Triton kernels."""
    ascend = [b for b in backends if b == "triton-ascend"]
    rest = [b for b in backends if b != "triton-ascend"]
    interpreted = [b for b in rest if b in ("cpu", "triton")]
    devices = [b for b in rest if b not in interpreted]
    if "triton" not in interpreted:
        return [group for group in (rest, ascend) if group]
    return [group for group in (interpreted, devices, ascend) if group]


def pass_env(backends: list[str]) -> dict[str, str]:
    """The environment entries of a process that runs ``backends`` (one of :func:`passes`)."""
    return {ENV_VAR: ",".join(backends), INTERPRET_VAR: "1" if set(INTERPRETED) & set(backends) else "0"}


def selected() -> tuple[list[str], list[str]]:
    """(backends to run, reasons for the ones skipped): $KBT_BACKENDS intersected with what
    is available and with what this process can run. Each skip comes with a printed reason."""
    present = available()
    wanted = [b.strip() for b in os.environ.get(ENV_VAR, ",".join(present)).split(",") if b.strip()]
    skipped = [f"{b}: not available on this machine ({missing(b)})" for b in wanted if b not in present]
    run = [b for b in wanted if b in present and runnable_here(b)]
    skipped += [f"{b}: {why_not_here(b)}" for b in wanted if b in present and not runnable_here(b)]
    others = [b for b in present if b not in wanted and ENV_VAR in os.environ]
    skipped += [f"{b}: {why_not_here(b)}" if not runnable_here(b) else f"{b}: not requested ({ENV_VAR}={os.environ[ENV_VAR]})"
                for b in others]
    skipped += [f"{b}: not available on this machine ({missing(b)})" for b in KNOWN if b not in present and b not in wanted]
    return run or ["cpu"], skipped


def runnable_here(backend: str) -> bool:
    """The interpreter needs TRITON_INTERPRET=1 in this process, a device needs it off."""
    if backend in INTERPRETED:
        return interpreting() and ascend_triton_here() == (backend == "triton-ascend")
    if backend in ("cuda", "npu"):
        return not interpreting()
    return True


def why_not_here(backend: str) -> str:
    if backend == "triton-ascend":
        if not os.path.exists(ascend_python()):
            return f"its environment {ascend_python()} does not exist (make ascend-env builds it)"
        return ("not in this pass: kbt notebooks runs it in a second pass from its own environment (its triton "
                "is another package), written beside this notebook as <stem>.triton-ascend.ipynb")
    if backend == "triton" and ascend_triton_here():
        return "this process's triton is triton-ascend; triton runs in the main environment's pass"
    if backend == "triton":
        return f"this process compiles Triton kernels ({INTERPRET_VAR} is not 1); it runs in its own pass"
    return f"this process interprets Triton kernels ({INTERPRET_VAR}=1); {backend} runs in its own pass"


def device(backend: str) -> str:
    """The torch device a backend's tensors live on (the interpreter's are CPU tensors)."""
    return DEVICE[backend]


def launch(kernel, grid, *args, backend: str, **meta):
    """Launch a ``@triton.jit`` kernel on ``backend`` (triton, cuda or npu) and count it.

    The kernel is written once; on ``triton`` it runs in the interpreter on CPU tensors, on
    ``cuda``/``npu`` compiled for the device. Refused with one line when the backend is not
    a Triton backend, or the process cannot run it (see :func:`passes`)."""
    if backend not in KERNEL_BACKENDS:
        raise BackendError(f"launch: {backend!r} does not run Triton kernels (one of {', '.join(KERNEL_BACKENDS)})")
    if not runnable_here(backend):
        raise BackendError(f"launch: backend {backend}: {why_not_here(backend)}")
    where = device(backend)
    for arg in args:
        if hasattr(arg, "device") and arg.device.type != where:
            raise BackendError(f"launch: backend {backend} takes {where} tensors, got one on {arg.device}")
    launches[getattr(kernel, "__name__", repr(kernel))] += 1
    return kernel[grid](*args, **meta)


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
    if backend == "triton-ascend":
        import triton

        return (f"triton-ascend = triton-ascend {triton.__version__} interpreter on the CPU ({INTERPRET_VAR}=1): "
                "functional evidence only, never timed")
    if backend == "triton":
        import triton

        return (f"triton = Triton {triton.__version__} interpreter on the CPU ({INTERPRET_VAR}=1): "
                "functional evidence only, never timed as a device")
    return f"{backend} = {torch.npu.get_device_name()} (torch_npu)" if backend == "npu" else f"{backend} device"


def describe_backends(run: list[str], skipped: list[str]) -> str:
    """The lines a notebook prints first: the backends it ran on and the devices behind them,
    then each backend skipped and why."""
    lines = [f"backends: {', '.join(run)}"] + [f"  {describe(b)}" for b in run]
    return "\n".join(lines + [f"skipped backend {reason}" for reason in skipped])


TORCH_PATHS = ("cpu", "cuda", "npu")  # what a notebook without Triton kernels can run on


def announce(paths=TORCH_PATHS) -> list[str]:
    """Select the backends among ``paths`` (those the notebook has code for), print which run on
    which device and which are skipped and why."""
    run, skipped = selected()
    skipped += [f"{b}: this notebook has no path for it (it runs no Triton kernel)" for b in run if b not in paths]
    run = [b for b in run if b in paths] or ["cpu"]
    print(describe_backends(run, skipped))
    return run


def kernel_backends(run: list[str]) -> list[str]:
    """The backends among ``run`` that run the notebook's Triton kernels."""
    return [b for b in run if b in KERNEL_BACKENDS]


def torch_paths(run: list[str]) -> list[str]:
    """The backends among ``run`` that run torch code (the golden, the references)."""
    return [b for b in run if b in TORCH_PATHS] or ["cpu"]


def _raised_in_triton(exc: BaseException) -> bool:
    """Whether a frame of ``exc``'s traceback lies in the triton package (interpreter, compiler)."""
    import traceback

    spec = importlib.util.find_spec("triton")
    home = os.path.dirname(spec.origin) + os.sep if spec and spec.origin else None
    return bool(home) and any(f.filename.startswith(home) for f in traceback.extract_tb(exc.__traceback__))


def each_kernel_backend(run: list[str], check) -> dict[str, str]:
    """Run ``check(backend)`` on each kernel backend of ``run``; {backend: "ok" | "failed: why"}.

    A backend whose kernel the interpreter or compiler refuses (an error raised inside triton, or a
    :class:`BackendError`) is reported failed in one line and the others still run; a failed
    assertion, or an error in the check's own code, is the check failing and propagates."""
    outcome = {}
    for backend in kernel_backends(run):
        try:
            check(backend)
        except AssertionError:
            raise
        except Exception as exc:
            if not (isinstance(exc, BackendError) or _raised_in_triton(exc)):
                raise
            why = (str(exc).strip().splitlines() or [""])[0][:200]
            outcome[backend] = f"failed: {type(exc).__name__}: {why}"
            print(f"{backend}: failed ({type(exc).__name__}: {why})")
        else:
            outcome[backend] = "ok"
    return outcome
