"""Tile size, core split and UB budget of the BernoulliMask kernel (seed 001 §3.3.2, §3.4.3).

Pure integer arithmetic, so ``kbt tiling`` answers without numpy or torch. The seed's table
for a 192 KiB UB is reproduced exactly by :func:`plan_tiling` (see the tests).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from kb_tools.numerics.dtypes import width

# Element widths of the ten output dtypes of seed 001 §1.3 (bool is stored as one byte).
DTYPE_BYTES = {
    "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8,
    "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8, "bool": 1,
}

RESERVED_UB = 8 * 1024  # bytes kept free in UB (§3.3.2)
WORK_BYTES = 4  # the fp32 work buffer per element
MASK_BYTES = 1  # conservative mask cost per element used for sizing (§3.3.2)
TILE_CAP = 16384
ALIGN_ELEMENTS = 256
ALIGN_BYTES = 32  # UB queue alignment


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def align_up(x: int, a: int) -> int:
    return ceil_div(x, a) * a


def align_down(x: int, a: int) -> int:
    return x // a * a


def dtype_bytes(name: str) -> int:
    """Width in bytes of an output dtype (aliases such as fp16 accepted; every dtype torch has,
    float8 and the unsigned integers included); ValueError if torch has no such dtype."""
    found = width(name)
    if found is None:
        raise ValueError(f"unknown dtype {name!r}; expected a torch dtype name such as {', '.join(DTYPE_BYTES)}")
    return found


def tile_elements(ub_bytes: int, width: int) -> int:
    """min(align_down((UB - 8 KiB) / (B + 4 + 1), 256), 16384); ValueError when UB cannot
    hold one 256-element tile."""
    per_element = width + WORK_BYTES + MASK_BYTES
    tile = min(align_down((ub_bytes - RESERVED_UB) // per_element, ALIGN_ELEMENTS), TILE_CAP)
    if tile < ALIGN_ELEMENTS:
        smallest = RESERVED_UB + ALIGN_ELEMENTS * per_element
        raise ValueError(f"UB of {ub_bytes} B cannot hold one {ALIGN_ELEMENTS}-element tile of "
                         f"{width}-byte elements (needs at least {smallest} B)")
    return tile


@dataclass(frozen=True)
class Tiling:
    ub_bytes: int
    width: int  # B, bytes per output element
    n: int  # totalElements
    cores: int  # vector cores available
    tile_elements: int
    block_dim: int  # cores launched; 0 for an empty tensor (no kernel, §3.2.1)
    elements_per_core: int
    mask_queue: int
    out_queue: int
    work_buf: int

    @property
    def ub_total(self) -> int:
        return self.mask_queue + self.out_queue + self.work_buf

    def as_dict(self) -> dict:
        return {**asdict(self), "ub_total": self.ub_total}


def plan_tiling(ub_bytes: int, width: int, cores: int, n: int) -> Tiling:
    """The host tiling of §3.3.2 and the single-buffer UB budget of §3.4.3."""
    if n < 0:
        raise ValueError(f"element count must be >= 0, got {n}")
    if cores < 1:
        raise ValueError(f"core count must be >= 1, got {cores}")
    if width not in (1, 2, 4, 8):
        raise ValueError(f"element width must be 1, 2, 4 or 8 bytes, got {width}")
    tile = tile_elements(ub_bytes, width)
    block_dim = min(cores, ceil_div(n, tile))
    per_core = align_up(ceil_div(n, block_dim), ALIGN_ELEMENTS) if block_dim else 0
    return Tiling(
        ub_bytes=ub_bytes, width=width, n=n, cores=cores, tile_elements=tile,
        block_dim=block_dim, elements_per_core=per_core,
        mask_queue=align_up(ceil_div(tile, 8), ALIGN_BYTES),
        out_queue=align_up(tile * width, ALIGN_BYTES),
        work_buf=align_up(tile * WORK_BYTES, ALIGN_BYTES),
    )
