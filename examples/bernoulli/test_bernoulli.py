"""The worked bernoulli operator's own tests: the runtime invariants its KB_USAGE.json claims.

Run with ``python -m pytest examples/bernoulli/test_bernoulli.py``. The kernel runs on
Triton's interpreter (``conftest.py`` sets TRITON_INTERPRET=1 where no CUDA device is
present) or on CUDA; every tensor goes to the kernel's device and comes back to the CPU.
"""

from __future__ import annotations

from functools import partial

import pytest
import torch

import make_tensors
from harness import Example, Launches, host_trace, plant
from kb_tools.memory import parity
from kb_tools.memory.alias import can_alias, mask_size
from kb_tools.memory.expand import expand_inplace, expand_low_to_high
from kb_tools.memory.waves import plan_problems, plan_waves
from kb_tools.numerics.criteria import judge
from kb_tools.numerics.stats import holm, proportion_test
from legs.golden import golden_bernoulli
from legs.third_party import third_party_bernoulli
from ops.prototypes import bernoulli as prototype
from ops.wrappers import bernoulli_wrapper as delivered
from ops.wrappers.bernoulli_wrapper import ALIAS, CONSTANT, FALLBACK, bernoulli_wrapper, choose_path

EXAMPLE = Example(__file__)
SPEC = EXAMPLE.spec
DTYPES = list(prototype.SUPPORTED_DTYPES)
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
WIDTHS = {1: "uint8", 2: "bfloat16", 4: "float32", 8: "float64"}


def run(x, p=0.3, seed=7, offset=0, out=None):
    """The delivered wrapper on the kernel's device; the result on the CPU."""
    return bernoulli_wrapper(x.to(DEVICE), p, seed, offset, out=out).cpu()


@pytest.fixture
def launches(monkeypatch):
    return Launches.installed(monkeypatch, delivered, "bernoulli_kernel")


def test_prototype_matches_spec():
    EXAMPLE.check_prototype(prototype)
    assert set(prototype.ONE_BITS) == set(DTYPES)


@pytest.mark.parametrize("dtype", DTYPES)
def test_saved_tensors_equal_a_fresh_kernel_run_and_the_golden(dtype):
    """The saved DUT is what the kernel gives now; binary_equal to the golden, bit for bit."""
    legs = make_tensors.run_legs(dtype, device="cpu")
    EXAMPLE.check_saved(legs, dtype, ("input", "dut", "golden", "third_party"))
    assert legs["dut"].dtype == legs["golden"].dtype == getattr(torch, dtype)
    assert choose_path(legs["dut"], make_tensors.P) == ALIAS  # the saved case exercises the aliased path
    verdict = judge(SPEC["criteria"][dtype], legs["dut"], legs["golden"], dtype=dtype)
    assert verdict.passed, verdict.reasons


