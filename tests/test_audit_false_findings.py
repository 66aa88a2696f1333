"""Causes of false findings in WB107 and WB109 (issue 37), each with the case that must still be
reported: a launch retried in the handler of its own ``try`` is one launch (the one that raised
made none), but a launch whose ``try`` fails after it is followed by a second; a tensor's storage
object read for its size is metadata, a tensor method is still arithmetic. Both good cases sit in
the WB107/WB109 good fixtures too."""

from __future__ import annotations

import textwrap

import pytest

from audit_cases import codes


def wrapper(body: str, args: str = "x") -> str:
    """A wrapper that allocates ``y``, runs ``body`` and returns ``y``; as in the other cases its
    ``def`` is line 2 and ``body`` starts on line 4."""
    head = f"\ndef op_wrapper({args}):\n    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)\n"
    return head + textwrap.indent(textwrap.dedent(body).strip("\n"), "    ") + "\n    return y\n"


def test_a_launch_retried_in_its_own_handler_is_one_launch():
    assert codes(wrapper("""
        try:
            k[(1,)](x, y, x.numel(), 1024)
        except RuntimeError:
            k[(1,)](x, y, x.numel(), 256)
    """)) == []


@pytest.mark.parametrize("args, body, found", [
    ("x", """
        try:
            k[(1,)](x, y, x.numel(), 1024)
            check(y)
        except RuntimeError:
            k[(1,)](x, y, x.numel(), 256)
    """, [(8, "WB109")]),
    ("x, rows", """
        try:
            if rows:
                k[(1,)](x, y, x.numel(), 1024)
                check(y)
        except RuntimeError:
            k[(1,)](x, y, x.numel(), 256)
    """, [(9, "WB109"), (10, "WB109")]),  # and the path where rows is false returns with no launch
    ("x", """
        try:
            k[(1,)](x, y, x.numel(), 1024)
        except RuntimeError:
            pass
        k[(1,)](x, y, x.numel(), 256)
    """, [(8, "WB109")]),
])
def test_a_handler_after_a_completed_launch_launches_a_second_time(args, body, found):
    assert codes(wrapper(body, args)) == found


def test_the_storage_object_is_metadata_and_a_tensor_method_is_not():
    body = """
        def op_wrapper(x):
            n = x.untyped_storage().nbytes() + x.{method}()
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, n, 0)
            return y
    """
    assert codes(body.format(method="numel")) == []
    assert codes(body.format(method="sum")) == [(3, "WB107"), (3, "WB107")]  # .sum() and the + of its tensor


SIZES = """
def sdd_wrapper(a, b, spdims, block):
    M = a.shape[0]
    width = block * spdims[0]
    out = torch.empty((M, width), dtype=a.dtype, device=a.device)
    grid = [spdims[0], spdims[1] * block, M]
    LAUNCH
    return out
"""


def test_a_size_given_to_the_launch_as_a_compile_time_keyword_is_a_python_value():
    """``BLOCK=block`` (a capitalised meta-parameter, Triton's tl.constexpr convention) and a launch
    option (``num_warps=``) take Python values: arithmetic on the size and on the sizes it meets
    is not tensor work (blind batch 10: 4 false WB107/WB106 lines, before this)."""
    assert codes(SIZES.replace("LAUNCH", "k[grid](a, out, M, BLOCK=block, num_warps=min(block, 32) // 4)")) == []
    # an argument the kernel takes as a tensor is still one: a torch call on it is host work
    assert codes(SIZES.replace("LAUNCH", "k[grid](a, out, M, BLOCK=block.sum())")) != []
