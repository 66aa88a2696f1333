"""The general cause of most false findings on blind batch 7 (fla's Triton-Ascend backend, issue
24), as good and bad code: a parameter annotated ``dict`` (a container of a launch's keyword
arguments, ``kernel_kwargs: dict``) is a Python value, so storing an offset in it or reading it is
not tensor work; a tensor parameter indexed the same way still is."""

from __future__ import annotations

from audit_cases import codes


def test_a_dict_of_launch_arguments_is_a_python_value():
    good = """\
        def w(kernel_kwargs: dict, nt: int):
            kernel_kwargs['NT_OFFSET'] = 0
            cu = kernel_kwargs.get('cu_seqlens')
            k[(nt,)](**kernel_kwargs)
        """
    assert codes(good) == []
    bad = """\
        def w(kwargs: torch.Tensor, nt: int):
            kwargs[0] = 0
            k[(nt,)](kwargs, kwargs, nt, nt)
        """
    assert [line for line, _ in codes(bad)] == [2]  # the tensor's element write runs on the host
