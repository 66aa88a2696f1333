"""kbt audit on CANN goldens: GD107-GD111 (and GD102, GD103 there) judged with the folder's own facts,
one bad and one good golden per code (tests/fixtures/audit_cann), no --spec."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kb_tools.cli import main

HERE = Path(__file__).parent / "fixtures"
TEMPLATE = HERE / "cann_golden" / "math" / "scale_add_good"
CODES = ["GD107", "GD108", "GD109", "GD110", "GD111"]


def operator_with(golden: Path, root: Path) -> Path:
    op = root / "math" / "op"
    shutil.copytree(TEMPLATE / "op_host", op / "op_host")
    shutil.copytree(TEMPLATE / "op_kernel", op / "op_kernel")
    (op / "tests" / "assets").mkdir(parents=True)
    shutil.copyfile(golden, op / "tests" / "assets" / "golden.py")
    return root


def audited(root: Path, capsys) -> tuple[int, list[str]]:
    code = main(["audit", str(root)])
    out = capsys.readouterr().out.splitlines()
    return code, [line.split(": ")[1].split()[0] for line in out if ".py:" in line]


@pytest.mark.parametrize("code", CODES)
def test_bad_golden_gives_its_code_and_good_gives_none(tmp_path, capsys, code):
    bad_code, bad = audited(operator_with(HERE / "audit_cann" / f"{code}_bad.py", tmp_path / "bad"), capsys)
    assert bad == [code]
    assert bad_code == (0 if code == "GD111" else 1)  # GD111 is a warning
    good_code, good = audited(operator_with(HERE / "audit_cann" / f"{code}_good.py", tmp_path / "good"), capsys)
    assert (good_code, good) == (0, [])


def test_a_two_party_golden_narrower_than_the_kernel_is_a_gd103_warning(tmp_path, capsys):
    """The opposite of GD108 (seed 000 §4: the two-party golden widens as far as the NPU does):
    a warning, since torch rounds each half op once and only a chain of ops departs."""
    code, found = audited(operator_with(HERE / "audit_cann" / "GD103_bad.py", tmp_path / "bad"), capsys)
    assert (code, found) == (0, ["GD111"])
    main(["audit", str(tmp_path / "bad")])
    line = next(x for x in capsys.readouterr().out.splitlines() if "GD111" in x)
    assert "golden.py:6:1: GD111 uncertain GD103: op: the two-party golden never widens bfloat16, float16" in line
    assert "op_kernel/" in line and "mix_tolerance" in line and "Fix: cast the half inputs to float32" in line
    good_code, good = audited(operator_with(HERE / "audit_cann" / "GD103_good.py", tmp_path / "good"), capsys)
    assert (good_code, good) == (0, [])


def test_a_golden_without_half_outputs_is_not_narrower(tmp_path, capsys):
    root = operator_with(HERE / "audit_cann" / "GD103_bad.py", tmp_path / "ints")
    opdef = next((root / "math" / "op" / "op_host").glob("*_def.cpp"))
    opdef.write_text(opdef.read_text().replace(
        'this->Output("y").DataType({ge::DT_FLOAT16, ge::DT_BF16, ge::DT_FLOAT});',
        'this->Output("y").DataType({ge::DT_BOOL, ge::DT_BOOL, ge::DT_BOOL});'))
    assert audited(root, capsys) == (0, [])


def test_the_worked_folder_is_audited_without_a_spec(capsys):
    code, found = audited(HERE / "cann_worked" / "math", capsys)
    assert code == 1 and found == ["GD110", "GD102", "GD107"]


def test_a_golden_named_from_inside_its_folder_is_still_a_cann_golden(monkeypatch, capsys):
    monkeypatch.chdir(HERE / "cann_worked" / "math" / "scale_add" / "tests" / "assets")
    code, found = audited(Path("golden.py"), capsys)
    assert code == 1 and found == ["GD110", "GD102", "GD107"]


def test_a_second_audit_in_one_process_reads_the_folder_again(tmp_path, capsys):
    """The golden's judgement is kept only while one audit reads it: edit the kernel beside an
    unchanged golden, and the next audit (a long-lived process, the MCP server) sees the edit."""
    root = operator_with(HERE / "audit_cann" / "GD108_bad.py", tmp_path)
    main(["audit", str(root)])
    assert "widening (float32" in capsys.readouterr().out
    for header in (root / "math" / "op" / "op_kernel").rglob("*.h"):
        header.write_text(header.read_text().replace("float", "half"))
    main(["audit", str(root)])
    again = capsys.readouterr().out
    assert "GD108" in again and "widening (float32" not in again
