"""Work outside the kernel is counted, not timed: the trace's bytes written by the wrapper,
and the timing helpers a notebook uses to show (never assert) a time."""

from __future__ import annotations

import torch

from kb_tools.runtime.timing import compare, interleaved_medians
from kb_tools.runtime.trace import trace_call


def _kernel(x2d, y2d):
    torch.softmax(x2d, dim=-1, out=y2d)


def _casting_wrapper(x):
    x32 = x.to(torch.float32)  # 4 B per element written outside the kernel
    rows = x32.reshape(-1, x.shape[-1])  # a view: nothing written
    y = torch.empty(rows.shape, dtype=torch.float32)  # the allowed allocation: not counted
    _kernel(rows, y)
    return y.to(x.dtype)  # 2 B per element


def _clean_wrapper(x):
    y = torch.empty(x.shape, dtype=x.dtype)
    y.copy_(x)  # in place into the output: no new storage outside a kernel
    return y


def test_wrapper_bytes_count_new_storage_only():
    x = torch.randn(8, 16).half()
    trace = trace_call(_casting_wrapper, x, kernels=[_kernel])
    assert trace.wrapper_bytes == x.numel() * (4 + 2)
    assert [o.bytes_written for o in trace.ops if o.op.startswith("view")] == [0]
    assert all(o.bytes_written == 0 for o in trace.ops if o.op.startswith("empty"))
    assert trace_call(_clean_wrapper, x).wrapper_bytes == 0


def test_compare_needs_the_margin():
    assert compare(1.05, 1.0) == "within margin"
    assert compare(1.2, 1.0) == "slower" and compare(1.0, 1.2) == "faster"
    assert compare(1.2, 1.0, margin=0.5) == "within margin"


def test_interleaved_medians_calls_each_function_every_round():
    calls = {"a": 0, "b": 0}

    def bump(name):
        calls[name] += 1

    medians = interleaved_medians({"a": lambda: bump("a"), "b": lambda: bump("b")}, repeats=5)
    assert calls == {"a": 6, "b": 6}  # one warm-up and five timed calls each
    assert set(medians) == {"a", "b"} and all(v >= 0 for v in medians.values())
