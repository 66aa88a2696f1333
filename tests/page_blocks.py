"""Runs the Python printed under the pages' Do / Don't (kb_tools.kb.page_code reads it): each
block in a namespace of torch, math, the Do blocks it builds on and a stand-in for every
kernel it launches, and a dispatch recorder that says what a wrapper did outside those
launches, in the audit's rule codes."""

from __future__ import annotations

import functools
import math
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from kb_tools.audit.codes import RULES
from kb_tools.kb.page_code import EDGES, KERNEL_NAME, PageBlock, page_blocks, run_before
from kb_tools.kb.pages import load_kb
from kb_tools.kernels.page_code import run_block
from kb_tools.runtime.trace import rule_code

from conftest import REPO


class Page(NamedTuple):
    path: Path
    blocks: list[PageBlock]
    problems: list


@functools.cache
def pages() -> dict[str, Page]:
    kb = load_kb(REPO)
    found = {}
    for page in kb.pages.values():
        blocks, problems = page_blocks(page, frozenset(RULES))
        found[page.id] = Page(page.path, blocks, problems)
    return found


def runnable_blocks() -> list[PageBlock]:
    return [b for p in pages().values() for b in p.blocks if b.tested]


class Launch(NamedTuple):
    grid: object  # what the launch was subscripted with (kernel[grid](...)), or None
    args: tuple


_in_kernel = [0]


@contextmanager
def _kernel_scope():
    _in_kernel[0] += 1
    try:
        yield
    finally:
        _in_kernel[0] -= 1


class Kernel:
    """Stands for a kernel a block launches: records each launch and, when a test gives it a
    ``body``, runs that on the launch's arguments as the kernel's own work."""

    def __init__(self, name: str):
        self.name, self.launches, self.body = name, [], None

    def __getitem__(self, grid):
        return functools.partial(self._launch, grid)

    def __call__(self, *args):
        return self._launch(None, *args)

    def _launch(self, grid, *args):
        self.launches.append(Launch(grid, args))
        if self.body is not None:
            with _kernel_scope():
                self.body(*args)


class HostOps(TorchDispatchMode):
    """The ATen operators dispatched outside every kernel launch, with their rule codes
    (None for the allowed output allocation)."""

    def __init__(self):
        super().__init__()
        self.ops: list[tuple[str, str | None]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not _in_kernel[0]:
            name = str(func).removeprefix("aten.")
            self.ops.append((name, rule_code(name, kwargs)))
        return func(*args, **kwargs)

    @property
    def codes(self) -> set[str]:
        return {code for _, code in self.ops if code}


def load(block: PageBlock, **names) -> dict:
    """The namespace after running ``block``: torch and math, then every Do block of the
    pages it ``uses``, then the earlier blocks of its page with its role, then ``names``
    (the free variables of a fragment), with a Kernel for each *_kernel name it launches."""
    before = run_before(block, lambda page: pages()[page].blocks)
    ns = {"torch": torch, "math": math, "__name__": "kb_page_" + block.page.replace("-", "_")}
    for b in (*before, block):
        for name in KERNEL_NAME.findall(b.source):
            ns.setdefault(name, Kernel(name))
    ns.update(names)
    for b in (*before, block):
        run_block(b, pages()[b.page].path, ns)
    return ns


def one_launch(kernel: Kernel, call, *args, **kwargs):
    """``call(*args)`` under the recorder: returns (result, the launch); the wrapper did
    nothing outside the kernel but allocate with torch.empty, and launched exactly once."""
    kernel.launches.clear()
    with HostOps() as host:
        result = call(*args, **kwargs)
    assert not host.codes, f"host work outside the kernel: {host.ops}"
    assert len(kernel.launches) == 1, f"{len(kernel.launches)} launches"
    return result, kernel.launches[0]


def refused(kernel: Kernel, error, call, *args, **kwargs) -> str:
    """``call`` raises ``error`` before any launch; returns the message."""
    kernel.launches.clear()
    try:
        call(*args, **kwargs)
    except error as exc:
        assert not kernel.launches, "refused after launching"
        return str(exc)
    raise AssertionError(f"{call.__name__}{args!r} was accepted")


def limits(dtype: torch.dtype) -> torch.Tensor:
    """A dtype's extremes: min and max, and for floats the smallest normal, -0.0, ±inf, nan."""
    if dtype == torch.bool:
        return torch.tensor([False, True])
    if dtype.is_floating_point:
        f = torch.finfo(dtype)
        values = [f.min, f.max, f.tiny, -0.0, math.inf, -math.inf, math.nan]
    else:
        i = torch.iinfo(dtype)
        values = [i.min, i.max, 0] + ([-1] if i.min else [1])
    return torch.tensor(values, dtype=dtype)


class Edges:
    """The edge inputs a block's marker promises, handed out and counted, so the test can
    hold the check to the marker: what it names is what ran."""

    def __init__(self, block: PageBlock):
        self.promised, self.seen = set(block.edges), set()

    def mark(self, *edges: str) -> None:
        unknown = set(edges) - set(EDGES)
        assert not unknown, f"not an edge input: {unknown}"
        self.seen.update(edges)

    def tensors(self, dtype: torch.dtype = torch.float32):
        """(edge, tensor) for each promised tensor edge, of ``dtype`` (bool for 'bool')."""
        base = torch.arange(24).to(dtype).reshape(4, 6)
        make = {
            "empty": lambda: [torch.empty(0, dtype=dtype), torch.empty(3, 0, dtype=dtype)],
            "0-d": lambda: [torch.ones((), dtype=dtype)],
            "one": lambda: [torch.ones(1, dtype=dtype), torch.ones(1, 1, dtype=dtype)],
            "strided": lambda: [base.t(), base[:, ::2]],
            "bool": lambda: [torch.tensor([[True, False, True], [False, False, True]])],
            "extremes": lambda: [limits(dtype)],
        }
        for edge in EDGES:
            if edge in self.promised and edge in make:
                self.mark(edge)
                for t in make[edge]():
                    yield edge, t
