"""An allocator injected as a parameter's default (``alloc=torch.empty``) allocates when the
wrapper calls it (issue 37: 16 scratch lines the blind labels marked were missed): a buffer
from it that the wrapper never returns is scratch, a ``torch.zeros`` default is a host
allocation, and one it returns is a declared output. A helper whose caller passes the
allocator is not read as its default."""

from __future__ import annotations

from audit_cases import codes


def test_scratch_from_an_injected_torch_empty_is_reported():
    assert codes("""
        def op_wrapper(x, alloc=torch.empty):
            tmp = alloc(x.shape, dtype=x.dtype, device=x.device)
            y = alloc(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, tmp, x.numel())
            return y
    """) == [(3, "WB104")]


def test_an_injected_zeros_is_a_host_allocation_and_a_returned_empty_an_output():
    assert codes("""
        def op_wrapper(x, *, fill=torch.zeros):
            y = fill(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, x.numel(), 0)
            return y
    """) == [(3, "WB104")]
    assert codes("""
        def op_wrapper(x, alloc=torch.empty):
            y = alloc(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, x.numel(), 0)
            return y
    """) == []


def test_an_allocator_the_caller_passes_is_not_the_default():
    assert codes("""
        def make(shape, like, alloc=torch.zeros):
            return alloc(shape, dtype=like.dtype, device=like.device)

        def op_wrapper(x):
            y = make(x.shape, x, alloc=my_pool_alloc)
            k[(1,)](x, y, x.numel(), 0)
            return y
    """) == []
