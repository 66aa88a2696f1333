"""What every worked example's tests share, in one place: the spec and saved legs of the
example, the criterion judge, the launch counter, the host trace on the interpreter, and the
planted-violation copy that ``kbt`` (or the copy's own tests) must catch.

Each ``examples/<op>/test_<op>.py`` keeps the tests its KB_USAGE.json claims, by name, and
builds them from these pieces; what differs per operator (its kernel, its rule, its plant)
stays in its own file. The delivered wrappers import nothing from here: they ship alone.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import torch
import pytest
import yaml

from kb_tools.numerics.criteria import judge
from kb_tools.numerics.metrics import compute
from kb_tools.numerics.tensors_io import load
from kb_tools.runtime.trace import trace_call

HARNESS_FILES = ("harness.py", "conftest.py")  # what a copied example needs beside it to run its tests


class Example:
    """One worked example, found from its test file: ``examples/<op>/`` and ``ops/<op>.yaml``."""

    def __init__(self, test_file: str):
        self.here = Path(test_file).resolve().parent
        self.op = self.here.name
        self.repo = self.here.parents[1]
        self.spec = yaml.safe_load((self.repo / "ops" / f"{self.op}.yaml").read_text())

    def saved(self, dtype: str, leg: str):
        """The saved leg of a dtype (``.npy``, or ``.pt`` where numpy has no such dtype)."""
        return load(next((self.here / "tensors" / dtype).glob(f"{leg}.*")))

    def judged(self, out, expected, dtype: str) -> None:
        """The spec's criterion for the dtype decides; the output's dtype and shape must be the golden's."""
        assert out.dtype == expected.dtype and out.shape == expected.shape
        verdict = judge(self.spec["criteria"][dtype], out, expected, dtype=dtype)
        assert verdict.passed, verdict.reasons

    def check_saved(self, legs: dict, dtype: str, names=None) -> None:
        """A fresh run's legs equal the saved ones bit for bit: the saved DUT is the kernel's.
        Without ``names``, the run's legs are also exactly the saved files, none missing or stale."""
        if names is None:
            assert sorted(legs) == sorted(p.stem for p in (self.here / "tensors" / dtype).iterdir())
        for leg in names or legs:
            assert torch.equal(legs[leg], self.saved(dtype, leg)), f"{dtype} {leg} no longer matches the saved tensor"

    def check_legs(self, legs: dict, dtype: str, criterion: str | None = None) -> None:
        """The DUT passes the spec's criterion (or the one named) against the golden and, where
        there is one, the third-party leg; the metrics the review reports are defined."""
        verdict = judge(criterion or self.spec["criteria"][dtype], legs["dut"], legs["golden"], legs.get("third_party"), dtype=dtype)
        assert verdict.passed, verdict.reasons
        metrics = compute(legs["dut"], legs["golden"], dtype)
        assert metrics.max_abs is not None and metrics.max_rel is not None and metrics.cosine > 0.999

    def check_prototype(self, prototype) -> None:
        """The prototype declares the spec's dtypes and ranks, no more and no fewer."""
        assert sorted(prototype.SUPPORTED_DTYPES) == sorted(self.spec["properties"]["dtypes"])
        assert sorted(prototype.SUPPORTED_RANKS) == sorted(self.spec["properties"]["ranks"])

    def check_rejected(self, cases, launched) -> None:
        """Each ``(call, error)`` raises that error, its message led by the operator's name, and
        none of them launches: ``launched()`` counts launches, before and after."""
        before = launched()
        for call, error in cases:
            with pytest.raises(error, match=f"{self.op}: "):
                call()
        assert launched() == before

    def copy(self, tmp_path: Path, *, tensors: bool = False) -> Path:
        """A copy laid out as the repository is (``examples/<op>``, the harness beside it,
        ``ops/<op>.yaml``), so that its tests run and ``kbt`` finds its spec."""
        dest = tmp_path / "examples" / self.op
        skip = ("__pycache__",) if tensors else ("__pycache__", "tensors")
        shutil.copytree(self.here, dest, ignore=shutil.ignore_patterns(*skip))
        for name in HARNESS_FILES:
            shutil.copy(self.here.parent / name, dest.parent / name)
        (tmp_path / "ops").mkdir(exist_ok=True)
        shutil.copy(self.repo / "ops" / f"{self.op}.yaml", tmp_path / "ops")
        return dest

    def kbt(self, *args, select_into: Path | None = None) -> subprocess.CompletedProcess:
        """``kbt`` from the repository; ``select_into`` first makes that copy's selection afresh,
        so that a page edited since the last ``make examples`` cannot mask a plant."""
        kbt = [sys.executable, "-m", "kb_tools"]
        if select_into is not None:
            subprocess.run([*kbt, "select", f"ops/{self.op}.yaml", "-o", str(select_into)],
                           cwd=self.repo, check=True, capture_output=True, timeout=120)
        return subprocess.run([*kbt, *map(str, args)], cwd=self.repo, capture_output=True, text=True, timeout=120)

    def pytest(self, node: str) -> subprocess.CompletedProcess:
        """One test node of a copy, in its own process (its packages shadow nothing of this run);
        the copy's examples/conftest.py is read, which puts the harness on the path."""
        examples = Path(node.split("::")[0]).parents[1]
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "--confcutdir", str(examples), node],
                              cwd=self.repo, capture_output=True, text=True, timeout=300)


def plant(path: Path, old: str, new: str) -> str:
    """Replace ``old`` by ``new`` in a copied file; the plant must change it. Returns the text."""
    text = path.read_text()
    planted = text.replace(old, new)
    assert planted != text, f"the plant found nothing to replace in {path.name}"
    path.write_text(planted)
    return planted


def span(path: Path, start: str, end: str) -> str:
    """The text of a file from the first ``start`` up to the ``end`` after it (e.g. a launch)."""
    text = path.read_text()
    first = text.index(start)
    return text[first:text.index(end, first)]


def line_of(text: str, needle: str) -> int:
    """The 1-based line of the first row of ``text`` that holds ``needle``."""
    return next(i for i, row in enumerate(text.splitlines(), 1) if needle in row)


def concat_inputs(shape, dim, extents, dtype=torch.int64) -> list:
    """Inputs to a concatenation along ``dim``: ``shape`` with each of ``extents`` along that axis,
    values counting on from one input to the next, so an element copied to the wrong place shows."""
    axis = dim % len(shape)
    tensors, base = [], 0
    for extent in extents:
        s = list(shape)
        s[axis] = extent
        n = math.prod(s)
        tensors.append(torch.arange(base, base + n).reshape(s).to(dtype))
        base += n
    return tensors


def host_trace(wrapper, *args, kernel=None, **kwargs):
    """The wrapper's dispatches on the CPU, with the kernel (and the interpreter's launch, which
    copies arguments to the host) counted as the kernel's, not the wrapper's."""
    from triton.runtime.interpreter import GridExecutor

    kernels = ([kernel.fn] if kernel is not None else []) + [GridExecutor.__call__]
    return trace_call(wrapper, *args, kernels=kernels, backend="cpu", **kwargs)


class Launches:
    """Stands in for the kernel object in the wrapper's module and counts ``kernel[grid](...)``."""

    def __init__(self, kernel):
        self.kernel, self.count = kernel, 0

    def __getitem__(self, grid):
        self.count += 1
        return self.kernel[grid]

    @classmethod
    def installed(cls, monkeypatch, module, name: str) -> Launches:
        """A counter put in place of ``module.name`` for one test."""
        counter = cls(getattr(module, name))
        monkeypatch.setattr(module, name, counter)
        return counter
