"""The general causes of the misses on blind batch 4 (FlagGems' Ascend backend, issue 24),
each as good and bad code: a device guard through a module object no import names, a second
launch reported in the caller's own file, a recursive relaunch, outputs handed on in a
record, a scratch buffer bound on two branches, an attribute stored on ``ctx``, scalars in
arithmetic, a helper reached through an import made in the function's body, and an element of a
list of tensors (``indices[0].numel()`` says its elements are tensors)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from kb_tools.audit import audit_source

from audit_cases import tree_findings

HEAD = "import math\nfrom collections import namedtuple\n\nimport torch\nimport triton\n\n\n@triton.jit\ndef k(x, y, n):\n    pass\n\n\n"


def codes(body: str, **options) -> list[tuple[int, str]]:
    result = audit_source(HEAD + textwrap.dedent(body), "w.py", **options)
    assert result.wrappers, "no wrapper found: the case proves nothing"
    first = HEAD.count("\n")
    return [(f.line - first, f.code) for f in result.findings]


def test_a_device_guard_is_a_torch_call_whatever_module_object_it_is_entered_through():
    bad = """\
        from pkg.runtime import device_fn
        def w(x):
            with device_fn.device(x.device):
                k[(1,)](x, x, 1)
            return x
        """
    assert codes(bad) == [(3, "WB113")]
    assert codes(bad, policy="lenient") == [(3, "WB113")]  # no getattr(torch, ...): every reading forbids it
    good = """\
        def w(x, timer):
            with timer.section("launch"):
                k[(1,)](x, x, 1)
            return x
        """
    assert codes(good) == []


def test_a_recursive_call_of_a_launching_wrapper_launches_again():
    bad = """\
        def scan(x, out, n):
            parts = math.ceil(n / 1024)
            k[(parts,)](x, out, n)
            if parts >= 2:
                scan(out, out, parts)
        """
    assert codes(bad) == [(5, "WB109")]
    good = """\
        def scan(x, out, n):
            k[(1,)](x, out, n)
        """
    assert codes(good) == []


def test_buffers_handed_on_in_a_record_are_outputs_and_each_scratch_binding_is_reported():
    good = """\
        def max_dim(x):
            values = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            indices = torch.empty(x.shape, dtype=torch.int64, device=x.device)
            k[(1,)](x, values, indices)
            Out = namedtuple("max", ["values", "indices"])
            return Out(values=values, indices=indices)
        """
    assert codes(good) == []
    bad = """\
        def w(x, smooth):
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            if smooth:
                scratch = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            else:
                scratch = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, y, scratch)
            return y
        """
    assert codes(bad) == [(4, "WB104"), (6, "WB104")]


def test_an_attribute_stored_on_ctx_does_not_make_ctx_a_tensor():
    good = """\
        class Op(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
                k[(1,)](x, y, x.numel())
                ctx.shape = x.shape
                ctx.save_for_backward(x)
                return y
        """
    assert codes(good) == []


def test_names_in_arithmetic_a_number_only_use_takes_are_numbers():
    good = """\
        def arange(start, end, step=1, *, dtype=None, device=None):
            if dtype is torch.int64:
                size = (end - start + step - 1) // step
            else:
                size = math.ceil((end - start) / step)
            out = torch.empty((size,), device=device, dtype=dtype)
            k[(1,)](out, start, end)
            return out
        """
    assert codes(good) == []
    bad = """\
        def w(starts, ends):
            out = torch.empty(starts.shape, dtype=starts.dtype, device=starts.device)
            k[(1,)](starts, ends, out)
            return out, ends - starts
        """
    assert codes(bad) == [(4, "WB107")]


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


KERNEL = "import torch\nimport triton\n\n\n@triton.jit\ndef k(x, n):\n    pass\n\n\n"


def test_a_second_launch_at_a_call_into_another_module_is_reported_in_the_caller_s_file(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": KERNEL + "def once(x):\n    k[(1,)](x, 1)\n    return x\n",
                     "pkg/b.py": KERNEL + "from pkg.a import once\n\n\ndef twice(x):\n    k[(1,)](x, 2)\n    return once(x)\n"})
    assert ("pkg/b.py", 15, "WB109", ("twice",)) in tree_findings(tmp_path)
    assert not [f for f in tree_findings(tmp_path) if f[0] == "pkg/a.py"]


def test_a_helper_reached_through_an_import_in_the_function_body_is_followed(tmp_path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/ops/__init__.py": "from .prep import normed\n",
                     "pkg/ops/prep.py": "def normed(x):\n    return x.transpose(0, 1).contiguous()\n",
                     "pkg/ops/sample.py": KERNEL + """\
def sample(prob, n):
    from pkg import ops as local_ops

    cum = local_ops.normed(prob)
    out = torch.empty((n,), device=prob.device, dtype=torch.int64)
    k[(1,)](cum, out)
    return out
"""})
    assert tree_findings(tmp_path) == [("pkg/ops/prep.py", 2, "WB102", ("sample",))]


def test_a_launch_problem_in_a_called_wrapper_is_told_at_the_call_and_a_helper_s_scratch_is_its_own():
    body = """\
        def two_pass(x):
            mid = torch.empty((8,), dtype=x.dtype, device=x.device)
            out = torch.empty((1,), dtype=x.dtype, device=x.device)
            k[(8,)](x, mid, 8)
            k[(1,)](mid, out, 1)
            return out
        def reduce_all(x, keep):
            if keep:
                return x
            return two_pass(x)
        """
    result = audit_source(HEAD + textwrap.dedent(body), "w.py")
    first = HEAD.count("\n")
    found = sorted((f.line - first, f.code, f.wrappers) for f in result.findings)
    assert found == [(1 + 1, "WB104", ("two_pass", "reduce_all")),  # mid is scratch, for both
                     (5, "WB109", ("two_pass",)),  # two_pass's second launch, at its own line
                     (9, "WB109", ("reduce_all",)),  # reduce_all returns without a launch
                     (10, "WB109", ("reduce_all",))]  # and its second launch is told at the call, not in two_pass


def test_a_closure_that_launches_is_a_wrapper_and_a_nested_kernel_stays_local():
    body = """\
        def apply(q, cos):
            def rotate(out, state, cos):
                cos = cos[:4]
                k[(1,)](out, state, cos)
            def grid(meta):
                return (1,)
            out = torch.empty(q.shape, dtype=q.dtype, device=q.device)
            rotate(out, q, cos)
            return out
        """
    result = audit_source(HEAD + textwrap.dedent(body), "w.py")
    assert result.wrappers == ["rotate"]  # grid launches nothing; apply's launch is its closure's
    first = HEAD.count("\n")
    assert [(f.line - first, f.code, f.wrappers) for f in result.findings] == [(3, "WB103", ("rotate",))]
    local = """\
        def w(x):
            @triton.jit
            def inner(x):
                pass
            inner[(1,)](x)
            return x
        """
    assert codes(local) == []


def test_a_closure_in_a_file_that_names_no_kernel_is_not_a_wrapper():
    model = textwrap.dedent("""\
        import torch


        class Block(torch.nn.Module):
            def forward(self, x):
                def inner(x):
                    return self.convs[0](x.contiguous())
                return inner(x)
        """)
    assert audit_source(model, "m.py").wrappers == []  # m[i](x) of a ModuleList, not a launch


def test_an_element_of_a_list_whose_elements_are_used_as_tensors_is_a_tensor():
    bad = """\
        def w(x, indices, out):
            n = indices[0].numel()
            idx = indices[0]
            for i in range(len(indices) - 1):
                idx = idx * x.shape[i + 1] + indices[i + 1]
            k[(n,)](idx, out, n)
            return out
        """
    assert codes(bad) == [(5, "WB107")]  # the flat index is computed from the index tensors on the host
    good = """\
        def w(x, sizes, meta, out):
            n = sizes[0] * sizes[1]
            if meta["x"].dtype == torch.float16:
                n = meta["n"] * 2
            k[(n,)](x, out, sizes[1])
            return out
        """
    assert codes(good) == []  # elements never used as tensors stay numbers; a dict's keys hold their own kinds
    slots = """\
        def w(tensors, pad: int):
            y = torch.empty(4, dtype=tensors[0].dtype)
            slots = list(tensors) + [tensors[0]] * pad
            k[(1,)](y, tuple(slots), 1)
            return y
        """
    assert codes(slots) == []  # joining and repeating a list of tensors moves no tensor data (examples/cat)
