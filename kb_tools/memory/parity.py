"""Memory parity by the protocol of seed 001 §3.5.3: the same call in many isolated
processes, total and incremental peaks, medians, and percentages that read ``undefined``
when the reference is zero (a 0-byte GPU increment is not a 0 % gap).

A case is ``setup(device) -> state`` (e.g. allocate the output) and ``op(state)`` (the call
measured). Total peak covers setup and op; incremental peak is the op's peak above what was
held when it started.

CUDA: torch's allocator statistics (allocated and reserved). CPU has no allocator
statistics, so the best available measure is used and named in ``method``: the process's
peak resident set (VmHWM, reset through /proc/self/clear_refs) above its RSS at the start,
page-granular and including allocator slack; ``reserved`` is not measured on CPU (None).
A CPU peak can also read short, by at most two pages (:data:`CPU_SHORT_BYTES`) a buffer: a heap
chunk reused from a freed one (the warm-up's) keeps its two end pages resident, because
``malloc_trim`` hands back only the whole pages inside a free chunk. The probe itself reads
/proc into a buffer it holds, so that its reads leave no freed, resident pages behind.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import statistics
from dataclasses import dataclass, field

METRICS = ("total_allocated", "total_reserved", "incremental_allocated", "incremental_reserved")
CPU_METHOD = "cpu: peak RSS above the start RSS (/proc VmHWM reset via clear_refs); reserved not measured"
CPU_FALLBACK_METHOD = "cpu: ru_maxrss growth (lifetime peak; can under-report); reserved not measured"
CUDA_METHOD = "cuda: torch.cuda max_memory_allocated / max_memory_reserved"
CPU_SHORT_BYTES = 2 * os.sysconf("SC_PAGE_SIZE")  # see the module docstring


@dataclass(frozen=True)
class Sample:
    total_allocated: int
    total_reserved: int | None
    incremental_allocated: int
    incremental_reserved: int | None


@dataclass(frozen=True)
class ParityResult:
    device: str
    method: str
    samples: tuple[Sample, ...]
    medians: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return len(self.samples)


def percent_gap(value, reference) -> float | None:
    """|value - reference| / reference · 100, or None ('undefined') when reference is 0 or
    either side was not measured."""
    if value is None or reference is None or reference == 0:
        return None
    return abs(value - reference) / reference * 100.0


def format_percent(pct: float | None, digits: int = 6) -> str:
    return "undefined" if pct is None else f"{pct:.{digits}g}%"


def compare(candidate: ParityResult, reference: ParityResult) -> dict[str, tuple]:
    """Per metric: (candidate median, reference median, gap in % or None)."""
    return {m: (candidate.medians[m], reference.medians[m], percent_gap(candidate.medians[m], reference.medians[m]))
            for m in METRICS}


class _Rss:
    """Peak-RSS probe for one CPU process; it allocates nothing once made (see the module's
    docstring on pages that read short)."""

    def __init__(self):
        self._buffer = bytearray(1 << 16)
        try:
            self._reset()
            self.method = CPU_METHOD
        except OSError:
            self.method = CPU_FALLBACK_METHOD

    def _status(self, key: bytes) -> int:
        fd = os.open("/proc/self/status", os.O_RDONLY)
        try:
            size = os.readv(fd, [self._buffer])
        finally:
            os.close(fd)
        start = self._buffer.find(b"\n" + key + b":", 0, size)  # in place: no copy of the file
        if start < 0:
            raise OSError(f"{key.decode()} missing from /proc/self/status")
        end = self._buffer.find(b"kB", start, size)
        return int(self._buffer[start + len(key) + 2:end]) * 1024

    @staticmethod
    def _reset() -> None:
        fd = os.open("/proc/self/clear_refs", os.O_WRONLY)
        try:
            os.write(fd, b"5")
        finally:
            os.close(fd)

    def current(self) -> int:
        if self.method == CPU_METHOD:
            return self._status(b"VmRSS")
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def start_peak(self) -> None:
        if self.method == CPU_METHOD:
            self._reset()

    def peak(self) -> int:
        if self.method == CPU_METHOD:
            return self._status(b"VmHWM")
        return self.current()


def _measure_cpu(setup, op, device):
    probe = _Rss()
    base = probe.current()
    probe.start_peak()
    state = setup(device)
    setup_peak = probe.peak()
    before = probe.current()
    probe.start_peak()
    op(state)
    op_peak = probe.peak()
    sample = Sample(max(setup_peak, op_peak) - base, None, max(op_peak - before, 0), None)
    return sample, probe.method


def _measure_cuda(setup, op, device):
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base_alloc, base_res = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    state = setup(device)
    torch.cuda.synchronize()
    setup_alloc, setup_res = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    before_alloc, before_res = torch.cuda.memory_allocated(), torch.cuda.memory_reserved()
    torch.cuda.reset_peak_memory_stats()
    op(state)
    torch.cuda.synchronize()
    op_alloc, op_res = torch.cuda.max_memory_allocated(), torch.cuda.max_memory_reserved()
    sample = Sample(max(setup_alloc, op_alloc) - base_alloc, max(setup_res, op_res) - base_res,
                    op_alloc - before_alloc, op_res - before_res)
    return sample, CUDA_METHOD


def _release_freed_memory() -> None:
    """After a CPU warm-up: hand freed heap pages back to the OS, so that the measured run
    starts from an RSS that holds none of the warm-up's buffers."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: the start RSS may then include freed pages
        pass


