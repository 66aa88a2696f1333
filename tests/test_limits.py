"""Every bound on what kbt reads has a default and a setting that raises it (hostile-4, issue 40):
the setting takes effect, a malformed one is refused in one line at the command-line edge."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO
from kb_tools.limits import LIMITS, limit, malformed


def _kbt(*args, env=None):
    return subprocess.run([sys.executable, "-m", "kb_tools", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, **(env or {})}, timeout=120)


@pytest.mark.parametrize("value", ["abc", "0", "-3", "1.5", "9" * 30, " "])
def test_a_malformed_setting_is_one_line_and_exit_2(monkeypatch, value):
    monkeypatch.setenv("OPKB_MAX_NESTING", value)
    lines = malformed()
    if not value.strip():
        assert lines == [] and limit("OPKB_MAX_NESTING") == 32  # an empty setting is no setting
        return
    assert len(lines) == 1 and "ENV001 OPKB_MAX_NESTING=" in lines[0] and "default 32" in lines[0]
    assert limit("OPKB_MAX_NESTING") == LIMITS["OPKB_MAX_NESTING"].default


def test_the_cli_refuses_a_malformed_setting_before_any_command():
    result = _kbt("route", "softmax", env={"OPKB_MAX_JSON_BYTES": "lots"})
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [result.stderr.strip()] and "ENV001 OPKB_MAX_JSON_BYTES='lots'" in result.stderr


def test_a_ceiling_bounds_what_a_setting_may_ask(monkeypatch):
    monkeypatch.setenv("OPKB_MAX_NESTING", "100000")  # past Python's recursion: refused, not obeyed
    assert malformed() and limit("OPKB_MAX_NESTING") == 32


def test_the_nesting_setting_lowers_and_raises_the_bound(tmp_path):
    deep = tmp_path / "KB_USAGE.json"
    doc = {"schema_version": 3, "op": "softmax", "class_id": ".", "invariants": [], "x": 0}
    for _ in range(40):
        doc["x"] = {"x": doc["x"]}
    deep.write_text(json.dumps(doc))
    default = _kbt("check-usage", deep)
    assert default.returncode == 2 and "nested more than 32 levels deep" in default.stderr
    raised = _kbt("check-usage", deep, env={"OPKB_MAX_NESTING": "64"})
    assert "nested more than" not in raised.stderr, raised.stderr


def test_the_text_setting_bounds_a_spec(tmp_path):
    spec = (REPO / "ops" / "softmax.yaml").read_text()
    (tmp_path / "softmax.yaml").write_text(spec)
    assert _kbt("select", tmp_path / "softmax.yaml", "-o", tmp_path / "a").returncode == 0
    small = _kbt("select", tmp_path / "softmax.yaml", "-o", tmp_path / "b", env={"OPKB_MAX_TEXT_BYTES": "64"})
    assert small.returncode == 2 and len(small.stderr.strip().splitlines()) == 1, small.stderr


def _shown(n: int, name: str) -> str:
    if name.endswith(("BYTES", "PAYLOAD")):
        for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
            if n >= 1 << shift and n % (1 << shift) == 0:
                return f"{n >> shift} {unit}"
    return str(n)


def test_every_setting_is_documented_in_the_readme_with_its_default():
    rows = {line.split("|")[1].strip(" `"): line for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
            if line.startswith("| `OPKB_MAX_")}
    assert sorted(rows) == sorted(LIMITS)
    assert [n for n, spec in LIMITS.items() if f"| {_shown(spec.default, n)}" not in rows[n]] == []
