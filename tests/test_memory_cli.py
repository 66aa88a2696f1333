"""kbt waves and kbt tiling: the seed's numbers, JSON shape, and one-line exit-2 errors."""

import json

import pytest


def test_waves_json_highest_first(kbt):
    r = kbt("waves", "--n", 100000, "--dtype", "float16", "--format", "json")
    assert r.code == 0
    plan = json.loads(r.out)
    assert plan == [{"start": 6400, "end": 100000}, {"start": 512, "end": 6400},
                    {"start": 256, "end": 512}, {"start": 0, "end": 256}]


def test_waves_text_and_empty(kbt):
    r = kbt("waves", "--n", 5000, "--dtype", "int64")
    assert r.code == 0 and "final prefix" in r.out and "wave 1" in r.out
    assert json.loads(kbt("waves", "--n", 0, "--format", "json").out) == []


@pytest.mark.parametrize("dtype, expected", [
    ("uint8", (16384, 2048, 16384, 65536, 83968)),
    ("float16", (16384, 2048, 32768, 65536, 100352)),
    ("float32", (16384, 2048, 65536, 65536, 133120)),
    ("float64", (14336, 1792, 114688, 57344, 173824)),
])
def test_tiling_192k_table(kbt, dtype, expected):
    r = kbt("tiling", "--ub", 196608, "--dtype", dtype, "--cores", 40, "--n", 4096 * 4096, "--format", "json")
    assert r.code == 0
    d = json.loads(r.out)
    assert (d["tileElements"], d["maskQueue"], d["outQueue"], d["workBuf"], d["total"]) == expected
    assert d["blockDim"] == 40


def test_tiling_text(kbt):
    r = kbt("tiling", "--ub", 196608, "--dtype", "bf16", "--n", 1000)
    assert r.code == 0 and "blockDim        1" in r.out and "total           100352 B" in r.out


@pytest.mark.parametrize("argv, code", [
    (("waves", "--n", "-5"), "ARG001"),
    (("waves", "--n", "ten"), "ARG001"),
    (("waves", "--n", "10", "--dtype", "complex7"), "ARG002"),  # every torch dtype is known (issue 38), complex64 too
    (("tiling", "--ub", "4096", "--n", "10"), "ARG003"),
    (("tiling", "--ub", "196608", "--n", "10", "--cores", "0"), "ARG001"),
    (("tiling", "--ub", "196608", "--n", "-1"), "ARG001"),
])
def test_bad_arguments_one_line_exit_2(kbt, argv, code):
    r = kbt(*argv)
    assert r.code == 2
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and code in lines[0] and "Traceback" not in r.err


def test_commands_import_no_numpy_or_torch():
    import subprocess
    import sys

    code = ("import sys, kb_tools.commands.waves as w, kb_tools.commands.tiling as t, kb_tools.memory.waves, "
            "kb_tools.memory.tiling; print('numpy' in sys.modules or 'torch' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
