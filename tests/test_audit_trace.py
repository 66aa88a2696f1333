"""The runtime view: the dispatch trace agrees with the static audit on seed 003's
anti-pattern (the same six host operations, line by line) and finds nothing but the output
allocation outside the compliant wrapper's kernel."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

from kb_tools.audit import audit_path
from kb_tools.runtime.trace import rule_code, trace_call

FIXTURES = Path(__file__).parent / "fixtures" / "audit"


@pytest.fixture
def load(tmp_path, monkeypatch):
    """Import a fixture with a stand-in ``pypto_pro.language`` whose jit is the identity,
    so that the kernel is a plain Python function running torch ops on the CPU."""
    pkg = tmp_path / "pypto_pro"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "language.py").write_text("def jit(fn=None, **options):\n    return fn if fn is not None else (lambda f: f)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("pypto_pro", "pypto_pro.language"):
        monkeypatch.delitem(sys.modules, name, raising=False)

    def _load(name):
        spec = importlib.util.spec_from_file_location(f"kbt_fixture_{name}", FIXTURES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return _load


BACKENDS = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("backend", BACKENDS)
def test_static_and_runtime_views_agree_on_the_antipattern(load, backend):
    m = load("seed003_antipattern")
    x = torch.randn(4, 32, 8, device=backend).half()
    trace = trace_call(m.op_wrapper, x, 1, kernels=[m.op_kernel], backend=backend)
    static = [(f.line, f.code) for f in audit_path(FIXTURES / "seed003_antipattern.py").findings]
    assert len(static) == 6
    assert trace.host_operations() == static
    assert any(o.where == "kernel" for o in trace.ops)
    assert 0 < trace.wrapper_share <= 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_compliant_wrapper_dispatches_only_its_output_allocation(load, backend):
    m = load("seed003_compliant")
    x = torch.randn(4, 32, 8, device=backend).half()
    trace = trace_call(m.op_wrapper, x, 1, kernels=[m.op_kernel], backend=backend)
    assert trace.violations == []
    assert [o.op for o in trace.wrapper_ops] == ["empty.memory_format"]
    assert torch.allclose(m.op_wrapper(x, 1).float(), torch.softmax(x.float(), 1), atol=1e-3)


def test_rule_codes_for_aten_ops():
    assert rule_code("_to_copy.default") == "WB101"
    assert rule_code("clone.default", {"memory_format": torch.contiguous_format}) == "WB102"
    assert rule_code("clone.default", {}) == "WB104"
    assert rule_code("view.dtype") == "WB112"
    assert rule_code("cat.default") == "WB105"
    assert rule_code("empty.memory_format") is None
    assert rule_code("exp.default") == "WB107"
