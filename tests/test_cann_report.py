"""kbt build on a CANN repository: one report (JSON, Markdown, HTML), worst operators first, each
operator's facts and findings read in one run and equal to what kbt spec and kbt audit say."""

import json
import shutil
from pathlib import Path

from kb_tools.outputs.cann_report import build_report, is_cann_repository
from kb_tools.cli import main

ROOT = Path(__file__).parent / "fixtures" / "cann_golden"


def test_report_orders_worst_first_and_totals_per_category():
    report = build_report(ROOT)
    folders = [row["folder"] for row in report["operators"]]
    assert folders[0] == "math/scale_add_bad"  # 5 errors
    assert folders[-1] in ("math/mean_two_good", "math/scale_add_good")
    math = report["categories"]["math"]
    assert math["operators"] == 7 and math["problems"] == 2 and math["three_party"] == 2
    assert math["errors"] == sum(r["errors"] for r in report["operators"])
    bad = report["operators"][0]
    assert bad["mode"] == "three_party" and bad["facts"]["three_party"]
    assert bad["facts"]["uncovered"] == ["bfloat16"]
    assert [f["code"] for f in bad["findings"]] == ["GD102", "GD102", "GD110", "GD107", "GD109"]
    broken = next(r for r in report["operators"] if r["folder"] == "math/broken")
    assert len(broken["problems"]) == 1 and "AU010" in broken["problems"][0]  # said once, by the audit


def test_one_run_says_what_spec_and_audit_say_for_any_number_of_jobs(tmp_path):
    from kb_tools.audit.batch import audit_files
    from kb_tools.audit.codes import RULES
    from kb_tools.audit.discover import python_files
    from kb_tools.audit.families import FamilyOptions
    from kb_tools.audit.report import json_report
    from kb_tools.audit.cann_repository import read_repository
    from kb_tools.commands.spec import read_all

    repo = tmp_path / "repo"
    for name in ("cann_golden", "cann_worked"):  # two categories' worth of operators, many files
        shutil.copytree(ROOT.parent / name, repo / name)
    spec = [f.as_json() for f in read_all(str(repo), 1)]
    audited, errors, _ = audit_files(python_files([str(repo)]), roots=[repo], jobs=1, families=FamilyOptions(),
                                     select=set(RULES), policy="strict")
    for jobs in (1, 3):
        reading = read_repository(repo, jobs=jobs)
        assert [f.as_json() for f in reading.facts] == spec
        assert json_report(reading.results) == json_report(audited)
        assert [str(e) for e in reading.errors] == [str(e) for e in errors]


def test_kbt_build_on_a_cann_repository_writes_three_reports(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["build", str(ROOT), "-o", str(out)]) == 1  # findings
    data = json.loads((out / "cann-report.json").read_text())
    assert len(data["operators"]) == 7
    markdown = (out / "cann-report.md").read_text()
    assert "math/scale_add_bad/tests/assets/golden.py:29` GD107" in markdown
    assert "<h1>Operator report" in (out / "cann-report.html").read_text()
    assert "7 CANN operators" in capsys.readouterr().out


def test_a_golden_nothing_can_read_fails_the_build(tmp_path):
    repo = tmp_path / "repo" / "math"
    shutil.copytree(ROOT / "math" / "mean_two_good", repo / "mean_two_good")
    golden = repo / "mean_two_good" / "tests" / "assets" / "golden.py"
    golden.write_bytes("# 中文\n".encode("gbk") + golden.read_bytes())  # GBK, no coding line: Python cannot read it
    assert main(["build", str(tmp_path / "repo"), "-o", str(tmp_path / "out")]) == 1
    report = json.loads((tmp_path / "out" / "cann-report.json").read_text())
    assert report["unusable"] == 1 and "AU006" in report["operators"][0]["problems"][0]


def test_a_clean_repository_exits_zero_and_the_catalog_is_not_cann(tmp_path):
    shutil.copytree(ROOT / "math" / "mean_two_good", tmp_path / "repo" / "math" / "mean_two_good")
    assert main(["build", str(tmp_path / "repo"), "-o", str(tmp_path / "out")]) == 0
    assert not is_cann_repository(Path(__file__).parents[1] / "ops")
