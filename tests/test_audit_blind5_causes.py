"""The general causes of the false and missed findings on blind batch 5 (Liger-Kernel's Ascend backend,
issue 24), each as good and bad code: a helper parameter annotated as a Python number keeps
that kind whatever the caller passes, a launch grid holds numbers, and two bare names ordered
in a branch's test are sizes, not tensors, and a torch.empty written into a launch's arguments
is a scratch buffer."""

from __future__ import annotations

from audit_cases import codes


def test_a_helper_parameter_annotated_int_is_a_number_whatever_the_caller_passes():
    good = """\
        def blocks(n: int) -> int:
            return min(64, n)
        def w(x, out, n):
            k[(blocks(n),)](x, out, n, 1)
            return out
        """
    assert codes(good) == []
    bad = """\
        def blocks(n):
            return min(64, n)
        def w(x, out, n):
            k[(blocks(n),)](x, out, n, 1)
            return out
        """
    assert (2, "WB106") in codes(bad)  # unannotated, it takes the launched (tensor) kind the caller gives


def test_arithmetic_in_a_launch_grid_is_on_numbers():
    good = """\
        def w(x, out, b, h):
            grid = (b * h,)
            k[grid](x, out, b, h)
            return out
        """
    assert codes(good) == []
    bad = """\
        def w(x, out, b, h):
            scale = b * h
            k[(1,)](x, out, b, h)
            return out
        """
    assert codes(bad) == [(2, "WB107")]


def test_two_names_ordered_in_a_branch_test_are_sizes():
    good = """\
        def w(x, out, block, d):
            args = (x, out, block, d)
            if block >= d:
                k[(1,)](*args)
            else:
                k[(2,)](*args)
            return out
        """
    assert codes(good) == []
    bad = """\
        def w(x, out, block, d):
            if x.sum() >= d:
                k[(1,)](x, out, block, d)
            return out
        """
    assert (2, "WB106") in codes(bad)


def test_a_torch_empty_written_into_a_launch_argument_is_scratch():
    bad = """\
        def w(x, out, n, label, has_label):
            k[(1,)](x, out, label if has_label else torch.empty(1, device=x.device), n)
            return out
        """
    assert codes(bad) == [(2, "WB104")]
    good = """\
        def w(x, out, n, label):
            k[(1,)](x, out, label, n)
            return out
        """
    assert codes(good) == []


def test_arithmetic_spanning_lines_is_told_at_its_operators_line():
    bad = """\
        def w(x, out, n, t):
            y = (
                x
                - out
            ) / t
            k[(1,)](y, out, n, 1)
            return out
        """
    assert codes(bad) == [(4, "WB107"), (5, "WB107")]  # `-` on line 4, `/` on line 5, not the `(` on line 2
    one_line = """\
        def w(x, out, n, t):
            y = (x - out) / t
            k[(1,)](y, out, n, 1)
            return out
        """
    assert codes(one_line) == [(2, "WB107"), (2, "WB107")]
