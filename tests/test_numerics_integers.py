"""Integer wrap at AccT width, safe division, per-step against final narrowing (seed 000 §8)."""

import pytest
import torch

from kb_tools.numerics import integers

INT32_MIN = -(2**31)


def test_wrap_is_two_complement_modulo_width():
    x = torch.tensor([127, 128, 255, 256, -129, 300, -300], dtype=torch.int64)
    assert integers.wrap(x, torch.int8).tolist() == [127, -128, -1, 0, 127, 44, -44]
    assert integers.wrap(torch.tensor([256, -1, 300]), torch.uint8).tolist() == [0, 255, 44]
    assert integers.wrap(torch.tensor([2**31]), torch.int32).tolist() == [INT32_MIN]
    small = torch.tensor([-5, 5], dtype=torch.int8)
    assert integers.wrap(small, torch.int32).tolist() == [-5, 5]  # widening changes nothing
    with pytest.raises(TypeError):
        integers.wrap(torch.tensor([1.0]), torch.int8)


def test_safe_div_routes_minus_one_to_negation_and_guards_zero():
    a = torch.tensor([INT32_MIN, 7, -7, 9, 5], dtype=torch.int32)
    b = torch.tensor([-1, -1, 2, 0, 0], dtype=torch.int32)
    assert integers.safe_div(a, b).tolist() == [INT32_MIN, -7, -3, 0, 0]
    assert integers.safe_div(a, b, on_zero=-1).tolist()[3:] == [-1, -1]


def test_safe_div_agrees_with_trunc_division_where_that_is_defined():
    gen = torch.Generator().manual_seed(0)
    a = torch.randint(-1000, 1000, (5000,), generator=gen, dtype=torch.int32)
    b = torch.randint(-50, 50, (5000,), generator=gen, dtype=torch.int32)
    ok = b != 0
    expected = torch.div(a[ok], b[ok], rounding_mode="trunc")
    assert torch.equal(integers.safe_div(a, b)[ok], expected)


def _all_int8_pairs():
    values = torch.arange(-128, 128, dtype=torch.int8)
    a, b = torch.meshgrid(values, values, indexing="ij")
    return a.reshape(-1), b.reshape(-1)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_per_step_equals_final_narrowing_for_ring_ops(op):
    a, b = _all_int8_pairs()
    steps = [(op, b), ("mul", b), (op, a)]
    per_step = integers.evaluate(a, steps, torch.int32, torch.int8, per_step=True)
    final = integers.evaluate(a, steps, torch.int32, torch.int8, per_step=False)
    assert torch.equal(per_step, final)
    assert per_step.dtype == torch.int8


def test_per_step_and_final_narrowing_differ_for_division():
    a, b = _all_int8_pairs()
    steps = [("mul", b), ("div", b)]
    per_step = integers.evaluate(a, steps, torch.int32, torch.int8, per_step=True)
    final = integers.evaluate(a, steps, torch.int32, torch.int8, per_step=False)
    differ = int((per_step != final).sum())
    assert 0 < differ < a.numel()
    assert torch.equal(final[b != 0], a[b != 0])  # (a*b)/b == a without intermediate wrapping


def test_int64_golden_disagrees_with_int32_accumulation():
    x = torch.tensor([2**30, 2**31 - 1, 5], dtype=torch.int32)
    y = torch.tensor([2**30, 1, 7], dtype=torch.int32)
    two = torch.full_like(x, 2)
    steps = [("add", y), ("div", two)]  # (x + y) / 2
    dut = integers.evaluate(x, steps, torch.int32, torch.int32, per_step=False)
    golden64 = integers.evaluate(x, steps, torch.int64, torch.int32, per_step=False)
    assert dut.tolist() == [INT32_MIN // 2, INT32_MIN // 2, 6]
    assert golden64.tolist() == [2**30, 2**30, 6]
