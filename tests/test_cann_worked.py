"""The "bring your own CANN operator" page's session, run command by command on a copy of its folder."""

import re
import shlex
import shutil
from pathlib import Path

from kb_tools.cli import main

REPO = Path(__file__).parents[1]
PAGE = REPO / "kb" / "playbooks" / "bring-your-own-cann-operator.md"
WORKED = Path("tests") / "fixtures" / "cann_worked"


def session():
    """(command, expected output lines) from the page's console block."""
    block = re.search(r"```console\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S).group(1)
    steps = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((shlex.split(line[2:]), []))
        else:
            steps[-1][1].append(line)
    return steps


def test_the_page_session_runs_as_printed(tmp_path, monkeypatch, capsys):
    shutil.copytree(REPO / WORKED, tmp_path / WORKED)
    monkeypatch.chdir(tmp_path)
    steps = session()
    assert [argv[:2] for argv, _ in steps] == [["kbt", "audit"], ["cp", str(WORKED / "fixed" / "golden.py")],
                                                ["kbt", "audit"], ["kbt", "build"]]
    codes = []
    for argv, expected in steps:
        if argv[0] == "cp":
            shutil.copyfile(argv[1], argv[2])
            continue
        codes.append(main(argv[1:]))
        printed = capsys.readouterr().out.splitlines()
        assert len(printed) == len(expected)
        for want, got in zip(expected, printed):
            assert got.startswith(want.split(" ...")[0].rstrip(";")), (want, got)
    assert codes == [1, 0, 0]
    assert (tmp_path / "build" / "cann" / "cann-report.html").is_file()
    # the shipped folder still holds the first golden
    assert "_DECLARED" in (REPO / WORKED / "math" / "scale_add" / "tests" / "assets" / "golden.py").read_text()
