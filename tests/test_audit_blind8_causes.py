"""The general causes of the disagreements on blind batch 8 (attorch and unsloth's kernels, issue
24), as good and bad code. A name another module of the tree binds to a torch attribute at module
level, even on one branch of an ``if`` beside a def of it on the other (unsloth's
``torch_gpu_device = torch.cuda.device``), is that torch call wherever it is imported. A torch
decorator (``@custom_bwd``, ``@torch._disable_dynamo``, ``@torch.no_grad``) runs torch code around
every call: a finding at its line, strict-only for ``@custom_fwd``'s read of the autocast state. A
buffer returned only through a reduction (``loss = loss.sum()``, ``part.sum(dim=0)``) is scratch. Code after an unconditional
``raise`` or ``return`` runs on no path: nothing there is reported (a ``finally`` block still runs).
Smaller ones: ``.to(device)`` of a value of unknown kind is a host cast (only torch objects have
it); a function the wrapper defines and hands on without calling (an ``alloc_fn`` for
``triton.set_allocator``) allocates scratch; a name bound to one of two imported kernels by a
choice and launched as ``name[grid](...)`` is a kernel choice."""

from __future__ import annotations

import textwrap
from pathlib import Path

from audit_cases import HEAD, codes, tree_findings


def tree_codes(folder: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    """(file, line, code) of every finding when ``files`` are audited as one tree."""
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text))
    return sorted((Path(path).name, line, code) for path, line, code, _ in tree_findings(folder))


def test_a_torch_alias_bound_on_a_branch_of_another_module_is_that_torch_call(tmp_path):
    utils = """\
        import contextlib
        import torch
        if DEVICE_COUNT > 1:
            gpu_device = torch.cuda.device
        else:
            def gpu_device(d):
                return contextlib.nullcontext()
        def plain(d):
            return contextlib.nullcontext()
        """
    bad = HEAD + "from utils import gpu_device\n\ndef w(x, y):\n    with gpu_device(x.device):\n" \
        "        k[(1,)](x, y, 1, 1)\n    return y\n"
    assert tree_codes(tmp_path, {"utils.py": utils, "w.py": bad}) == [("w.py", 13, "WB113")]
    good = bad.replace("import gpu_device", "import plain as gpu_device")
    assert tree_codes(tmp_path, {"utils.py": utils, "w.py": good}) == []


def test_a_torch_decorator_runs_torch_around_every_call_of_the_wrapper():
    bad = """\
        from torch.amp import custom_bwd, custom_fwd
        class F(torch.autograd.Function):
            @staticmethod
            @custom_fwd(device_type='cuda')
            def forward(ctx, x, y):
                k[(1,)](x, y, 1, 1)
                return y
            @staticmethod
            @custom_bwd(device_type='cuda')
            def backward(ctx, x, y):
                k[(1,)](x, y, 1, 1)
                return y
        @torch._disable_dynamo
        def w(x, y):
            k[(1,)](x, y, 1, 1)
            return y
        @torch.no_grad()
        def v(x, y):
            k[(1,)](x, y, 1, 1)
            return y
        """
    assert codes(bad) == [(4, "WB113"), (9, "WB113"), (13, "WB113"), (17, "WB113")]
    assert codes(bad, policy="lenient") == [(9, "WB113"), (13, "WB113"), (17, "WB113")]  # @custom_fwd only reads state
    good = """\
        @torch.compiler.allow_in_graph
        @functools.lru_cache
        def w(x, y):
            k[(1,)](x, y, 1, 1)
            return y
        """
    assert codes(good) == []  # registered with dynamo at import, handed back unchanged


def test_a_buffer_returned_only_through_a_reduction_is_scratch():
    bad = """\
        def w(x):
            part = torch.empty((4, 8), dtype=torch.float32, device=x.device)
            loss = torch.empty(4, device=x.device)
            k[(4,)](x, part, loss, 4)
            loss = loss.sum()
            return part.sum(dim=0), loss
        """
    assert codes(bad) == [(2, "WB104"), (3, "WB104"), (5, "WB107"), (6, "WB107")]
    assert [line for line, code in codes(bad, policy="lenient") if code == "WB104"] == []  # scratch: strict-only
    good = """\
        def w(x):
            out = torch.empty((4, 8), device=x.device)
            k[(4,)](x, out, 4, 8)
            out = out.view(32)
            return out[:16]
        """
    assert codes(good) == [(4, "WB103"), (5, "WB103")]  # the views are host work; the buffer is the output


def test_code_after_an_unconditional_raise_or_return_runs_on_no_path():
    bad = """\
        def w(x, y):
            if x.dim() != 2:
                raise ValueError("2-d only")
            k[(1,)](x.contiguous(), y, 1, 1)
            return y
        """
    assert codes(bad) == [(4, "WB102")]  # a raise on one branch leaves the other path running
    good = """\
        def w(x, y):
            raise NotImplementedError
            x = x.contiguous()
            k[(1,)](x, y, 1, 1)
            return y.float()
        def v(x, y):
            try:
                k[(1,)](x, y, 1, 1)
                return y
            finally:
                x.contiguous()
        """
    assert codes(good) == [(11, "WB102")]  # nothing after the raise runs; a finally block always does


def test_a_move_to_a_device_of_an_argument_of_unknown_kind_is_a_host_cast():
    bad = """\
        def w(x, labels, y):
            device = x.device
            labels = labels.to(device)
            k[(1,)](x, labels, y, 1)
            if ignore_index(labels == -100):
                return y
            return y
        """
    # only torch objects have .to(device), whatever else labels meets; from there on it is a tensor
    assert codes(bad) == [(3, "WB101"), (5, "WB107")]
    good = """\
        def w(x, y, plan=None):
            plan = plan.to(4)
            k[(1,)](x, plan, y, 1)
            return y
        """
    assert codes(good) == []  # `.to(4)` says nothing of what plan is


def test_a_function_handed_on_and_never_called_allocates_scratch():
    bad = """\
        def w(x, y):
            def alloc_fn(size, alignment, stream):
                return torch.empty(size, device="cuda", dtype=torch.int8)
            triton.set_allocator(alloc_fn)
            k[(1,)](x, y, 1, 1)
            return y
        """
    assert codes(bad) == [(3, "WB104")]
    good = """\
        def w(x):
            def make(n):
                return torch.empty(n, device=x.device)
            y = make(4)
            k[(1,)](x, y, 4, 1)
            return y
        """
    assert codes(good) == []  # called by the wrapper: its buffer may be the output


def test_one_of_two_imported_kernels_picked_by_a_choice_is_a_kernel_choice():
    bad = """\
        from kernels import fast_kernel, tuned_kernel
        def w(x, y, autotune):
            kernel = tuned_kernel if autotune else fast_kernel
            kernel[(1,)](x, y, 1, 1)
            return y
        """
    assert codes(bad) == [(4, "WB109")]
    assert codes(bad, policy="lenient") == []  # a kernel chosen by branch: strict-only
    good = """\
        from kernels import fast_kernel
        def w(x, y):
            kernel = fast_kernel
            kernel[(1,)](x, y, 1, 1)
            return y
        """
    assert codes(good) == []
