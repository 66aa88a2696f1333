"""Bernoulli by the aliased path: fast paths, validation, reproducibility, alias == fallback."""

import math

import pytest
import torch

from kb_tools.memory.bernoulli import bernoulli_, choose_path

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.uint8,
          torch.int8, torch.int16, torch.int32, torch.int64, torch.bool]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("p", [0.0, 1.0, 0.5, 0.3])
def test_values_are_exact_zero_one(dtype, p):
    # starts as neither 0 nor 1 (a bool as the other constant), so an element left unwritten fails
    out = torch.full((33, 65), 5, dtype=dtype) if dtype != torch.bool else torch.full((33, 65), p == 0.0)
    bernoulli_(out, p, seed=11)
    values = out.to(torch.float64)
    assert set(values.unique().tolist()) <= {0.0, 1.0}
    if p in (0.0, 1.0):
        assert bool((values == p).all())
    else:
        assert abs(values.mean().item() - p) < 5 * math.sqrt(p * (1 - p) / out.numel())


def test_paths():
    dense = torch.empty(64, 64)
    assert [choose_path(dense, p) for p in (0.0, 1.0, 0.5)] == ["zeros", "ones", "alias"]
    assert choose_path(torch.empty(0, 3), 0.5) == "empty"
    assert choose_path(dense.t(), 0.5) == "fallback"
    assert choose_path(torch.empty(3, dtype=torch.uint8), 0.5) == "fallback"  # too small for the mask


def test_empty_tensor_untouched():
    out = torch.empty(0, 4)
    assert bernoulli_(out, 0.5, seed=1) is out and out.shape == (0, 4)


# Outputs start as NaN, not torch.empty: an element a draw leaves unwritten then differs from
# every other (NaN != NaN), where an empty output could hold the bytes of the draw freed before.
def nans(*shape, dtype=torch.float32):
    return torch.full(shape, math.nan, dtype=dtype)


@pytest.mark.parametrize("p", [0.5, 0.2])
def test_same_seed_offset_reproduces_and_changes_differ(p):
    def draw(seed, offset):
        return bernoulli_(nans(10_000), p, seed=seed, offset=offset).clone()

    base = draw(7, 8)
    assert torch.equal(base, draw(7, 8))
    assert not torch.equal(base, draw(8, 8))
    assert not torch.equal(base, draw(7, 12))


@pytest.mark.parametrize("p", [0.5, 0.7])
def test_alias_and_fallback_give_the_same_sample(p):
    dense = bernoulli_(nans(129, 77), p, seed=3, offset=4)
    strided = nans(77, 129).t()
    assert choose_path(strided, p) == "fallback"
    bernoulli_(strided, p, seed=3, offset=4)
    assert torch.equal(dense, strided)


def test_output_does_not_depend_on_tile():
    a = bernoulli_(nans(50_000, dtype=torch.float16), 0.3, seed=5, tile=256)
    b = bernoulli_(nans(50_000, dtype=torch.float16), 0.3, seed=5, tile=4096)
    assert torch.equal(a, b)


@pytest.mark.parametrize("kwargs, message", [
    ({"p": 0.5, "seed": 1, "offset": 2}, "multiple of 4"),
    ({"p": 0.5, "seed": 1, "offset": -4}, "non-negative"),
    ({"p": 1.5, "seed": 1}, r"\[0, 1\]"),
    ({"p": float("nan"), "seed": 1}, "finite"),
    ({"p": 0.5, "seed": 1.5}, "seed"),
])
def test_validation(kwargs, message):
    out = torch.zeros(16)
    with pytest.raises(ValueError, match=message):
        bernoulli_(out, **kwargs)
    assert bool((out == 0).all())  # nothing written on bad input


def test_unsupported_dtype():
    with pytest.raises(ValueError, match="not one of"):
        bernoulli_(torch.empty(16, dtype=torch.complex64), 0.5, seed=1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu():
    cpu = bernoulli_(torch.empty(4099, dtype=torch.bfloat16), 0.4, seed=9)
    gpu = bernoulli_(torch.empty(4099, dtype=torch.bfloat16, device="cuda"), 0.4, seed=9)
    assert torch.equal(cpu, gpu.cpu())
