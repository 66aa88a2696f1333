"""Runtime view of the wrapper boundary: which ATen operators a wrapper dispatches outside
its kernel launch, and what share of the call's time each one takes.

A ``TorchDispatchMode`` sees every ATen operator the call dispatches. An operator runs
"inside the kernel launch" when a frame of one of the given kernel functions is on the
Python stack, otherwise it is the wrapper's; the innermost frame in the wrapper's file
gives its source line, so the runtime view can be set beside the static audit line by
line. Each operator runs inside a ``torch.profiler.record_function`` range, and the
profiler (activities from ``torch.profiler.supported_activities()``) gives its CPU time
and, on an accelerator, its device time: the share the seed measured at 10 % to 62 %
(seed 003, "cost"). A Triton or NPU launch dispatches no ATen operator, so on a device
everything the mode sees is the wrapper's and the launch's kernels count only in the total.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

# What each wrapper-side ATen operator is, in the static audit's rule codes.
_ATEN_CODES = {
    "_to_copy": "WB101", "to": "WB101", "_to_dtype": "WB101",
    "permute": "WB102", "transpose": "WB102", "t": "WB102", "movedim": "WB102", "swapaxes": "WB102",
    "view": "WB103", "_unsafe_view": "WB103", "reshape": "WB103", "_reshape_alias": "WB103", "slice": "WB103",
    "select": "WB103", "squeeze": "WB103", "unsqueeze": "WB103", "expand": "WB103", "narrow": "WB103",
    "split": "WB103", "split_with_sizes": "WB103", "chunk": "WB103", "unbind": "WB103", "as_strided": "WB103",
    "index": "WB103", "index_select": "WB103", "alias": "WB103",
    "zeros": "WB104", "ones": "WB104", "full": "WB104", "fill_": "WB104", "zero_": "WB104", "arange": "WB104",
    "empty_like": "WB104", "empty_strided": "WB104", "new_zeros": "WB104", "new_ones": "WB104",
    "new_full": "WB104", "new_empty": "WB104", "zeros_like": "WB104", "ones_like": "WB104", "full_like": "WB104",
    "cat": "WB105", "stack": "WB105", "constant_pad_nd": "WB105", "pad": "WB105",
    "_local_scalar_dense": "WB106", "item": "WB106",
}
# The one allocation the boundary allows (torch.empty for declared outputs).
ALLOWED_WRAPPER_OPS = frozenset({"empty.memory_format", "empty.default"})


def rule_code(op_name: str, kwargs: dict | None = None) -> str | None:
    """The static rule code for one ATen overload name such as ``clone.default``; None for
    the allowed output allocation. ``clone`` with a contiguous memory format is
    ``.contiguous()`` (a layout change), otherwise an allocation; ``view.dtype`` is a bit view."""
    if op_name in ALLOWED_WRAPPER_OPS:
        return None
    base, _, overload = op_name.partition(".")
    if base == "view" and overload == "dtype":
        return "WB112"
    if base == "clone":
        import torch

        return "WB102" if (kwargs or {}).get("memory_format") == torch.contiguous_format else "WB104"
    return _ATEN_CODES.get(base, "WB107")


@dataclass
class TracedOp:
    index: int
    op: str  # ATen overload, e.g. "_to_copy.default"
    where: str  # "wrapper" or "kernel"
    line: int | None  # source line in the wrapper's file (wrapper ops)
    code: str | None  # rule code for a wrapper op; None for the allowed allocation
    cpu_us: float = 0.0
    device_us: float = 0.0
    share: float = 0.0  # of the call's time on the timed activity
    bytes_written: int = 0  # of tensors it made in new storage (views, in-place and the allowed allocation: 0)


@dataclass
class Trace:
    backend: str
    ops: list[TracedOp]
    call_cpu_us: float
    call_device_us: float
    timed_on: str  # "cpu" or "device": which clock the shares use
    activities: list[str] = field(default_factory=list)

    @property
    def wrapper_ops(self) -> list[TracedOp]:
        return [o for o in self.ops if o.where == "wrapper"]

    @property
    def violations(self) -> list[TracedOp]:
        """Wrapper ops outside the boundary (everything but the output allocation)."""
        return [o for o in self.wrapper_ops if o.code is not None]

    @property
    def wrapper_bytes(self) -> int:
        """Bytes the wrapper wrote to new tensors outside the kernel: a count of work, the same
        on a loaded machine and an idle one, where the time share is not."""
        return sum(o.bytes_written for o in self.wrapper_ops)

    @property
    def wrapper_share(self) -> float:
        return sum(o.share for o in self.wrapper_ops)

    def host_operations(self) -> list[tuple[int, str]]:
        """(line, code) once per source operation: ``.movedim().contiguous()`` dispatches a
        permute and a clone on one line, which the static audit reports as one layout change."""
        seen = []
        for o in self.violations:
            key = (o.line, o.code)
            if key not in seen:
                seen.append(key)
        return seen

    def table(self) -> str:
        """A Markdown table of every dispatched op, for notebooks and reports."""
        rows = ["| # | ATen op | where | line | code | cpu µs | device µs | share of call |",
                "|---:|---|---|---:|---|---:|---:|---:|"]
        for o in self.ops:
            rows.append(f"| {o.index} | {o.op} | {o.where} | {o.line or ''} | {o.code or ('allowed' if o.where == 'wrapper' else '')} "
                        f"| {o.cpu_us:.1f} | {o.device_us:.1f} | {o.share:.1%} |")
        rows.append(f"| | **call** | | | | {self.call_cpu_us:.1f} | {self.call_device_us:.1f} | wrapper: {self.wrapper_share:.1%} |")
        return "\n".join(rows)


def _fresh_bytes(result, fargs, fkwargs) -> int:
    """Bytes of the tensors an operator returned in storage none of its inputs had."""
    import torch
    from torch.utils._pytree import tree_leaves

    def storages(tree):
        return [t for t in tree_leaves(tree) if isinstance(t, torch.Tensor)]

    inputs = {t.untyped_storage().data_ptr() for t in storages((fargs, fkwargs))}
    return sum(t.nbytes for t in storages(result) if t.untyped_storage().data_ptr() not in inputs)


def _code_objects(functions) -> set:
    codes = set()
    for fn in functions:
        for candidate in (fn, getattr(fn, "__wrapped__", None), getattr(fn, "fn", None)):
            code = getattr(candidate, "__code__", None)
            if code is not None:
                codes.add(code)
    return codes


def trace_call(wrapper, *args, kernels=(), backend: str | None = None, warmup: int = 1, **kwargs) -> Trace:
    """Run ``wrapper(*args, **kwargs)`` once under the dispatch mode and the profiler.

    ``kernels`` are the functions whose frames mark "inside the kernel launch" (the jit
    kernel, or the Python function standing for it on the CPU)."""
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function
    from torch.utils._python_dispatch import TorchDispatchMode

    kernel_codes = _code_objects(kernels)
    wrapper_file = getattr(getattr(wrapper, "__code__", None), "co_filename", None)
    ops: list[TracedOp] = []

    class _Attribute(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, fargs=(), fkwargs=None):
            fkwargs = fkwargs or {}
            where, line = "wrapper", None
            frame = sys._getframe(1)
            while frame is not None:
                if frame.f_code in kernel_codes:
                    where = "kernel"
                    break
                if line is None and frame.f_code.co_filename == wrapper_file:
                    line = frame.f_lineno
                frame = frame.f_back
            name = str(func).removeprefix("aten.")
            op = TracedOp(len(ops), name, where, line if where == "wrapper" else None,
                          rule_code(name, fkwargs) if where == "wrapper" else None)
            ops.append(op)
            with record_function(f"kbt#{op.index}"):
                result = func(*fargs, **fkwargs)
            if name not in ALLOWED_WRAPPER_OPS:
                op.bytes_written = _fresh_bytes(result, fargs, fkwargs)
            return result

    for _ in range(warmup):
        wrapper(*args, **kwargs)
    activities = list(torch.profiler.supported_activities())
    device = backend not in (None, "cpu")
    if not device:
        activities = [a for a in activities if a == ProfilerActivity.CPU]
    with profile(activities=activities) as prof:
        with record_function("kbt#call"):
            with _Attribute():
                wrapper(*args, **kwargs)
        if device and torch.cuda.is_available():
            torch.cuda.synchronize()
    events = {e.name: e for e in prof.events() if e.name.startswith("kbt#")}

    def device_us(e) -> float:
        return float(getattr(e, "device_time_total", 0.0) or 0.0)

    call = events.get("kbt#call")
    call_cpu = float(call.cpu_time_total) if call else 0.0
    call_dev = device_us(call) if call else 0.0
    if device and call_dev == 0.0:  # device kernels not linked to the range: sum them
        call_dev = sum(float(getattr(e, "self_device_time_total", 0.0) or 0.0) for e in prof.events())
    timed_on = "device" if device and call_dev > 0 else "cpu"
    total = call_dev if timed_on == "device" else call_cpu
    for op in ops:
        e = events.get(f"kbt#{op.index}")
        if e is not None:
            op.cpu_us = float(e.cpu_time_total)
            op.device_us = device_us(e)
        spent = op.device_us if timed_on == "device" else op.cpu_us
        op.share = spent / total if total > 0 else 0.0
    return Trace(backend or "cpu", ops, call_cpu, call_dev, timed_on, [str(a) for a in activities])
