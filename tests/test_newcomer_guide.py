"""Issue 41.7: the guide docs/bring-your-own-operator.md is run as a newcomer would run it.

From a folder that holds the clone (here a link named ``opkb`` to this repository), in the
guide's order, each file the guide shows is written and each ``$`` command is run exactly as
printed: ``kbt`` and ``python`` as opkb's environment runs them (which the guide's ``source``
puts on the PATH), ``cd`` by moving to the folder, anything else by bash. A command must end
with the exit status its ``# exit N`` comment states and print every line the guide shows
under it, in that order (``...`` stands for lines left out, a line ending in ``...`` for the
rest of that line). Each record the guide shows from a file must be that file's record.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys

from conftest import REPO

GUIDE = REPO / "docs" / "bring-your-own-operator.md"
PROGRAMS = {"kbt": [sys.executable, "-m", "kb_tools"], "python": [sys.executable]}


def guide_steps(text: str) -> list[tuple]:
    """('file', path, content), ('excerpt', path, content) and ('run', command, exit status,
    expected lines), in order."""
    steps, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        mark = re.fullmatch(r"<!-- (file|excerpt): (\S+) -->", lines[i])
        if mark:
            end = lines.index("```", i + 2)
            steps.append((mark[1], mark[2], "\n".join(lines[i + 2:end]) + "\n"))
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


def _matches(expected: str, got: str) -> bool:
    """``got`` is the expected line, or starts with it where the expected line ends in ``...``."""
    expected, got = _counted(expected), _counted(got)
    return got.startswith(expected[:-3]) if expected.endswith("...") else got == expected


def shows(expected: list[str], printed: list[str]) -> bool:
    """Every expected line (``...`` skipped) is a printed line, in order (records counted apart)."""
    rest = iter(printed)
    return all(any(_matches(line, got) for got in rest) for line in expected if line != "...")


def test_shows_reads_the_guides_ellipses():
    printed = ["a", "4 passed in 2.31s", "b"]
    assert shows(["...", "4 passed in ..."], printed)
    assert not shows(["5 passed in ..."], printed)
    assert not shows(["b", "a"], printed)


def test_the_guide_covers_each_mistake_and_each_step():
    steps = guide_steps(GUIDE.read_text())
    runs = [s for s in steps if s[0] == "run"]
    assert [s[1].split()[1] for s in runs if s[1].startswith("kbt")] == [
        "usage", "usage", "usage", "compare", "audit", "explain", "verify", "audit", "compare", "verify"]
    shown = "\n".join(line for s in runs for line in s[3])
    for mistake in ("SP040", "SP030", "WB101 host cast .float()", "WB102 layout change .contiguous()",
                    "WB104 allocation torch.empty_like()", "GD102 casts to float16",
                    "the golden equals the third-party leg bit for bit"):
        assert mistake in shown, mistake
    # the golden's cast is caught by verify on the claim that names it, then the verdict is PASS
    verifies = [s for s in runs if s[1].startswith("kbt verify")]
    assert any("VF011" in line and "legs/golden.py:10 breaks GD102" in line for line in verifies[0][3])
    assert any("legs/golden.py:10: GD102" in line and "claimed evidence" in line for line in verifies[0][3])
    assert verifies[-1][2] == 0 and any(": PASS (0 errors" in line for line in verifies[-1][3])


def test_the_records_the_guide_shows_are_the_fixtures():
    filled = REPO / "tests" / "fixtures" / "newcomer" / "project" / "filled" / "KB_USAGE.json"
    records = {(r["reference"], r["invariant_id"]): r for r in json.loads(filled.read_text())["invariants"]}
    shown = [json.loads(s[2]) for s in guide_steps(GUIDE.read_text()) if s[0] == "excerpt"]
    assert {r["implementation"]["status"] for r in shown} == {"implemented", "deviated", "not_applicable"}
    for record in shown:
        assert {k: records[(record["reference"], record["invariant_id"])][k] for k in record} == record


def test_the_guide_runs_from_an_empty_folder(tmp_path):
    (tmp_path / "opkb").symlink_to(REPO, target_is_directory=True)  # the clone, beside the newcomer's folder
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cwd, compared, tested, skeleton = tmp_path, [], [], None
    for step in guide_steps(GUIDE.read_text()):
        if step[0] == "file":
            (cwd / step[1]).parent.mkdir(parents=True, exist_ok=True)
            (cwd / step[1]).write_text(step[2])
            continue
        if step[0] == "excerpt":
            continue
        _, command, status, expected = step
        words = shlex.split(command)
        if words[0] == "cd":
            cwd = cwd / words[1]
            assert cwd.is_dir() and status == 0, command
            continue
        argv = PROGRAMS[words[0]] + words[1:] if words[0] in PROGRAMS else ["bash", "-c", command]
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
        printed = (done.stderr + done.stdout).splitlines()
        assert done.returncode == status, (command, done.returncode, printed)
        assert shows(expected, printed) or shows(expected, done.stdout.splitlines() + done.stderr.splitlines()), \
            (command, expected, printed)
        if words[:2] == ["kbt", "usage"] and status == 0:
            skeleton = json.loads((cwd / "build" / "rmsnorm" / "KB_USAGE.json").read_text())
        if words[:2] == ["kbt", "compare"]:
            compared.append("equals the third-party leg bit for bit" in done.stdout)
        if words[:3] == ["python", "-m", "pytest"]:
            tested.append(done.returncode)
    assert compared == [True, False], "compare warns about the collapsed golden, and only before the fix"
    assert tested == [1, 0], "the newcomer's tests fail on the collapsed golden, and pass after the fix"
    filled = json.loads((cwd / "build" / "rmsnorm" / "KB_USAGE.json").read_text())
    assert [(r["reference"], r["invariant_id"]) for r in filled["invariants"]] == \
           [(r["reference"], r["invariant_id"]) for r in skeleton["invariants"]], "the filled file answers every record kbt usage wrote"
