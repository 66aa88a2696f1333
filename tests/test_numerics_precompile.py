"""make setup's compile of the one-pass loops: which dtype combinations it covers, and that one
of them runs and leaves the pass's verdict what it was."""

from __future__ import annotations

import torch

from kb_tools.numerics import criteria, precompile
from kb_tools.numerics.onepass import BITS_DTYPES, DIRECT_DTYPES


def test_every_decoded_dtype_is_compiled_against_its_own_fp32_and_fp64_goldens():
    combos = set(precompile.combinations())
    for dut in BITS_DTYPES + DIRECT_DTYPES:
        for golden in (dut, "float32", "float64"):
            assert (dut, golden) in combos and (dut, golden, dut) in combos, (dut, golden)
    assert len(combos) == len(precompile.combinations()), "a combination is listed twice"


def test_a_combination_compiles_and_the_pass_still_judges():
    assert precompile.compile_one(("float16", "float32")) == ("float16", "float32")
    golden = torch.linspace(-1, 1, 64)
    assert criteria.mix_tolerance(golden.half(), golden).passed
    assert not criteria.mix_tolerance((golden + 1).half(), golden).passed
