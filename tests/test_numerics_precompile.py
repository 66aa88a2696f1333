"""make setup's compile of the one-pass loops: which dtype combinations it covers, and that one
of them runs and leaves the pass's verdict what it was."""

from __future__ import annotations

import torch

from kb_tools.numerics import criteria, precompile
from kb_tools.numerics.onepass import BITS_DTYPES, DIRECT_DTYPES


def test_every_decoded_dtype_is_compiled_against_the_goldens_promote_hands_it():
    from kb_tools.numerics.promote import promoted

    combos = set(precompile.combinations())
    for dut in BITS_DTYPES + DIRECT_DTYPES:
        assert (dut, dut) in combos and (dut, promoted(dut)) in combos, dut  # two-party: the DUT's dtype or promoted
        assert (dut, promoted(dut), dut) in combos, dut  # cross_check: the golden promoted, the third party as the DUT
    assert ("float16", "float64", "float16") not in combos  # two steps above: compiled on first use
    assert len(combos) == len(precompile.combinations()), "a combination is listed twice"


def test_combinations_read_as_the_same_arrays_compile_once():
    units = precompile.units()
    assert len({precompile.signature(u) for u in units}) == len(units)
    assert {precompile.signature(c) for c in precompile.combinations()} == {precompile.signature(u) for u in units}
    assert ("float8_e5m2", "float32") not in units  # read as float8_e4m3fn's bytes and a table
    assert precompile.signature(("float16", "float32")) != precompile.signature(("bfloat16", "float32"))


def test_each_unit_prints_a_line_as_it_ends(capsys, monkeypatch):
    monkeypatch.setattr(precompile, "units", lambda: [("float16", "float32"), ("float32", "float64", "float32")])
    assert precompile.main(["--jobs", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("precompile: 2 units to compile")
    assert len(lines) == 4 and lines[1].startswith("precompile: [1/2] pair float16 / float32 (")  # one worker: in order
    assert lines[2].startswith("precompile: [2/2] cross_check float32 / float64 / float32 (")
    assert lines[3].startswith("precompile: done, 2 units in ")


def test_a_combination_compiles_and_the_pass_still_judges():
    assert precompile.compile_one(("float16", "float32")) == ("float16", "float32")
    golden = torch.linspace(-1, 1, 64)
    assert criteria.mix_tolerance(golden.half(), golden).passed
    assert not criteria.mix_tolerance((golden + 1).half(), golden).passed
