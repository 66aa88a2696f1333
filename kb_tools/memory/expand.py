"""In-place expansion of a packed mask that lies at the start of the output's own storage
(seed 001 §3.4.1–§3.4.2), in numpy and in torch (CPU, CUDA).

Bit i of the mask (least significant bit first in each byte, numpy's ``bitorder='little'``)
becomes element i of the output, as the exact 0 or 1 of its dtype. The waves of
:mod:`kb_tools.memory.waves` run from high addresses to low; inside a wave the range is cut
into tiles, and each tile copies its mask bytes out before writing, so every temporary is
bounded by one tile: that is the ``tiles`` route, the structure of the NPU kernel. The
``kernel`` route runs each wave as one compiled call instead — numba on the CPU
(:mod:`kb_tools.memory.kernels`), Triton on CUDA — where the call or launch boundary plays
the part of the NPU's SyncAll between waves. ``auto`` takes the kernel where its compiler
imports and the tiles otherwise.

:func:`expand_low_to_high` is the tempting order, kept as the counter-example: a tile's
writes land on mask bytes of later tiles before they are read.
"""

from __future__ import annotations

from functools import cached_property

from kb_tools.memory.tiling import ALIGN_ELEMENTS, ceil_div, tile_elements
from kb_tools.memory.waves import plan_waves

DEFAULT_UB = 192 * 1024  # A2's UB (§3.4.3); sizes the default tile as the kernel would
BF16_ONE_BITS = 0x3F80  # bfloat16 1.0; numpy carries bfloat16 as these uint16 bit patterns


def default_tile(width: int) -> int:
    return tile_elements(DEFAULT_UB, width)


def _tiles(start: int, end: int, tile: int, descending: bool):
    bounds = [(a, min(a + tile, end)) for a in range(start, end, tile)]
    return reversed(bounds) if descending else bounds


def _bit_table(xp, one=1):
    """Row b holds the eight bits of byte b, least significant first, as 0/one of ``dtype``:
    a 256x8 lookup built with shifts (independent of numpy's unpackbits)."""
    rows = (xp.arange(256)[:, None] >> xp.arange(8)[None, :]) & 1
    return rows * one