def _child(setup, op, device, warmup, conn):
    try:
        if warmup:
            op(setup(device))
            _release_freed_memory()
        measure = _measure_cuda if str(device).startswith("cuda") else _measure_cpu
        conn.send(("ok", *measure(setup, op, device)))
    except BaseException as exc:  # reported to the parent, which raises it
        conn.send(("error", f"{type(exc).__name__}: {exc}", None))
    finally:
        conn.close()


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def measure(setup, op, *, device: str = "cpu", runs: int = 20, context: str | None = None,
            warmup: bool = True, timeout: float = 600.0) -> ParityResult:
    """Run the case in ``runs`` fresh processes, one after another.

    ``context`` is the multiprocessing start method, forkserver by default: a server that has
    imported torch but run nothing forks each child. That is quick, safe where forking a
    process whose OpenMP pool has run can hang, and leaves each child free to start its own
    CUDA context (which a plain fork of an initialised parent could not). ``setup`` and
    ``op`` must be picklable: module-level functions or functools.partial of them (see
    :mod:`kb_tools.memory.cases`).

    On CPU with ``warmup`` each child runs the case once before measuring, so that library
    code paged in on first use is not counted as the op's memory; CUDA's allocator
    statistics do not count code, and a warm-up would only pre-fill its cache.
    """
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    cuda = str(device).startswith("cuda")
    ctx = multiprocessing.get_context(context or "forkserver")
    if ctx.get_start_method() == "forkserver":
        ctx.set_forkserver_preload(["torch", "numpy", "kb_tools.memory.cases"])
    samples, method = [], ""
    for _ in range(runs):
        receive, send = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_child, args=(setup, op, device, warmup and not cuda, send))
        proc.start()
        send.close()
        if not receive.poll(timeout):
            proc.kill()
            proc.join()
            raise RuntimeError(f"memory-parity run gave no result within {timeout} s")
        try:
            status, payload, how = receive.recv()
        except EOFError:
            status, payload = "error", "the child process died without a result"
        proc.join()
        if status != "ok":
            raise RuntimeError(f"memory-parity run failed: {payload}")
        samples.append(payload)
        method = how
    medians = {m: _median([getattr(s, m) for s in samples]) for m in METRICS}
    return ParityResult(str(device), method, tuple(samples), medians)
