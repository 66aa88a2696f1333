"""The dense-alias predicate of seed 001 §3.2.2 on real torch tensors."""

import pytest
import torch

from kb_tools.memory.alias import can_alias, mask_size

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.uint8,
          torch.int8, torch.int16, torch.int32, torch.int64, torch.bool]


def check(t):
    return can_alias(t, mask_size(t.numel()))


def test_mask_size():
    assert [mask_size(n) for n in (0, 1, 128, 129, 4096 * 4096)] == [0, 16, 16, 32, 2097152]


@pytest.mark.parametrize("dtype", DTYPES)
def test_contiguous_dense_aliases_for_every_dtype(dtype):
    assert check(torch.empty(64, 33, dtype=dtype)) == (True, "")


@pytest.mark.parametrize("make, condition", [
    (lambda: torch.empty(64, 64).t(), "condition 1"),
    (lambda: torch.empty(64, 64)[:, :32], "condition 1"),
    (lambda: torch.empty(1, 64).expand(64, 64), "condition 1"),
    (lambda: torch.empty(64, 64)[1:], "condition 2"),
    (lambda: torch.empty(64, 64)[:32], "condition 3"),  # contiguous small view, larger storage
    (lambda: torch.empty(4096).view(-1)[:16].view(4, 4), "condition 3"),
    (lambda: torch.empty(2, 3, 4, 5).to(memory_format=torch.channels_last), "condition 5"),
    (lambda: torch.empty(3, dtype=torch.uint8), "condition 4"),
    (lambda: torch.empty(0, 8), "empty"),
])
def test_tricky_views_refused_with_reason(make, condition):
    ok, reason = check(make())
    assert not ok and reason.startswith(condition), reason


def test_size_one_dims_do_not_matter():
    t = torch.empty(64, 1, 8)
    assert check(t)[0] and check(t.transpose(1, 2).contiguous())[0]


@pytest.mark.parametrize("dtype, smallest", [(torch.uint8, 16), (torch.float16, 8), (torch.float32, 4), (torch.int64, 2)])
def test_smallest_aliasable_counts(dtype, smallest):
    counts = [n for n in range(1, 64) if check(torch.empty(n, dtype=dtype))[0]]
    assert counts[0] == smallest
    assert counts == list(range(smallest, 64))
