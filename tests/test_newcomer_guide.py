"""Issue 41.7: the guide docs/bring-your-own-operator.md is run as a newcomer would run it.

The newcomer's code (tests/fixtures/newcomer/project: an RMS-norm outside the catalog with the
three planted mistakes) is copied into a folder not named after the operator; then, in the
guide's order, each file the guide shows is written and each ``$`` command is run there. A
command must end with the exit status its ``# exit N`` comment states and print every line
the guide shows under it, in that order (``...`` stands for lines left out).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

from tests.conftest import REPO

GUIDE = REPO / "docs" / "bring-your-own-operator.md"
FIXTURE = REPO / "tests" / "fixtures" / "newcomer" / "project"
PROGRAMS = {"kbt": [sys.executable, "-m", "kb_tools"], "python": [sys.executable]}


def guide_steps(text: str) -> list[tuple]:
    """('file', path, content) and ('run', command, exit status, expected lines), in order."""
    steps, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        file_mark = re.fullmatch(r"<!-- file: (\S+) -->", lines[i])
        if file_mark:
            end = lines.index("```", i + 2)
            steps.append(("file", file_mark[1], "\n".join(lines[i + 2:end]) + "\n"))
            i = end
        elif lines[i] == "```console":
            end = lines.index("```", i + 1)
            for line in lines[i + 1:end]:
                if line.startswith("$ "):
                    command, status = re.fullmatch(r"\$ (.*?)\s+# exit (\d+)", line).groups()
                    steps.append(("run", command, int(status), []))
                else:
                    steps[-1][3].append(line)
            i = end
        i += 1
    return steps


def _counted(line: str) -> str:
    """The line with its count of records left out: it follows the KB's pages, not the guide."""
    return re.sub(r"\b\d+ (of \d+ )?(new )?records", "N records", line)


def shows(expected: list[str], printed: list[str]) -> bool:
    """Every expected line (``...`` skipped) is a printed line, in order (records counted apart)."""
    rest = iter(map(_counted, printed))
    return all(any(_counted(line) == got for got in rest) for line in expected if line != "...")


def test_the_guide_covers_each_mistake_and_each_step():
    steps = guide_steps(GUIDE.read_text())
    runs = [s for s in steps if s[0] == "run"]
    assert [s[1].split()[1] for s in runs if s[1].startswith("kbt")] == ["usage", "usage", "usage", "compare", "audit", "verify",
                                                                          "audit", "compare", "verify"]
    shown = "\n".join(line for s in runs for line in s[3])
    for mistake in ("SP040", "SP030", "WB101 host cast .float()", "WB102 layout change .contiguous()", "GD102 casts to float16",
                    "the golden equals the third-party leg bit for bit"):
        assert mistake in shown, mistake


def test_the_guide_runs_from_an_empty_folder(tmp_path):
    work = tmp_path / "my_work"  # any name: not the operator's
    shutil.copytree(FIXTURE, work)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    compared = []
    for step in guide_steps(GUIDE.read_text()):
        if step[0] == "file":
            (work / step[1]).parent.mkdir(parents=True, exist_ok=True)
            (work / step[1]).write_text(step[2])
            continue
        _, command, status, expected = step
        words = shlex.split(command)
        done = subprocess.run(PROGRAMS[words[0]] + words[1:], cwd=work, env=env, capture_output=True, text=True, timeout=300)
        printed = (done.stderr + done.stdout).splitlines()
        assert done.returncode == status, (command, done.returncode, printed)
        assert shows(expected, printed) or shows(expected, done.stdout.splitlines() + done.stderr.splitlines()), \
            (command, expected, printed)
        if words[:2] == ["kbt", "compare"]:
            compared.append("equals the third-party leg bit for bit" in done.stdout)
    assert compared == [True, False], "compare warns about the collapsed golden, and only before the fix"
