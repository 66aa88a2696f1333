"""The worked add operator's own tests: the runtime invariants its KB_USAGE.json claims.

Run with ``python -m pytest examples/add/test_add.py``. ``conftest.py`` puts Triton on its
interpreter (the tests hand it CPU tensors), so the delivered kernel itself runs on the CPU.
"""

from __future__ import annotations

import json

import pytest
import torch

import make_tensors
from harness import Example, host_trace, line_of, plant
from kb_tools.numerics.promote import case_mode
from legs.golden import WIDENING, golden_add
from ops.prototypes import add as prototype
from ops.wrappers.add_wrapper import add_kernel, add_wrapper, scalar_result_dtype

EXAMPLE = Example(__file__)
SPEC = EXAMPLE.spec
DTYPES = list(prototype.SUPPORTED_DTYPES)
INT_DTYPES = [d for d in DTYPES if d.startswith("int")]
LAUNCHES = []
add_kernel.add_pre_run_hook(lambda *args, **kwargs: LAUNCHES.append(1))  # counts launches, interpreter or device


saved, judged = EXAMPLE.saved, EXAMPLE.judged


def test_prototype_matches_spec():
    EXAMPLE.check_prototype(prototype)
    assert WIDENING == SPEC["widening"]


def test_registered_under_the_framework_name():
    assert {"Tensor", "Scalar"} <= set(torch.ops.aten.add.overloads())
    assert prototype.NAME == "add"


def test_every_case_is_two_party():
    assert not case_mode(SPEC["criteria"]).three_party


@pytest.mark.parametrize("dtype", DTYPES)
def test_saved_tensors_are_the_kernels_and_pass_their_criterion(dtype):
    legs = make_tensors.run_legs(dtype)
    EXAMPLE.check_saved(legs, dtype, ("input", "dut", "golden"))
    judged(legs["dut"], legs["golden"], dtype)
    EXAMPLE.check_legs(legs, dtype)


SCALAR_KINDS = [2, -1, 0, 300, 2.5, float("nan"), True]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scalar", SCALAR_KINDS, ids=repr)
def test_result_dtype_is_torchs(dtype, scalar):
    tensor_dtype = getattr(torch, dtype)
    expected = torch.result_type(torch.empty(0, dtype=tensor_dtype), scalar)
    assert scalar_result_dtype(tensor_dtype, scalar) == expected
    assert add_wrapper(torch.ones(3, dtype=tensor_dtype), scalar).dtype == expected


def _edge_scalars(dtype: str) -> list:
    """Negative, zero, one, the dtype's minimum and maximum, a value outside its range, and
    for floats NaN and both infinities (scalar-operand-promotion's list)."""
    if dtype in INT_DTYPES:
        info = torch.iinfo(getattr(torch, dtype))
        outside = info.max + 1 if dtype != "int64" else -1 - 2**62
        return [-7, 0, 1, info.min, info.max, outside]
    info = torch.finfo(getattr(torch, dtype))
    return [-7.25, 0.0, 1.0, float(info.min), float(info.max), 1e39, float("nan"), float("inf"), float("-inf")]


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_edge_cases_against_the_golden(dtype):
    x = torch.tensor([-3, 0, 5, 100], dtype=getattr(torch, dtype))
    for scalar in _edge_scalars(dtype):
        for alpha in (1, -2):
            judged(add_wrapper(x, scalar, alpha), golden_add(x, scalar, alpha), dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_alpha_product_wraps_at_the_tensor_width(dtype):
    info = torch.iinfo(getattr(torch, dtype))
    x = torch.tensor([info.max, 100, info.min], dtype=getattr(torch, dtype))
    out = add_wrapper(x, info.max, alpha=3)
    assert torch.equal(out, torch.add(x, info.max, alpha=3))  # the framework wraps too
    if dtype == "int8":
        assert add_wrapper(torch.tensor([100], dtype=torch.int8), torch.tensor([100], dtype=torch.int8), 3).item() == -112
        assert add_wrapper(torch.tensor([1, 2], dtype=torch.int8), 300).tolist() == [45, 46]
    with pytest.raises(TypeError, match="alpha must be an integer"):
        add_wrapper(x, 1, alpha=1.5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tensor_operands_broadcast_and_are_read_through_strides(dtype):
    base = (torch.randn(6, 4, 3) * 20).to(getattr(torch, dtype))
    x = base.transpose(0, 2)  # (3, 4, 6), not contiguous
    y = base[0, :, 0]  # (4,) with stride 3: broadcast over the other axes
    judged(add_wrapper(x, y[:, None], 2), golden_add(x, y[:, None], 2), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zero_dim_and_empty_inputs_launch_once(dtype):
    torch_dtype = getattr(torch, dtype)
    for x, other in ((torch.tensor(5, dtype=torch_dtype), 3), (torch.empty(0, 4, dtype=torch_dtype), 1),
                     (torch.tensor(5, dtype=torch_dtype), torch.ones(2, 3, dtype=torch_dtype))):
        before = len(LAUNCHES)
        out = add_wrapper(x, other)
        assert len(LAUNCHES) == before + 1
        assert torch.equal(out, torch.add(x, other))


def test_outside_the_prototype_is_rejected_before_the_launch():
    EXAMPLE.check_rejected(((lambda: add_wrapper(torch.ones(2, dtype=torch.float64), 1), TypeError),
                            (lambda: add_wrapper(torch.ones((1,) * 9), 1), ValueError),
                            (lambda: add_wrapper(torch.ones(2), torch.ones(2, dtype=torch.float16)), TypeError),
                            (lambda: add_wrapper(torch.ones(2), torch.ones(3)), ValueError),
                            (lambda: add_wrapper(torch.ones(2), "1"), TypeError)), lambda: len(LAUNCHES))


def test_nothing_dispatched_outside_the_kernel():
    x = torch.randn(4, 300, 3).transpose(0, 2)
    trace = host_trace(add_wrapper, x, 2.5, -1, kernel=add_kernel)
    assert trace.violations == [] and trace.ops


def test_planted_host_cast_is_caught(tmp_path):
    """A host cast planted in a copy: kbt verify names WB101 at its line and fails the claim."""
    copy = EXAMPLE.copy(tmp_path)
    anchor = "    out = torch.empty(out_shape, dtype=out_dtype, device=x.device)\n"
    planted = plant(copy / "ops" / "wrappers" / "add_wrapper.py", anchor, "    x = x.to(out_dtype)\n" + anchor)
    proc = EXAMPLE.kbt("verify", copy, "--root", copy, select_into=copy)
    assert proc.returncode == 1
    line = line_of(planted, "    x = x.to(out_dtype)")
    assert "WB101" in proc.stderr and "no-host-cast" in proc.stderr and f"add_wrapper.py:{line}:" in proc.stderr


def test_usage_claims_no_verified_status():
    usage = json.loads((EXAMPLE.here / "KB_USAGE.json").read_text())
    assert {r["implementation"]["status"] for r in usage["invariants"]} <= {"implemented", "deviated", "not_applicable"}
