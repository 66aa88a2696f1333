"""Round-4: nothing from the input drives the terminal (repro 24), and no error, foreseen or
not, reaches the user as a traceback (repros 12, 21, 22): the one top-level guard says it in
one line and keeps the traceback in the debug log, so it never hides a real bug."""

from __future__ import annotations

import logging

import pytest

from conftest import REPO
from hostile4_support import run_kbt

ESCAPES = "\x1b]0;PWNED\x07\x1b[2J\x1b[31mred\x9b1m"


def test_a_spec_description_reaches_the_terminal_escaped(tmp_path):
    (tmp_path / "ops").mkdir()
    spec = ("op: esc\ndescription: {}\ntopologies: [row-reduction]\nproperties:\n  dtypes: [float16]\n"
            "criteria:\n  float16: cross_check\n")
    (tmp_path / "ops" / "esc.yaml").write_text(spec.format('"' + ESCAPES.encode("unicode_escape").decode() + '"'))
    run = run_kbt("--kb-root", REPO, "review", "ops/esc.yaml", "--root", ".", cwd=tmp_path)
    assert run.code == 0, run.err
    assert not any(c in run.out for c in "\x1b\x07\x9b")
    assert "\\x1b]0;PWNED\\x07\\x1b[2J" in run.out
    (tmp_path / "ops" / "esc.yaml").write_text(spec.format("plain words"))  # control: text unchanged
    assert "| what it does | plain words |" in run_kbt("--kb-root", REPO, "review", "ops/esc.yaml", "--root", ".", cwd=tmp_path).out


def test_a_file_name_cannot_forge_a_diagnostic_line(tmp_path):
    name = "w\nok.py:1:1: WB000 all findings fixed, nothing to do\nx.py"
    (tmp_path / name).write_text("import triton\n@triton.jit\ndef k(x):\n    pass\ndef softmax_wrapper(x):\n    k[(1,)](x.float())\n")
    run = run_kbt("audit", ".", cwd=tmp_path)
    assert run.code == 1
    lines = (run.out + run.err).splitlines()
    assert not any(line.startswith("ok.py") for line in lines)
    assert any(line.startswith("w\\nok.py:1:1: WB000") and "WB101" in line for line in lines), lines


def test_an_unforeseen_error_is_one_line_and_its_traceback_is_logged(kbt, monkeypatch, caplog):
    from kb_tools.commands import waves

    def broken(args):
        raise KeyError("float8_e4m3fn")

    monkeypatch.setattr(waves, "run", broken)
    with caplog.at_level(logging.DEBUG, logger="kb_tools"):
        result = kbt("waves", "--n", "1000")
    assert result.code == 3 and "Traceback" not in result.err
    (line,) = result.err.strip().splitlines()
    assert line.startswith("kbt: KBT999 internal error") and "KeyError: 'float8_e4m3fn'" in line
    logged = [r for r in caplog.records if r.levelno == logging.DEBUG and r.exc_info]
    assert logged and logged[-1].exc_info[0] is KeyError  # the bug is kept, not hidden
    monkeypatch.undo()
    assert kbt("waves", "--n", "1000").code == 0  # control


def test_opkb_debug_shows_the_traceback(kbt, monkeypatch):
    from kb_tools.commands import waves

    def broken(args):
        raise KeyError("float8_e4m3fn")

    monkeypatch.setattr(waves, "run", broken)
    monkeypatch.setenv("OPKB_DEBUG", "1")
    log = logging.getLogger("kb_tools")
    try:
        result = kbt("waves", "--n", "1000")
    finally:
        for handler in list(log.handlers):
            log.removeHandler(handler)
        log.setLevel(logging.NOTSET)
    assert result.code == 3 and "Traceback (most recent call last)" in result.err and "KeyError" in result.err
    assert result.err.strip().splitlines()[-1].startswith("kbt: KBT999")


@pytest.mark.parametrize("argv", [["waves", "--n", "1000", "--dtype", "float8_e4m3fn"],
                                  ["tiling", "--ub", "196608", "--n", "1000", "--dtype", "float8_e5m2"]])
def test_float8_dtypes_never_give_a_traceback(argv):
    run = run_kbt(*argv)
    assert "Traceback" not in run.err and len(run.err.strip().splitlines()) <= 1, run.err[-800:]
