"""A TensorList operator in Triton with fixed slots (kb/constraints/tensorlist-fixed-slots.md):
B_MAX pointer parameters per list formal, an element count per slot, one launch per call
whatever the list length; a padded slot repeats slot 0 with n = 0, so its loop runs zero times.
The host side is the page's own wrapper (kb_tools.kernels.page_code), with these launchers
bound to the kernel name it calls."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch

B_MAX = 8  # the page's contract maximum
CHUNK = 64


@triton.jit
def _slot_body(x_ptr, y_ptr, o_ptr, n, alpha, CHUNK: tl.constexpr):
    """Chunks c = pid, pid + programs, ... of one slot; none when n == 0."""
    for c in range(tl.program_id(0), tl.cdiv(n, CHUNK), tl.num_programs(0)):
        i = c * CHUNK + tl.arange(0, CHUNK)
        live = i < n
        tl.store(o_ptr + i, tl.load(x_ptr + i, mask=live) + alpha * tl.load(y_ptr + i, mask=live), mask=live)


@triton.jit
def foreach_add_kernel(x0, x1, x2, x3, x4, x5, x6, x7, y0, y1, y2, y3, y4, y5, y6, y7,
                       o0, o1, o2, o3, o4, o5, o6, o7, n0, n1, n2, n3, n4, n5, n6, n7, alpha,
                       CHUNK: tl.constexpr):
    _slot_body(x0, y0, o0, n0, alpha, CHUNK)
    _slot_body(x1, y1, o1, n1, alpha, CHUNK)
    _slot_body(x2, y2, o2, n2, alpha, CHUNK)
    _slot_body(x3, y3, o3, n3, alpha, CHUNK)
    _slot_body(x4, y4, o4, n4, alpha, CHUNK)
    _slot_body(x5, y5, o5, n5, alpha, CHUNK)
    _slot_body(x6, y6, o6, n6, alpha, CHUNK)
    _slot_body(x7, y7, o7, n7, alpha, CHUNK)


@triton.jit
def add_one_tensor_kernel(x_ptr, y_ptr, o_ptr, n, alpha, CHUNK: tl.constexpr):
    _slot_body(x_ptr, y_ptr, o_ptr, n, alpha, CHUNK)


def slots_launcher(*, backend: str, programs: int = 2):
    """``foreach_add_kernel(*x_slots, *y_slots, *o_slots, *sizes, alpha)`` as the page's Do
    wrapper calls it: one launch of the fixed-slot kernel."""
    def foreach_add_kernel_call(*args):
        if len(args) != 4 * B_MAX + 1:
            raise TypeError(f"the fixed-slot kernel takes {4 * B_MAX + 1} arguments (B_MAX = {B_MAX}), got {len(args)}")
        launch(foreach_add_kernel, (programs,), *args, backend=backend, CHUNK=CHUNK)
    return foreach_add_kernel_call


def per_tensor_launcher(*, backend: str, programs: int = 2):
    """``foreach_add_kernel(x, y, out, n, alpha)`` as the page's Don't calls it, once per tensor."""
    def one_tensor_call(x, y, out, n, alpha):
        launch(add_one_tensor_kernel, (programs,), x, y, out, n, alpha, backend=backend, CHUNK=CHUNK)
    return one_tensor_call
