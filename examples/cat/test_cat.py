"""The worked cat operator's own tests: the runtime invariants its KB_USAGE.json claims.

Run with ``python -m pytest examples/cat/test_cat.py``. The kernel runs on Triton's
interpreter (``conftest.py`` sets TRITON_INTERPRET=1 where no CUDA device is present) or on
CUDA; inputs go to the kernel's device and results come back to the CPU.
"""

from __future__ import annotations

import pytest
import torch

import make_tensors
from harness import Example, Launches, concat_inputs, host_trace, plant, span
from kb_tools.kernels import page_code
from kb_tools.numerics.criteria import judge
from legs.golden import golden_cat
from ops.prototypes import cat as prototype
from ops.wrappers import cat_wrapper as delivered
from ops.wrappers.cat_wrapper import cat_wrapper

EXAMPLE = Example(__file__)
SPEC, REPO, saved = EXAMPLE.spec, EXAMPLE.repo, EXAMPLE.saved
DTYPES = list(prototype.SUPPORTED_DTYPES)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
# (shape of the first input, dim, extents along dim): first, middle, last and negative dim,
# unequal extents, zero-extent inputs; the cases of tests/test_kb_cat_plan.py
CASES = [((2, 3), 0, (2, 5)), ((2, 3), 1, (3, 1)), ((2, 3), -1, (3, 4)), ((3, 4, 5), 1, (4, 2, 1)),
         ((3, 4, 5), 2, (5, 5)), ((3, 4, 5), 0, (3, 0, 2)), ((2, 1, 3), 1, (1, 0, 4)), ((4,), 0, (4, 7)),
         ((2, 3, 37), 1, (1, 0, 5, 2, 0, 3, 1, 6))]


def run(tensors, dim=0):
    """The delivered wrapper on the kernel's device; the result on the CPU."""
    return cat_wrapper([t.to(DEVICE) for t in tensors], dim).cpu()


def page_plan():
    """The copy plan printed on kb/patterns/cat-lowering.md, run as written."""
    return page_code.load(REPO / "kb", "cat-lowering", "cat_copy_plan")["cat_copy_plan"]


@pytest.fixture
def launches(monkeypatch):
    return Launches.installed(monkeypatch, delivered, "cat_kernel")


