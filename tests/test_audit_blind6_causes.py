"""The general causes of the missed findings on blind batch 6 (Ascend/MindSpeed's Triton-Ascend
operators and zwx2238/triton-ascend-examples, issue 24), each as good and bad code: a parameter
annotated with a typed tensor class (``torch.LongTensor``) is a tensor, as ``torch.Tensor`` is; a
method of a torch context object (``with torch_npu.profiler.profile(...) as prof: prof.step()``)
is a torch call; a name bound to different kernels on different branches is a choice among
kernels; a launching function (a closure, a lambda) handed to a helper that calls it
(``profiler_wrapper(kernel_wrapper)``) launches where the helper calls it."""

from __future__ import annotations

import textwrap

from audit_cases import HEAD, codes
from kb_tools.audit import audit_source


def test_a_parameter_annotated_with_a_typed_tensor_class_is_a_tensor():
    bad = """\
        def lens(cu: torch.LongTensor) -> torch.LongTensor:
            return cu[1:] - cu[:-1]
        def w(x, out, cu):
            k[(1,)](x, out, lens(cu), 1)
            return out
        """
    assert (2, "WB107") in codes(bad)  # the helper's slice arithmetic runs on the host at each call
    good = """\
        def lens(cu: int) -> int:
            return cu - 1
        def w(x, out, cu):
            k[(1,)](x, out, lens(cu), 1)
            return out
        """
    assert codes(good) == []


def test_a_method_of_a_torch_context_object_is_a_torch_call():
    bad = """\
        def w(x, out):
            with torch.profiler.profile() as prof:
                k[(1,)](x, out, 1, 1)
                prof.step()
            return out
        """
    assert (4, "WB113") in codes(bad)  # the profiler's step runs on the host at each call
    good = """\
        def w(x, out, ctx):
            with ctx as prof:
                k[(1,)](x, out, 1, 1)
                prof.step()
            return out
        """
    assert (4, "WB113") not in codes(good)  # a context the caller hands in is not torch's
    rebound = """\
        def w(x, out, ctx):
            with torch.profiler.profile() as prof:
                prof = ctx
                k[(1,)](x, out, 1, 1)
                prof.step()
            return out
        """
    assert (5, "WB113") not in codes(rebound)


def test_a_name_bound_to_different_kernels_on_branches_is_a_kernel_choice():
    two = HEAD + "@triton.jit\ndef k2(x, y, n, m):\n    pass\n\n\n"
    bad = """\
        def w(x, out, n):
            if n == 16:
                fn = k
            else:
                fn = k2
            fn[(1,)](x, out, n, 1)
            return out
        """
    found = audit_source(two + textwrap.dedent(bad), "w.py").findings
    assert [f.line - two.count("\n") for f in found if f.code == "WB109"] == [6]  # one of two kernels, picked on the host
    good = """\
        def w(x, out, n):
            if n == 16:
                fn = k
            else:
                fn = k
            fn[(1,)](x, out, n, 1)
            return out
        """
    assert not [f for f in audit_source(two + textwrap.dedent(good), "w.py").findings if f.code == "WB109"]



def test_a_launching_callable_handed_to_a_helper_launches_where_the_helper_calls_it():
    bad = """\
        def bench(fn, *args):
            for _ in range(10):
                fn(*args)
        def w(x, y):
            k[(1,)](x, y, 1, 1)
            def again():
                k[(1,)](x, y, 1, 1)
            bench(again)
            bench(lambda: k[(1,)](x, y, 1, 1))
            return y
        """
    assert codes(bad) == [(8, "WB110"), (9, "WB110")]  # each call of bench launches the kernel in its loop
    good = """\
        def bench(fn, *args):
            for _ in range(10):
                fn(*args)
        def w(x, y):
            k[(1,)](x, y, 1, 1)
            def report():
                print(x.shape)
            bench(report)
            bench(lambda: print(y.shape))
            return y
        """
    assert codes(good) == []  # a callable that launches nothing launches nothing where it is called
