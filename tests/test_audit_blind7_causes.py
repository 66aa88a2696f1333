"""The general causes of the disagreements on blind batch 7 (fla's Triton-Ascend backend, issue
24), as good and bad code: a parameter annotated ``dict`` (a container of a launch's keyword
arguments, ``kernel_kwargs: dict``) is a Python value, so storing an offset in it or reading it is
not tensor work; a tensor parameter indexed the same way still is, and an element read out of the
container keeps no Python kind of its own: a slice of it put back for the launch to unpack
(``kernel_kwargs['chunk_indices'] = chunk_indices[a:b]``) is a slice of a tensor. A parameter
annotated as a sequence of tensors (``sources: Sequence[torch.Tensor]``) holds tensors. A helper defined on both
branches of a module-level ``if`` (fla's ``custom_device_ctx``) runs one definition or the other:
both are followed."""

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


def test_an_element_of_a_launch_argument_dict_sliced_for_the_launch_is_a_tensor():
    bad = """\
        def w(kernel_kwargs: dict, nt: int):
            idx = kernel_kwargs.get('chunk_indices')
            for off in range(0, nt, 2):
                kernel_kwargs['chunk_indices'] = idx[off:off + 2]
                kernel_kwargs['NT_OFFSET'] = off
                k[(2,)](**kernel_kwargs)
        def v(x, idx, nt):
            kw = dict(x=x, n=nt)
            kw['idx'] = idx[0:nt]
            k[(1,)](**kw)
        """
    assert codes(bad) == [(4, "WB103"), (6, "WB110"), (9, "WB103")]  # each slice of the index tensor runs on the host
    good = """\
        def w(kernel_kwargs: dict, nt: int):
            off = kernel_kwargs.get('NT_OFFSET')
            kernel_kwargs['NT_OFFSET'] = off + nt
            sizes = kernel_kwargs.get('sizes')[1:]
            k[(nt,)](**kernel_kwargs)
            return sizes
        """
    assert codes(good) == []  # a slice the launch never receives says nothing of its kind


def test_a_helper_defined_on_both_branches_of_a_module_level_if_is_followed_on_both():
    bad = """\
        if NEW_TORCH:
            def device_ctx(i):
                return torch.npu.device(i)
        else:
            def device_ctx(i):
                return torch.cuda.device(i)
        def w(x, y):
            with device_ctx(x.device.index):
                k[(1,)](x, y, 1, 1)
            return y
        """
    assert [line for line, _ in codes(bad)] == [3, 6]  # either branch's device context runs at each call
    good = """\
        if NEW_TORCH:
            def device_ctx(i):
                return torch.npu.device(i)
        def device_ctx(i):
            return contextlib.nullcontext()
        def w(x, y):
            with device_ctx(x.device.index):
                k[(1,)](x, y, 1, 1)
            return y
        """
    assert codes(good) == []  # the later unconditional def replaces the first: only it runs


def test_the_elements_of_a_parameter_annotated_as_a_sequence_of_tensors_are_tensors():
    bad = """\
        def w(sources: Sequence[torch.Tensor], grads: list[torch.Tensor | None], y, i: int):
            first = sources[i].unsqueeze(0)
            for s in sources:
                y += s
            k[(1,)](first, grads[i].contiguous(), 1, 1)
            return y
        """
    assert codes(bad) == [(2, "WB103"), (4, "WB107"), (5, "WB102")]  # each is tensor work on the host
    good = """\
        def w(x, y, sizes: Sequence[int], names: tuple[str, torch.Tensor]):
            n = sizes[0] * sizes[1]
            k[(n,)](x, y, n, names[0])
            return y
        """
    assert codes(good) == []  # numbers, and a record of mixed kinds, are not tensors
