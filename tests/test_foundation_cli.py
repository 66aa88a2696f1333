"""The command line end to end: route, map, build, the module and console-script entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO


def test_route_by_wording_and_by_id_agree(kbt):
    by_words = kbt("route", "Decide what may run on the host")
    by_id = kbt("route", "decide-host-work")
    assert by_words.code == by_id.code == 0
    assert by_words.out == by_id.out
    assert "kb/constraints/wrapper-boundary.md" in by_id.out


def test_route_question_matching_no_page_names_the_nearest_tasks(kbt):
    result = kbt("route", "dcide-hots-wrk")  # free text is searched (tests/test_route_search.py); this finds nothing
    assert result.code == 1
    assert "nearest" in result.err and "decide-host-work" in result.err


def test_route_skill_filter(kbt):
    assert kbt("route", "decide-host-work", "--skill", "pypto-pro-op-design").code == 0
    result = kbt("route", "decide-host-work", "--skill", "op-review")
    assert result.code == 1 and "owned by" in result.err


def test_map_has_the_public_shape(kbt, tmp_path):
    out = tmp_path / "topology-map.json"
    assert kbt("map", "-o", out).code == 0
    doc = json.loads(out.read_text())
    assert {"topologies", "property_modifiers", "target_gated", "mandatory_constraints", "contract"} <= set(doc)
    assert doc["contract"]["implementation_statuses"] == ["implemented", "deviated", "not_applicable"]
    assert doc["mandatory_constraints"]["constraints/wrapper-boundary.md"]["applies_to"] == ["architect", "coder", "verifier"]
    assert "patterns/packed-mask-expansion.md" in doc["property_modifiers"]["packed_intermediate"]["patterns"]


def test_build_writes_both_files_for_every_spec_and_keeps_filled_work(kbt, tmp_path):
    assert kbt("build", REPO / "ops", "-o", tmp_path).code == 0
    ops = sorted(p.stem for p in (REPO / "ops").glob("*.yaml"))
    assert ops and all((tmp_path / op / "KB_SELECTION.json").is_file() and (tmp_path / op / "KB_USAGE.json").is_file() for op in ops)
    usage = tmp_path / "add" / "KB_USAGE.json"
    doc = json.loads(usage.read_text())
    doc["invariants"][0]["implementation"] = {"file": "a.py", "symbol": "k", "status": "implemented"}
    usage.write_text(json.dumps(doc))
    assert kbt("build", REPO / "ops", "-o", tmp_path).code == 0
    assert json.loads(usage.read_text())["invariants"][0]["implementation"]["file"] == "a.py"


def test_build_reports_a_bad_spec_and_builds_the_rest(kbt, tmp_path):
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "add.yaml").write_text((REPO / "ops/add.yaml").read_text())
    (ops / "broken.yaml").write_text("op: [broken\n")
    result = kbt("build", ops, "-o", tmp_path / "out")
    assert result.code == 1 and "broken.yaml:" in result.err and " SP011 YAML syntax error" in result.err
    assert (tmp_path / "out" / "add" / "KB_USAGE.json").is_file()


def _run(*args, cwd=REPO):
    env = {k: v for k, v in os.environ.items() if k != "OPKB_ROOT"}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def test_python_dash_m_and_console_script_agree():
    module = _run(sys.executable, "-m", "kb_tools", "route", "decide-host-work")
    script = _run(str(Path(sys.executable).with_name("kbt")), "route", "decide-host-work")
    assert module.returncode == script.returncode == 0
    assert module.stdout == script.stdout


def test_usage_error_exit_code_is_two():
    result = _run(sys.executable, "-m", "kb_tools", "select", "--no-such-option")
    assert result.returncode == 2 and "usage:" in result.stderr
    bare = _run(sys.executable, "-m", "kb_tools", "select")  # no spec given, and the catalog's seven fit no code
    assert bare.returncode == 2 and "SP040" in bare.stderr and "pass --spec ops/<op>.yaml to kbt select" in bare.stderr


def test_kb_commands_do_not_import_heavy_libraries():
    code = ("import sys\nfrom kb_tools.cli import main\n"
            "rc = main(['select', 'ops/softmax.yaml', '-o', sys.argv[1]])\n"
            "heavy = sorted(m for m in ('torch', 'numpy', 'pandas', 'scipy', 'matplotlib') if m in sys.modules)\n"
            "print(rc, heavy)\n")
    result = _run(sys.executable, "-c", code, "/tmp/kbt-import-check")
    assert result.stdout.strip().splitlines()[-1] == "0 []", result.stdout + result.stderr
