"""kbt build on a CANN repository: one report (JSON, Markdown, HTML), worst operators first."""

import json
import shutil
from pathlib import Path

from kb_tools.cann.report import build_report, is_cann_repository
from kb_tools.cli import main

ROOT = Path(__file__).parent / "fixtures" / "cann_golden"


def test_report_orders_worst_first_and_totals_per_category():
    report = build_report(ROOT)
    folders = [row["folder"] for row in report["operators"]]
    assert folders[0] == "math/scale_add_bad"  # 5 errors
    assert folders[-1] in ("math/mean_two_good", "math/scale_add_good")
    math = report["categories"]["math"]
    assert math["operators"] == 7 and math["unreadable"] == 1 and math["three_party"] == 2
    assert math["errors"] == sum(r["errors"] for r in report["operators"])
    bad = report["operators"][0]
    assert bad["kernel_widening"] == "float32"
    assert {e["mode"] for e in bad["entries"]} == {"three_party"}


def test_kbt_build_on_a_cann_repository_writes_three_reports(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["build", str(ROOT), "-o", str(out)]) == 1  # findings
    data = json.loads((out / "cann-report.json").read_text())
    assert len(data["operators"]) == 7
    markdown = (out / "cann-report.md").read_text()
    assert "math/scale_add_bad/tests/assets/golden.py:29` GD107" in markdown
    assert "<h1>Golden report" in (out / "cann-report.html").read_text()
    assert "7 CANN operators" in capsys.readouterr().out


def test_a_clean_repository_exits_zero_and_the_catalog_is_not_cann(tmp_path):
    shutil.copytree(ROOT / "math" / "mean_two_good", tmp_path / "repo" / "math" / "mean_two_good")
    assert main(["build", str(tmp_path / "repo"), "-o", str(tmp_path / "out")]) == 0
    assert not is_cann_repository(Path(__file__).parents[1] / "ops")