def test_dense_alias_predicate_chooses_the_path():
    dense = torch.empty(4, 64)
    assert choose_path(dense, 0.3) == ALIAS
    refused = {"tiny": torch.empty(3), "0-d": torch.empty(()), "non-contiguous": torch.empty(64, 4).t(),
               "offset": torch.empty(257)[1:], "oversized storage": torch.empty(8, 64)[:4],
               "channels_last": torch.empty(2, 3, 8, 8).to(memory_format=torch.channels_last)}
    for name, out in refused.items():
        assert choose_path(out, 0.3) == FALLBACK, name
        assert not can_alias(out, mask_size(out.numel()))[0], name
    assert choose_path(torch.empty(0, 5), 0.3) == FALLBACK  # an empty output never aliases
    assert choose_path(dense, 0.0) == choose_path(dense, 1.0) == CONSTANT
    # the 128-bit-aligned mask (16 B): 1/2/4/8-byte outputs alias from 16/8/4/2 elements up
    for width, dtype in WIDTHS.items():
        smallest = 16 // width
        assert choose_path(torch.empty(smallest, dtype=getattr(torch, dtype)), 0.3) == ALIAS
        assert choose_path(torch.empty(smallest - 1, dtype=getattr(torch, dtype)), 0.3) == FALLBACK


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_high_to_low_waves_expand_in_place_at_every_wave_count(width):
    """Aliased outputs from one wave to four, each bit for bit the golden; the plan is safe."""
    dtype = getattr(torch, WIDTHS[width])
    for n in (16 // width, 255, 256, 257, 2100, 9000):
        waves = plan_waves(n, width)
        assert plan_problems(waves, n, width) == []
        x = torch.zeros(n, dtype=dtype)
        if n >= 16 // width:
            assert choose_path(x, 0.4) == ALIAS
        assert torch.equal(run(x, 0.4, 11), golden_bernoulli(x, 0.4, 11)), (width, n, len(waves))
    assert len(plan_waves(9000, width)) >= 2


def test_low_to_high_is_the_counter_example():
    """The same packed mask in the output's own bytes: high-to-low waves recover the bits,
    the low-to-high order overwrites mask bytes before they are read (kb_tools.memory)."""
    n = 4096
    bits = golden_bernoulli(torch.zeros(n), 0.5, 3).to(torch.uint8)
    packed = torch.from_numpy(__import__("numpy").packbits(bits.numpy(), bitorder="little"))
    outputs = []
    for expand in (expand_inplace, expand_low_to_high):
        out = torch.zeros(n)
        out.view(torch.uint8)[: packed.numel()] = packed
        outputs.append(expand(out, tile=256) if expand is expand_low_to_high else expand(out, route="tiles"))
    assert torch.equal(outputs[0], bits.float()) and not torch.equal(outputs[1], bits.float())


@pytest.mark.parametrize("view", ["transposed", "offset", "strided", "oversized", "tiny", "0-d"])
def test_fallback_writes_only_the_view_with_the_dense_values(view):
    storage = torch.full((40, 64), -7.0, device=DEVICE)
    out = {"transposed": storage.t(), "offset": storage[3:], "strided": storage[::2, 1::3],
           "oversized": storage.view(-1)[:640], "tiny": storage.view(-1)[:3], "0-d": storage[0, 0]}[view]
    outside = torch.ones_like(storage, dtype=torch.bool)
    outside.view(-1)[_flat_positions(out, storage)] = False
    assert choose_path(out, 0.3) == FALLBACK
    result = bernoulli_wrapper(out, 0.3, 5, out=out).cpu()
    assert torch.equal(result, golden_bernoulli(result.contiguous(), 0.3, 5))  # what the aliased path gives
    assert torch.equal(storage[outside].cpu(), torch.full((int(outside.sum()),), -7.0))  # the rest stays


def _flat_positions(view, storage):
    """Storage positions of every element of ``view`` (a view of ``storage``)."""
    index = torch.arange(storage.numel(), device=storage.device).view(storage.shape)
    return index.as_strided(view.shape, view.stride(), view.storage_offset()).reshape(-1)


def test_float64_and_bool_store_exact_bit_patterns_through_strides():
    for dtype in (torch.float64, torch.bfloat16, torch.bool, torch.int64):
        out = torch.empty(9, 6, dtype=dtype, device=DEVICE).t()
        result = bernoulli_wrapper(out, 0.5, 9, out=out).cpu()
        assert torch.equal(result, golden_bernoulli(result.contiguous(), 0.5, 9))
        assert set(result.double().unique().tolist()) <= {0.0, 1.0}


@pytest.mark.parametrize("dtype", DTYPES)
def test_exact_values_reproducible_and_state_sensitive(dtype):
    x = torch.zeros(64, 40, dtype=getattr(torch, dtype))
    first, again = run(x, 0.5, 21, 8), run(x, 0.5, 21, 8)
    assert set(first.double().unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(first, again)
    assert not torch.equal(first, run(x, 0.5, 22, 8))  # another seed
    assert not torch.equal(first, run(x, 0.5, 21, 12))  # another offset


def test_zero_and_one_are_exact_constants_without_the_generator():
    for dtype in DTYPES:
        torch_dtype = getattr(torch, dtype)
        # every byte 0xA5, neither 0 nor 1 in any dtype: an element the kernel misses cannot pass
        # as the zeros that torch.empty's memory may already hold
        stale = torch.full((5, 7 * torch_dtype.itemsize), 0xA5, dtype=torch.uint8, device=DEVICE)
        out = stale.view(torch_dtype).t()
        assert choose_path(out, 0.0) == CONSTANT
        assert torch.equal(bernoulli_wrapper(out, 0.0, 1, out=out).cpu(), torch.zeros(7, 5, dtype=out.dtype))
        assert torch.equal(bernoulli_wrapper(out, 1.0, 1, out=out).cpu(), torch.ones(7, 5, dtype=out.dtype))


def test_acceptance_wilson_exact_binomial_holm():
    """Each case (dtype x p) in a 99 % Wilson interval and through the exact two-sided binomial
    test, Holm-corrected over the family; the same for the framework's own leg."""
    cases, family = [], []
    for dtype in DTYPES:
        for p in (0.1, 0.5, 0.9):
            x = torch.zeros(4096, dtype=getattr(torch, dtype))
            for leg, sample in (("dut", run(x, p, 17)), ("third_party", third_party_bernoulli(x, p, 17))):
                test = proportion_test(int(sample.double().sum()), sample.numel(), p)
                cases.append((dtype, p, leg, test))
                family.append(test.p_value)
    adjusted, rejected = holm(family)
    outside = [(d, p, leg) for d, p, leg, t in cases if not t.in_interval]
    assert not outside and not any(rejected), (outside, min(adjusted))
    largest_z = max(abs(t.z) for *_, t in cases)
    print(f"{len(cases)} cases: largest |z| {largest_z:.3f}, smallest raw p {min(family):.4g}")
    assert largest_z < 4


def test_validation_runs_before_any_path_or_launch(launches):
    empty = torch.empty(0, 3, device=DEVICE)
    for bad, error in (({"p": 1.5}, ValueError), ({"p": float("nan")}, ValueError), ({"offset": 2}, ValueError),
                       ({"offset": -4}, ValueError), ({"seed": -1}, ValueError), ({"seed": 1.5}, ValueError)):
        args = {"p": 0.5, "seed": 1, "offset": 0, **bad}
        with pytest.raises(error, match="bernoulli: "):
            bernoulli_wrapper(empty, **args)  # rejected although nothing would be written
    for x, error in ((torch.ones(3, dtype=torch.complex64), TypeError), (torch.ones([1] * 9), ValueError),
                     ([0.0, 1.0], TypeError)):
        with pytest.raises(error, match="bernoulli: "):
            bernoulli_wrapper(x, 0.5, 1)
    assert launches.count == 0


def test_one_launch_on_every_path_empty_and_0d_included(launches):
    cases = [(torch.zeros(4, 64), 0.3), (torch.zeros(64, 4).t(), 0.3), (torch.zeros(4, 64), 1.0),
             (torch.zeros(0, 5), 0.3), (torch.zeros(()), 0.3), (torch.zeros(()), 0.0), (torch.zeros(0), 1.0)]
    for x, p in cases:
        before = launches.count
        y = run(x, p)
        assert launches.count == before + 1 and y.shape == x.shape and y.dtype == x.dtype
    assert run(torch.zeros(0, 5), 0.3).numel() == 0


def test_out_cases_follow_the_framework():
    """Out of place, in place (out is x), out= a full-overlap view of x: written like torch's
    own ``bernoulli_`` writes them; a partial overlap and an expanded output are rejected."""
    x = torch.zeros(8, 8, device=DEVICE)
    assert run(x).data_ptr() != x.data_ptr() and torch.equal(x.cpu(), torch.zeros(8, 8))  # x untouched
    same = bernoulli_wrapper(x, 0.3, 7, out=x)
    assert same is x and torch.equal(x.cpu(), golden_bernoulli(x.cpu(), 0.3, 7))
    view = x.t()
    torch_view = x.t().clone().bernoulli_(0.3)  # torch writes a transposed view of itself
    assert bernoulli_wrapper(x, 0.3, 7, out=view) is view and set(torch_view.unique().tolist()) <= {0.0, 1.0}
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.zeros(8, 1).expand(8, 8).bernoulli_(0.3)  # torch rejects an expanded output
    with pytest.raises(ValueError, match="internal overlap"):
        bernoulli_wrapper(x, 0.3, 7, out=torch.zeros(8, 1, device=DEVICE).expand(8, 8))
    with pytest.raises(RuntimeError, match="single memory location"):
        torch.neg(x[1:3], out=x[:2])  # torch's out= rule: a partial overlap is rejected
    with pytest.raises(ValueError, match="partially overlaps"):
        bernoulli_wrapper(x[:4], 0.3, 7, out=x[2:6])


def test_nothing_dispatched_outside_the_kernel_and_only_the_fallback_allocates_a_mask():
    for out, allocations in ((torch.zeros(4, 700), 0), (torch.zeros(700, 4).t(), 1)):
        trace = host_trace(bernoulli_wrapper, out, 0.3, 7, out=out)
        assert trace.violations == []
        wrapper_ops = [o.op for o in trace.ops if o.where == "wrapper"]
        assert wrapper_ops == ["empty.memory_format"] * allocations  # the fallback's independent mask only
    trace = host_trace(bernoulli_wrapper, torch.zeros(4, 700), 0.3, 7)
    assert [o.op for o in trace.ops if o.where == "wrapper"] == ["empty.memory_format"]  # the output itself


def _allocate(device, *, n: int):
    return torch.zeros(n, device=device)


def _delivered(out):
    bernoulli_wrapper(out, 0.5, 1, out=out)


def _framework(out):
    out.bernoulli_(0.5)


@pytest.mark.skipif(DEVICE != "cpu", reason="the CUDA parity run is scripts/gpu_check.py's, not this CPU test's")
def test_memory_parity_protocol_against_the_framework_call():
    """Both sides fill a float32 output in place, each in fresh processes; four peaks each.
    On the CPU the reserved peaks are not measured (None, reported undefined, never 0 %)."""
    n = 1 << 12
    ours = parity.measure(partial(_allocate, n=n), _delivered, runs=2)
    theirs = parity.measure(partial(_allocate, n=n), _framework, runs=2)
    gaps = parity.compare(ours, theirs)
    assert ours.runs == theirs.runs == 2 and set(gaps) == set(parity.METRICS)
    output = 4 * n - parity.CPU_SHORT_BYTES  # RSS pages: a reused heap chunk's two end pages read short
    assert ours.medians["total_allocated"] >= output and theirs.medians["total_allocated"] >= output
    assert gaps["total_reserved"][2] is None and parity.format_percent(gaps["total_reserved"][2]) == "undefined"
    print({m: (a, b, parity.format_percent(g, 3)) for m, (a, b, g) in gaps.items()})


def test_planted_low_to_high_expansion_is_caught(tmp_path):
    """A copy whose aliased path expands from element 0 upward in one pass fails the test that
    the high-to-low claim names."""
    copy = EXAMPLE.copy(tmp_path)
    plant(copy / "ops" / "wrappers" / "bernoulli_wrapper.py",
          "start = tl.cdiv(tl.cdiv(tl.cdiv(end, 8), WIDTH), PREFIX) * PREFIX", "start = end * 0")
    proc = EXAMPLE.pytest(f"{copy / 'test_bernoulli.py'}::test_high_to_low_waves_expand_in_place_at_every_wave_count[4]")
    assert proc.returncode == 1 and "test_high_to_low_waves_expand_in_place_at_every_wave_count" in proc.stdout, proc.stdout[-2000:]
