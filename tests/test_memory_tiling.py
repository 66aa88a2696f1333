"""Tiling and UB budget of seed 001 §3.3.2 / §3.4.3: the 192 KiB table, core split, bad input."""

import pytest

from kb_tools.memory.tiling import dtype_bytes, plan_tiling, tile_elements

# seed 001 §3.4.3, A2 UB = 192 KiB: width -> (tileElements, maskQueue, outQueue, workBuf, total)
SEED_TABLE = {
    1: (16384, 2048, 16384, 65536, 83968),
    2: (16384, 2048, 32768, 65536, 100352),
    4: (16384, 2048, 65536, 65536, 133120),
    8: (14336, 1792, 114688, 57344, 173824),
}


@pytest.mark.parametrize("width", sorted(SEED_TABLE))
def test_192k_table_exact(width):
    t = plan_tiling(192 * 1024, width, 40, 4096 * 4096)
    assert (t.tile_elements, t.mask_queue, t.out_queue, t.work_buf, t.ub_total) == SEED_TABLE[width]
    assert t.ub_total <= 192 * 1024 - 8 * 1024


def test_core_split():
    big = plan_tiling(192 * 1024, 4, 40, 4096 * 4096)
    assert big.block_dim == 40 and big.elements_per_core % 256 == 0
    assert big.elements_per_core * 40 >= 4096 * 4096
    small = plan_tiling(192 * 1024, 4, 40, 20000)  # two tiles -> two cores
    assert (small.block_dim, small.elements_per_core) == (2, 10240)
    assert plan_tiling(192 * 1024, 4, 40, 0).block_dim == 0  # empty: nothing launched


def test_smaller_ub_shrinks_the_tile():
    assert tile_elements(8192 + 256 * 9, 4) == 256
    with pytest.raises(ValueError, match="cannot hold one 256-element tile"):
        tile_elements(8192 + 256 * 9 - 1, 4)


def test_dtype_widths_and_aliases():
    assert [dtype_bytes(d) for d in ("bool", "bf16", "float", "int64")] == [1, 2, 4, 8]
    assert [dtype_bytes(d) for d in ("complex64", "float8_e4m3fn", "uint16")] == [8, 1, 2]  # every torch dtype (issue 38.6)
    with pytest.raises(ValueError, match="unknown dtype"):
        dtype_bytes("complex7")
