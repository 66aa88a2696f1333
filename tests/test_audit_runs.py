"""Issue 37 step 3: a parallel audit hands its jobs runs of neighbouring files as they free up;
every file is in exactly one run, in order, and the report is the serial one for any number of
jobs (a run may import a module another job parsed: each job reads it through its own tree)."""

from __future__ import annotations

from pathlib import Path

from kb_tools.audit.batch import MIN_RUN, RUNS_PER_JOB, audit_files, runs
from kb_tools.audit.discover import python_files
from kb_tools.audit.report import json_report

PACKAGE = Path(__file__).resolve().parent / "fixtures" / "audit" / "package"


def test_runs_cover_every_file_once_in_order():
    for n_files in (1, 7, 8, 9, 64, 763, 4109):
        for jobs in (2, 3, 4):
            parts = runs(n_files, jobs)
            assert [i for run in parts for i in run] == list(range(n_files)), (n_files, jobs)
            assert all(len(run) >= min(MIN_RUN, n_files) for run in parts[:-1])
            assert len(parts) <= max(1, jobs * RUNS_PER_JOB)


def test_three_jobs_report_as_one(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "utils.py").write_text((PACKAGE / "pkg" / "utils.py").read_text())
    wrapper = (PACKAGE / "pkg" / "sub" / "ops.py").read_text().replace("from ..utils", "from pkg.utils")
    for i in range(40):
        (tmp_path / f"m{i:02d}.py").write_text(wrapper)
    files = python_files([str(tmp_path)])
    serial = json_report(audit_files(files, roots=[tmp_path], jobs=1)[0])
    assert json_report(audit_files(files, roots=[tmp_path], jobs=3)[0]) == serial
    assert '"line": 17' in serial  # the helper's line, reached from every file's wrappers


def test_a_long_audit_says_how_far_it_is_on_a_terminal_only(tmp_path, monkeypatch, capsys):
    import sys

    from kb_tools.cli import main

    for i in range(200):
        (tmp_path / f"m{i:03}.py").write_text(f"X{i} = {i}\n")
    main(["audit", str(tmp_path), "--jobs", "2"])
    assert "kbt audit: 200/200 files" not in capsys.readouterr().err  # a pipe gets the report alone
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    main(["audit", str(tmp_path), "--jobs", "2"])
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if line.startswith("kbt audit: ") and line.endswith(" files")]
    assert 1 < len(said) <= 11 and said[-1] == "kbt audit: 200/200 files"  # about a line per tenth
