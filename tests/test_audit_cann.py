"""kbt audit on CANN goldens: GD107-GD111 (and GD102 there) judged with the folder's own facts,
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


def test_the_worked_folder_is_audited_without_a_spec(capsys):
    code, found = audited(HERE / "cann_worked" / "math", capsys)
    assert code == 1 and found == ["GD110", "GD102", "GD107"]


def test_a_golden_named_from_inside_its_folder_is_still_a_cann_golden(monkeypatch, capsys):
    monkeypatch.chdir(HERE / "cann_worked" / "math" / "scale_add" / "tests" / "assets")
    code, found = audited(Path("golden.py"), capsys)
    assert code == 1 and found == ["GD110", "GD102", "GD107"]
