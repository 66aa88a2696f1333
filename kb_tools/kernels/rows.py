"""A row mean in Triton whose tile width is a compile-time constant
(kb/patterns/dynamic-shape-versions.md, kb/constraints/op-prototype.md): each TILE the wrapper
picks from shape metadata is one specialisation (one version) of the same kernel."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch


@triton.jit
def mean_kernel(x_ptr, y_ptr, n, stride, rows, TILE: tl.constexpr):
    """Program r: mean of row r's n elements, accumulated in fp32 TILE at a time. In a
    contiguous tensor the reduced axis's stride is the product of the axes after it, so row r
    starts at (r // stride)·n·stride + r % stride and steps by stride."""
    r = tl.program_id(0)
    if r < rows:
        start = (r // stride) * n * stride + r % stride
        acc = tl.zeros([TILE], tl.float32)
        for c in range(0, tl.cdiv(n, TILE)):
            k = c * TILE + tl.arange(0, TILE)
            acc += tl.load(x_ptr + start + k * stride, mask=k < n, other=0).to(tl.float32)
        tl.store(y_ptr + r, (tl.sum(acc, axis=0) / n).to(y_ptr.dtype.element_ty))


def mean_launcher(*, backend: str, versions: list | None = None):
    """``mean_kernel(x, y, n, stride, rows, tile)`` as the pages' wrappers call it: one launch,
    one program per row (one program when there are none) over a contiguous x; each tile
    used is appended to ``versions``, the specialisations a build would compile."""
    def mean_kernel_call(x, y, n, stride, rows, tile):
        if versions is not None:
            versions.append(tile)
        launch(mean_kernel, (max(1, rows),), x, y, n, stride, rows, backend=backend, TILE=tile)
    return mean_kernel_call