def test_prototype_matches_spec():
    EXAMPLE.check_prototype(prototype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_saved_tensors_equal_a_fresh_kernel_run_and_the_golden(dtype):
    legs = make_tensors.run_legs(dtype, device="cpu")
    EXAMPLE.check_saved(legs, dtype)
    assert legs["dut"].dtype == legs["golden"].dtype == legs["third_party"].dtype == getattr(torch, dtype)
    for other in ("golden", "third_party"):
        verdict = judge(SPEC["criteria"][dtype], legs["dut"], legs[other], dtype=dtype)
        assert verdict.passed, (other, verdict.reasons)


@pytest.mark.parametrize("shape,dim,extents", CASES)
def test_corrected_plan_unequal_and_zero_extents(shape, dim, extents):
    """The kernel's placement is the page's corrected plan: outer over the leading axes, each
    input's own inner extent, the output's row stride; equal to torch.cat and to the plan's replay."""
    tensors = concat_inputs(shape, dim, extents)
    result = run(tensors, dim)
    assert torch.equal(result, torch.cat(tensors, dim))
    plan = page_plan()([t.shape for t in tensors], dim)
    replay = torch.full((result.numel(),), -1, dtype=result.dtype)
    for i, src, dst, n in plan:
        replay[dst:dst + n] = tensors[i].reshape(-1)[src:src + n]
    assert torch.equal(result.reshape(-1), replay)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_moves_bit_patterns(dtype):
    """NaN payloads, -0.0 and integer extremes arrive unchanged: the kernel copies words."""
    kind = getattr(torch, dtype)
    if kind.is_floating_point:
        a = torch.randn(3, 33).to(kind)
        a[0, :3] = torch.tensor([float("nan"), -0.0, float("inf")])
        b = torch.full((3, 2), -0.0, dtype=kind)
    elif kind == torch.bool:
        a, b = torch.randint(0, 2, (3, 33)).to(kind), torch.ones(3, 2, dtype=kind)
    else:
        info = torch.iinfo(kind)
        a = torch.randint(info.min, info.max, (3, 33), dtype=torch.int64).to(kind)
        b = torch.tensor([[info.min, info.max]] * 3, dtype=kind)
    result, golden = run([a, b], -1), golden_cat([a, b], -1)
    width = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[kind.itemsize]
    assert torch.equal(result.view(width), golden.view(width))


def test_strided_inputs_are_read_where_they_lie():
    base = torch.randn(4, 9, 6)
    tensors = [base.transpose(1, 2)[:, :, 1:], base[:, ::3, :].transpose(1, 2), torch.randn(4, 6, 1).expand(4, 6, 2)]  # stride 0: read only
    assert not any(t.is_contiguous() for t in tensors)
    assert torch.equal(run(tensors, 2), torch.cat(tensors, 2))
    offset = torch.randn(50)[7:].view(43, 1)  # a storage offset
    assert torch.equal(run([offset, offset], 1), torch.cat([offset, offset], 1))


def test_one_launch_for_any_list_length_and_for_empty_inputs(launches):
    cases = [([torch.randn(2, 3)] * n, 0) for n in range(1, prototype.B_MAX + 1)]
    cases += [([torch.empty(0, 3), torch.empty(0, 3)], 0), ([torch.empty(2, 0), torch.empty(2, 0)], 1),
              ([torch.empty(0), torch.randn(2, 3)], 0), ([torch.empty(0)], 0), ([torch.empty(3, 0, 2)], 1)]
    for tensors, dim in cases:
        before = launches.count
        result = run(tensors, dim)
        assert launches.count == before + 1
        assert torch.equal(result, torch.cat(tensors, dim)) and result.shape == torch.cat(tensors, dim).shape


def test_invalid_lists_are_rejected_before_the_launch(launches):
    bad = [([], 0, ValueError, "1 to 8"), ([torch.randn(2)] * 9, 0, ValueError, "1 to 8"),
           ([torch.tensor(1.0)], 0, ValueError, "zero-dimensional"), ([torch.randn(2, 3), torch.randn(3, 3)], 1, ValueError, "differs"),
           ([torch.randn(2, 3), torch.randn(2, 3, 1)], 0, ValueError, "differs"), ([torch.randn(2, 3)], 2, IndexError, "out of range"),
           ([torch.randn(2, 3), torch.randn(2, 3).double()], 0, TypeError, "every tensor"),
           ([torch.randn(2, 3).to(torch.complex64)], 0, TypeError, "not supported"), ([torch.randn(2), [1.0]], 0, TypeError, "not a tensor")]
    for tensors, dim, error, words in bad:
        with pytest.raises(error, match=f"cat: .*{words}"):
            cat_wrapper(tensors, dim)
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        torch.cat([torch.tensor(1.0)])  # the framework rejects a 0-d input as well
    assert launches.count == 0


def test_nothing_dispatched_outside_the_kernel():
    tensors = [torch.randn(3, 4, 5), torch.randn(3, 5, 4).transpose(1, 2), torch.empty(3, 4, 0)]
    trace = host_trace(cat_wrapper, tensors, -1)
    assert trace.violations == []
    assert [o.op for o in trace.ops if o.where == "wrapper"] == ["empty.memory_format"]  # the output only


def test_planted_second_launch_is_caught_by_verify(tmp_path):
    """A copy whose wrapper launches the kernel twice fails kbt verify at the single-launch claim."""
    copy = EXAMPLE.copy(tmp_path)
    wrapper = copy / "ops" / "wrappers" / "cat_wrapper.py"
    launch = span(wrapper, "    cat_kernel[(programs,)]", "    return y\n")
    planted = plant(wrapper, launch, launch + launch)  # a second copy pass over the same list
    assert planted.count("cat_kernel[(programs,)]") == 2
    proc = EXAMPLE.kbt("verify", copy, "--root", copy)
    assert proc.returncode == 1 and "PASS" not in proc.stdout
    assert "WB109" in proc.stderr and "single-launch" in proc.stderr, proc.stderr[-2000:]
