"""Strided access in Triton: a softmax that reads its axis where it lies
(kb/constraints/layout-format.md) and the non-contiguous fallback's in-kernel write-back
through the output's strides, fp64 moved as int64 bit patterns
(kb/patterns/non-contiguous-fallback.md). Both take 2-D views of any strides and offset."""

from __future__ import annotations

import triton
import triton.language as tl

from kb_tools.runtime.backends import launch

FP64_ONE_BITS = 0x3FF0000000000000  # 1.0 as an IEEE double: high word 0x3FF00000, low word 0


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n, x_row, x_step, y_row, y_step, BLOCK: tl.constexpr):
    """Program r: softmax of the n elements x[r*x_row + k*x_step], stored at y[r*y_row + k*y_step].
    The strides are launch scalars, so a transposed or sliced view is read in place."""
    r = tl.program_id(0)
    k = tl.arange(0, BLOCK)
    live = k < n
    x = tl.load(x_ptr + r * x_row + k * x_step, mask=live, other=float("-inf")).to(tl.float32)
    e = tl.where(live, tl.exp(x - tl.max(x, axis=0)), 0.0)
    tl.store(y_ptr + r * y_row + k * y_step, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=live)


def softmax(x, dim: int, *, backend: str, y=None):
    """Softmax of a 2-D ``x`` along ``dim`` in one launch, reading x through its strides.
    Returns (y, bytes moved: one read and one write of each element)."""
    import torch

    dim %= 2
    rows, n = x.shape[1 - dim], x.shape[dim]
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device) if y is None else y
    if rows and n:
        launch(softmax_kernel, (rows,), x, y, n, x.stride(1 - dim), x.stride(dim), y.stride(1 - dim), y.stride(dim),
               backend=backend, BLOCK=triton.next_power_of_2(n))
    return y, 2 * x.numel() * x.element_size()


def softmax_converted(x, dim: int, *, backend: str):
    """The convert-compute-convert structure the page forbids: a contiguous copy with the axis
    innermost, the kernel, a copy back. Same values; (y, bytes moved) counts all three passes."""
    moved_in = x.movedim(dim, -1).contiguous()
    y_inner, kernel_bytes = softmax(moved_in, -1, backend=backend)
    y = y_inner.movedim(-1, dim).contiguous()
    copy_bytes = 2 * x.numel() * x.element_size()
    return y, kernel_bytes + 2 * copy_bytes


@triton.jit
def expand_to_view_kernel(mask_ptr, out_ptr, n, cols, row_stride, col_stride,
                          FP64: tl.constexpr, BLOCK: tl.constexpr):
    """A fallback tile: bits [lo, lo + BLOCK) of an independent packed mask (least significant
    bit first) become 0/1 and are stored through out's strides, element i at (i // cols, i % cols).
    An fp64 output is written through its pointer read as int64 words: bit patterns, no value
    conversion."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    byte = tl.load(mask_ptr + i // 8, mask=live, other=0)
    bit = (byte >> (i % 8).to(tl.uint8)) & 1
    where = (i // cols) * row_stride + (i % cols) * col_stride
    if FP64:
        tl.store(out_ptr.to(tl.pointer_type(tl.int64)) + where, bit.to(tl.int64) * 0x3FF0000000000000, mask=live)
    else:
        tl.store(out_ptr + where, bit.to(tl.float32).to(out_ptr.dtype.element_ty), mask=live)


def expand_to_view(mask, out, *, backend: str, block: int = 64, dense: bool = False):
    """Expand ``mask`` into the 2-D view ``out`` in one launch. ``dense=True`` is the violation:
    the view's own strides ignored, as if it were the dense output the alias path expands into."""
    import torch

    n = out.numel()
    cols = out.shape[1] if n else 1
    strides = (cols, 1) if dense else out.stride()
    launch(expand_to_view_kernel, (max(1, triton.cdiv(n, block)),), mask, out, n, cols, *strides,
           backend=backend, FP64=out.dtype == torch.float64, BLOCK=block)
    return out


@triton.jit
def write_back_kernel(src_ptr, out_ptr, n, cols, row_stride, col_stride, WORD: tl.constexpr, BLOCK: tl.constexpr):
    """The in-kernel "ViewCopy": contiguous src element i lands at out's (i // cols, i % cols),
    both read as unsigned words of the element's width, so any bit pattern arrives unchanged."""
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    live = i < n
    word = tl.load(src_ptr.to(tl.pointer_type(WORD)) + i, mask=live)
    where = (i // cols) * row_stride + (i % cols) * col_stride
    tl.store(out_ptr.to(tl.pointer_type(WORD)) + where, word, mask=live)


WORDS = {1: tl.uint8, 2: tl.uint16, 4: tl.uint32, 8: tl.uint64}


def write_back(src, out, *, backend: str, block: int = 64):
    """Place contiguous ``src`` (out's numel elements, same dtype) into the 2-D view ``out``."""
    n = out.numel()
    cols = out.shape[1] if n else 1
    launch(write_back_kernel, (max(1, triton.cdiv(n, block)),), src, out, n, cols, *out.stride(),
           backend=backend, WORD=WORDS[out.element_size()], BLOCK=block)
    return out
