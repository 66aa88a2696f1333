"""kbt audit on three-party CANN goldens in shapes the unseen ops-math batch 3 showed (legs that
widen in __init__, guards on a module tuple of half dtypes, helpers shared by golden and leg);
the fixtures are ours (tests/fixtures/cann_three_party), expected codes fixed before the first run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kb_tools.cli import main

HERE = Path(__file__).parent / "fixtures"
TEMPLATE = HERE / "cann_golden" / "math" / "scale_add_good"
CASES = {
    "leg_init_widens_never_narrows": ["GD110"],
    "leg_init_widens_narrows": [],
    "golden_guarded_half_tuple": [],
    "golden_named_cast_live": ["GD102"],
    "helper_exit_to_own_dtype": [],
    "helper_exit_named_dtype": ["GD107"],
    "exit_through_asarray": ["GD107"],  # written with the fix: a wrapped result is still the exit
}


def audit_codes(golden: Path, root: Path, capsys) -> list[str]:
    op = root / "math" / "op"
    shutil.copytree(TEMPLATE / "op_host", op / "op_host")
    shutil.copytree(TEMPLATE / "op_kernel", op / "op_kernel")
    (op / "tests" / "assets").mkdir(parents=True)
    shutil.copyfile(golden, op / "tests" / "assets" / "golden.py")
    main(["audit", str(root)])
    out = capsys.readouterr().out.splitlines()
    return sorted(line.split(": ")[1].split()[0] for line in out if ".py:" in line)


@pytest.mark.parametrize("name", sorted(CASES))
def test_three_party_shape_gets_the_expected_codes(tmp_path, capsys, name):
    assert audit_codes(HERE / "cann_three_party" / f"{name}.py", tmp_path, capsys) == CASES[name]


def test_an_entry_cast_is_named_as_such_not_as_an_exit(tmp_path, capsys):
    golden = HERE / "cann_three_party" / "golden_named_cast_live.py"
    audit_codes(golden, tmp_path, capsys)
    main(["audit", str(tmp_path)])
    out = capsys.readouterr().out
    assert "by name in golden()" in out and "Promote already hands" in out and "at exit" not in out


def test_a_leg_with_only_integer_outputs_has_nothing_to_narrow(capsys):
    """A leg that widens float inputs to compute an index (its outputs are int32 in the OpDef)
    is not told to narrow back: GD110's fix would name no floating output."""
    main(["audit", str(HERE / "cann_three_party_int_out")])
    assert "GD110" not in capsys.readouterr().out