class _Numpy:
    """Tile primitives over a C-contiguous numpy array."""

    def __init__(self, out, bfloat16: bool):
        import numpy as np

        if not out.flags.c_contiguous:
            raise ValueError("in-place expansion needs a C-contiguous array (the mask lies in its own bytes)")
        if bfloat16 and out.dtype != np.uint16:
            raise ValueError("bfloat16 in numpy is carried as uint16 bit patterns")
        self.flat = out.reshape(-1)
        self.raw = self.flat.view(np.uint8)
        self.width = out.dtype.itemsize
        self.bfloat16 = bfloat16
        if not out.flags.writeable:
            raise ValueError("in-place expansion needs a writeable array")
        self.cpu = True
        self.one_bits = None  # the bit pattern of the dtype's 1, for the compiled kernel
        if bfloat16:
            self.one_bits = BF16_ONE_BITS
        elif self.width in (1, 2, 4, 8):
            self.one_bits = int(np.ones(1, out.dtype).view(f"i{self.width}")[0])
        self.threads = None  # the CPU count (kernels.expand_wave)

    @cached_property
    def table(self):
        """The tiles' 256x8 lookup in the array's dtype (the kernel route has its own)."""
        import numpy as np

        return _bit_table(np, BF16_ONE_BITS if self.bfloat16 else 1).astype(self.flat.dtype)

    def words(self):
        """The flat array as integers of its own width, for the compiled kernel."""
        return self.flat.view(f"i{self.width}")

    def expand(self, a: int, b: int) -> None:
        import numpy as np

        index = self.raw[a // 8: ceil_div(b, 8)].astype(np.intp)  # the tile's mask, read whole first
        whole = (b - a) // 8
        np.take(self.table, index[:whole], axis=0, out=self.flat[a: a + 8 * whole].reshape(-1, 8))
        if a + 8 * whole < b:
            self.flat[a + 8 * whole: b] = self.table[index[whole], : b - a - 8 * whole]


class _Torch:
    """Tile primitives over a contiguous torch tensor; a Triton kernel per wave on CUDA, or on
    the CPU through Triton's interpreter when ``backend`` is "triton"."""

    def __init__(self, out, backend: str | None = None):
        import torch

        if not out.is_contiguous():
            raise ValueError("in-place expansion needs a contiguous tensor (the mask lies in its own bytes)")
        self.torch = torch
        self.flat = out.view(-1)
        self.raw = self.flat.view(torch.uint8)
        self.width = out.element_size()
        if backend is None and out.device.type == "cuda":
            backend = "cuda"
        self.kernel = _triton_wave(backend) if backend in ("cuda", "npu", "triton", "triton-ascend") else None
        self.cpu = out.device.type == "cpu"
        ints = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
        self.int_dtype = ints.get(self.width)
        self.one_bits = int(torch.ones((), dtype=out.dtype).view(self.int_dtype).item()) if self.int_dtype else None
        self.threads = torch.get_num_threads()  # as many as torch's own ops (fill_) use

    @cached_property
    def table(self):
        """The tiles' 256x8 lookup in the tensor's dtype, on its device."""
        return _bit_table(self.torch).to(device=self.flat.device, dtype=self.flat.dtype)

    def words(self):
        """The flat tensor as a numpy integer array of its own width (shared memory)."""
        return self.flat.detach().view(self.int_dtype).numpy()

    def expand(self, a: int, b: int) -> None:
        self.expand_from(self.raw, a, b)

    def expand_from(self, mask, a: int, b: int) -> None:
        """Elements a..b from ``mask`` (the output's own bytes or an independent mask)."""
        index = mask[a // 8: ceil_div(b, 8)].to(self.torch.int64)  # the tile's mask, read whole first
        whole = (b - a) // 8
        self.torch.index_select(self.table, 0, index[:whole], out=self.flat[a: a + 8 * whole].view(-1, 8))
        if a + 8 * whole < b:
            self.flat[a + 8 * whole: b].copy_(self.table[index[whole], : b - a - 8 * whole])

    def expand_wave(self, start: int, end: int) -> None:
        """One launch for a whole unbuffered wave; its writes miss every unread mask byte,
        so its programs may run in any order."""
        target = self.flat.view(self.torch.uint8) if self.flat.dtype == self.torch.bool else self.flat
        self.kernel(self.raw, target, start, end)


def _triton_wave(backend: str):
    """A launcher for the per-wave Triton kernel on ``backend`` (cuda, or triton: the CPU
    interpreter), or None when Triton does not import."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    from kb_tools.runtime.backends import launch as launch_on

    @triton.jit
    def wave_kernel(mask_ptr, out_ptr, start, end, BLOCK: tl.constexpr):
        idx = start + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        live = idx < end
        byte = tl.load(mask_ptr + idx // 8, mask=live, other=0)
        bit = (byte >> (idx % 8).to(tl.uint8)) & 1
        # by way of float32: exact for 0 and 1, and converted by value everywhere, where
        # uint8 -> bfloat16 came out as the bit pattern 0x0001 in Triton's CPU interpreter
        tl.store(out_ptr + idx, bit.to(tl.float32).to(out_ptr.dtype.element_ty), mask=live)

    def launch(mask, out, start, end, block=1024):
        launch_on(wave_kernel, (ceil_div(end - start, block),), mask, out, start, end, backend=backend, BLOCK=block)

    return launch


def _ops(out, bfloat16: bool, backend: str | None = None):
    import numpy as np

    if isinstance(out, np.ndarray):
        if backend is not None:
            raise ValueError("backend is for torch tensors; a numpy array expands on the CPU")
        return _Numpy(out, bfloat16)
    if bfloat16:
        raise ValueError("bfloat16=True is for numpy arrays only; a torch tensor has its own bfloat16")
    return _Torch(out, backend)


ROUTES = ("auto", "kernel", "tiles")


def _cpu_kernel(ops):
    """(kernels module, table) when the numba loop can take this output, else None."""
    if not ops.cpu or ops.one_bits is None:
        return None
    try:
        from kb_tools.memory import kernels
    except ImportError:
        return None
    return kernels, kernels.bit_table(ops.one_bits, ops.width)


def _choose(ops, route: str):
    """(cpu kernel or None, use the Triton launch) for ``route``; ValueError when the kernel
    route is asked for where no compiler can serve it."""
    if route not in ROUTES:
        raise ValueError(f"route must be one of {', '.join(ROUTES)}, got {route!r}")
    if route == "tiles":
        return None, False
    triton = getattr(ops, "kernel", None) is not None
    cpu = None if triton else _cpu_kernel(ops)
    if route == "kernel" and not (triton or cpu):
        raise ValueError("route='kernel' needs numba (CPU, element width 1/2/4/8 bytes) or Triton (CUDA)")
    return cpu, triton


def expand_inplace(out, *, tile: int | None = None, bfloat16: bool = False, route: str = "auto",
                   threads: int | None = None, backend: str | None = None):
    """Expand the packed mask in ``out``'s first ceil(n/8) bytes into 0/1 of its dtype, high
    to low in waves. ``bfloat16`` marks a numpy uint16 array holding bfloat16 bit patterns;
    ``route`` picks a compiled call per wave (``kernel``), the tiles (``tiles``, whose size
    ``tile`` sets) or the first that this machine can run (``auto``). ``threads`` is the CPU
    kernel's thread count (default: torch's for a tensor, the CPU count for an array).
    ``backend="triton"`` runs the per-wave Triton kernel on a CPU tensor in Triton's interpreter
    (the process must interpret: kb_tools.runtime.backends), the same source as on CUDA."""
    ops = _ops(out, bfloat16, backend)
    if threads is not None:
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        ops.threads = threads
    n = ops.flat.shape[0]
    tile = tile or default_tile(ops.width)
    if tile % ALIGN_ELEMENTS:
        raise ValueError(f"tile must be a multiple of {ALIGN_ELEMENTS} elements, got {tile}")
    cpu, triton = _choose(ops, route)
    if cpu:
        kernels, table = cpu
        words = ops.words()
        for wave in plan_waves(n, ops.width):
            kernels.expand_wave(words, table, wave.start, wave.end, wave.buffered, ops.threads)
        return out
    for wave in plan_waves(n, ops.width):
        if triton and not wave.buffered:
            ops.expand_wave(wave.start, wave.end)
            continue
        for a, b in _tiles(wave.start, wave.end, tile, descending=True):
            ops.expand(a, b)
    return out


def expand_low_to_high(out, *, tile: int = ALIGN_ELEMENTS, bfloat16: bool = False):
    """The wrong order, for demonstration: tiles from element 0 upward, each reading its mask
    bytes after the tiles below it have already written over them."""
    ops = _ops(out, bfloat16)
    for a, b in _tiles(0, ops.flat.shape[0], tile, descending=False):
        ops.expand(a, b)
    return out


def expand_from(mask, out, *, tile: int | None = None):
    """The separate-mask path: expand an independent packed mask (a torch uint8 tensor) into a
    contiguous ``out``, tile by tile. No aliasing, so order does not matter."""
    ops = _Torch(out)
    tile = tile or default_tile(ops.width)
    n = ops.flat.shape[0]
    for a, b in _tiles(0, n, tile, descending=False):
        ops.expand_from(mask, a, b)
    return out
