"""Hostile and awkward input, each run as a real ``kbt`` process whose CPU time and peak
memory are read from the kernel (``os.wait4`` in a small launcher): one line naming the file (and its line),
a non-zero exit, no traceback, under 5 s of CPU and 300 MB.

CPU time, not wall time, is held to the bound: it does not grow when other processes
share the machine, and the failures these cases guard against (an alias bomb took 16 s of
CPU and 2 GB before a MemoryError) are far past it. An address-space cap makes a
regression fail fast instead of taking the machine's memory with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO

CPU_LIMIT_S = 5.0
RSS_LIMIT_MB = 300
ADDRESS_SPACE_CAP = 3 * 1024**3
KILL_AFTER_S = 120


@dataclass
class Bounded:
    code: int
    out: str
    err: str
    cpu_s: float
    rss_mb: float

    @property
    def err_lines(self) -> list[str]:
        return self.err.strip().splitlines()


# The child is started by a small launcher process, never forked from the test itself: a
# fork copies the pytest worker's mappings (torch and all), and the kernel counts them in the
# child's peak RSS even after exec, which would charge the test's memory to ``kbt``.
_LAUNCHER = """
import json, os, resource, sys
cap, report, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    os.execv(argv[0], argv)
_, status, usage = os.wait4(pid, 0)
with open(report, "w") as f:
    json.dump({"code": os.waitstatus_to_exitcode(status),
               "cpu_s": usage.ru_utime + usage.ru_stime,
               "rss_mb": usage.ru_maxrss / 1024}, f)
"""


def run_kbt(*argv, cwd: Path, root: Path | None = None) -> Bounded:
    """``kbt argv`` in a child process; its own CPU time and peak RSS, not the test's."""
    args = [sys.executable, "-m", "kb_tools", *([f"--kb-root={root}"] if root else []), *map(str, argv)]
    out_path, err_path = cwd / ".kbt-out.txt", cwd / ".kbt-err.txt"
    report_path = cwd / ".kbt-usage.json"
    launcher = [sys.executable, "-c", _LAUNCHER, str(ADDRESS_SPACE_CAP), str(report_path), *args]
    with out_path.open("w") as out, err_path.open("w") as err:
        subprocess.run(launcher, cwd=cwd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                       timeout=KILL_AFTER_S, check=True)
    usage = json.loads(report_path.read_text())
    result = Bounded(usage["code"], out_path.read_text(), err_path.read_text(),
                     usage["cpu_s"], usage["rss_mb"])
    for path in (out_path, err_path, report_path):
        path.unlink()
    return result


def assert_one_clean_line(result: Bounded, name: str, code: str, *, line: int | None = None, exit_code: int | None = None):
    assert "Traceback" not in result.err, result.err[-2000:]
    assert result.code != 0 if exit_code is None else result.code == exit_code, (result.code, result.err[-2000:])
    assert len(result.err_lines) == 1, result.err_lines[:5]
    (message,) = result.err_lines
    where = f"{name}:{line}: " if line else f"{name}: "
    assert message.startswith(where) and f" {code} " in f" {message}", message
    assert len(message) < 400, message[:400]
    assert_bounded(result)


def assert_bounded(result: Bounded):
    assert result.cpu_s < CPU_LIMIT_S, f"{result.cpu_s:.2f} s of CPU"
    assert result.rss_mb < RSS_LIMIT_MB, f"{result.rss_mb:.0f} MB peak"


def billion_laughs(key: str) -> str:
    """Nine levels of nine aliases, about 400 bytes, 9**9 strings when expanded."""
    lines = ["l0: &l0 [" + ",".join(["lol"] * 9) + "]"]
    lines += [f"l{i}: &l{i} [" + ",".join([f"*l{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines) + f"\n{key}: *l8\n"


SPEC_TAIL = "topologies: [elementwise]\nproperties: {dtypes: [float32]}\ncriteria: {float32: close}\n"


def test_spec_alias_bomb(tmp_path):
    spec = tmp_path / "bomb.yaml"
    assert len(billion_laughs("op")) < 450
    spec.write_text(billion_laughs("op") + SPEC_TAIL)
    result = run_kbt("select", spec.name, "-o", "out", cwd=tmp_path, root=REPO)
    assert_one_clean_line(result, "bomb.yaml", "SP011", line=2, exit_code=1)
    assert "alias" in result.err
    assert not (tmp_path / "out").exists()


def test_page_alias_bomb(repo_copy):
    page = repo_copy / "kb" / "patterns" / "bomb-page.md"
    page.write_text("---\n" + billion_laughs("title") + "---\n# body\n")
    result = run_kbt("select", "ops/add.yaml", "-o", "out", cwd=repo_copy, root=repo_copy)
    assert_one_clean_line(result, "kb/patterns/bomb-page.md", "PG003", line=3, exit_code=1)


def test_sources_alias_bomb(repo_copy):
    sources = repo_copy / "kb" / "sources.yaml"
    sources.write_text(billion_laughs("seeds") + sources.read_text())
    result = run_kbt("lint", "-q", cwd=repo_copy, root=repo_copy)
    assert "Traceback" not in result.err and result.code == 1
    assert [line for line in result.err_lines if "sources.yaml" in line and " alias " in line]
    assert_bounded(result)


def test_spec_over_the_yaml_size_limit(tmp_path):
    spec = tmp_path / "huge.yaml"
    spec.write_text("op: add\n" + "# padding\n" * 30_000 + SPEC_TAIL)
    result = run_kbt("select", spec.name, cwd=tmp_path, root=REPO)
    assert_one_clean_line(result, "huge.yaml", "SP011", exit_code=2)
    assert "limit" in result.err


def test_spec_nested_too_deeply(tmp_path):
    spec = tmp_path / "deep.yaml"
    spec.write_text("op: " + "[" * 500 + "]" * 500 + "\n" + SPEC_TAIL)
    result = run_kbt("select", spec.name, cwd=tmp_path, root=REPO)
    assert_one_clean_line(result, "deep.yaml", "SP011", line=1, exit_code=1)
    assert "nested" in result.err


def test_spec_long_value_and_many_unknown_keys_stay_one_short_line_each(tmp_path):
    spec = tmp_path / "long.yaml"
    spec.write_text("op: " + "x-" * 50_000 + "\n" + SPEC_TAIL.replace("properties: {", "properties: {"
                    + ", ".join(f"k{i}: 1" for i in range(2000)) + ", "))
    result = run_kbt("select", spec.name, cwd=tmp_path, root=REPO)
    assert result.code == 1 and "Traceback" not in result.err
    assert len(result.err_lines) == 2 and all(len(line) < 400 for line in result.err_lines), result.err_lines
    assert "and 1995 more" in result.err
    assert_bounded(result)


def test_spec_is_a_fifo(tmp_path):
    os.mkfifo(tmp_path / "pipe.yaml")
    result = run_kbt("select", "pipe.yaml", cwd=tmp_path, root=REPO)
    assert_one_clean_line(result, "pipe.yaml", "SP008", exit_code=2)


def test_spec_is_a_dangling_link(tmp_path):
    (tmp_path / "gone.yaml").symlink_to("nowhere.yaml")
    result = run_kbt("select", "gone.yaml", cwd=tmp_path, root=REPO)
    assert_one_clean_line(result, "gone.yaml", "SP001", exit_code=2)
    assert "dangling symbolic link" in result.err


def _usage_dir(tmp_path) -> Path:
    result = run_kbt("usage", REPO / "ops" / "cat.yaml", "-o", "u", cwd=tmp_path, root=REPO)
    assert result.code == 0, result.err
    return tmp_path / "u"


@pytest.mark.parametrize("case,text,code,line", [
    ("nested", '{"invariants": ' + "[" * 5000 + "]" * 5000 + "}", "US013", 1),
    ("oversize", '{"invariants": [' + ", ".join(["{}"] * 400_000) + "]}", "US003", None),
])
def test_usage_file_nested_or_oversize(tmp_path, case, text, code, line):
    usage = _usage_dir(tmp_path) / "KB_USAGE.json"
    usage.write_text(text)
    result = run_kbt("check-usage", "u/KB_USAGE.json", cwd=tmp_path, root=REPO)
    assert_one_clean_line(result, "u/KB_USAGE.json", code, line=line, exit_code=2)


def test_usage_file_broken_everywhere_is_bounded(tmp_path):
    """Just under the size limit, every record empty: the schema errors stop after a screen."""
    usage = _usage_dir(tmp_path) / "KB_USAGE.json"
    records = ", ".join(["{}"] * 250_000)
    usage.write_text('{"schema_version": 3, "op": "cat", "class_id": ".", "invariants": [' + records + "]}")
    result = run_kbt("check-usage", "u/KB_USAGE.json", cwd=tmp_path, root=REPO)
    assert result.code == 1 and "Traceback" not in result.err
    assert all(line.startswith("u/KB_USAGE.json") for line in result.err_lines)
    assert len(result.err_lines) <= 300
    assert "not shown" in result.err
    assert_bounded(result)


def test_many_unfilled_records_without_selection_is_bounded(tmp_path):
    usage_dir = _usage_dir(tmp_path)
    doc = json.loads((usage_dir / "KB_USAGE.json").read_text())
    doc["invariants"] = doc["invariants"][:1] * 2000
    (usage_dir / "KB_USAGE.json").write_text(json.dumps(doc, indent=1))
    (usage_dir / "KB_SELECTION.json").unlink()
    result = run_kbt("check-usage", "u/KB_USAGE.json", cwd=tmp_path, root=REPO)
    assert result.code == 2 and "Traceback" not in result.err
    assert len(result.err_lines) <= 300 and "not shown" in result.err
    assert "2000 of 2000 records unfilled" in result.err
    assert_bounded(result)


def test_usage_keys_spelled_with_escapes(tmp_path):
    """Keys that cannot be found as written used to make every key search run to the end."""
    usage = _usage_dir(tmp_path) / "KB_USAGE.json"
    keys = ", ".join(f'"\\u006b{i}": 1' for i in range(50_000))
    usage.write_text("{" + keys + "}")
    result = run_kbt("check-usage", "u/KB_USAGE.json", cwd=tmp_path, root=REPO)
    assert result.code == 1 and "Traceback" not in result.err
    assert_bounded(result)


def _loop(link: Path):
    link.symlink_to(link.name)


def test_page_symlink_loop(repo_copy):
    _loop(repo_copy / "kb" / "constraints" / "loop-page.md")
    result = run_kbt("select", "ops/add.yaml", "-o", "out", cwd=repo_copy, root=repo_copy)
    assert_one_clean_line(result, "kb/constraints/loop-page.md", "PG007", exit_code=1)
    linted = run_kbt("lint", "-q", cwd=repo_copy, root=repo_copy)
    assert "Traceback" not in linted.err and linted.code == 1
    assert "kb/constraints/loop-page.md: PG007 symbolic link loop" in linted.err


def test_page_folder_symlink_loop(repo_copy):
    patterns = repo_copy / "kb" / "patterns"
    patterns.rename(repo_copy / "kb" / "patterns-moved")
    (repo_copy / "kb" / "patterns-b").symlink_to("patterns")
    patterns.symlink_to("patterns-b")
    result = run_kbt("select", "ops/add.yaml", "-o", "out", cwd=repo_copy, root=repo_copy)
    assert_one_clean_line(result, "kb/patterns", "PG007", exit_code=1)


@pytest.mark.parametrize("command", ["select", "usage"])
def test_output_folder_is_a_file(tmp_path, command):
    target = tmp_path / "FILE"
    target.write_text("a person's notes\n")
    result = run_kbt(command, REPO / "ops" / "add.yaml", "-o", "FILE", cwd=tmp_path, root=REPO)
    assert_one_clean_line(result, "FILE", "IO010", exit_code=2)
    assert target.read_text() == "a person's notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["FILE"]


def test_output_under_a_file(tmp_path):
    (tmp_path / "FILE").write_text("x")
    result = run_kbt("select", REPO / "ops" / "add.yaml", "-o", "FILE/sub", cwd=tmp_path, root=REPO)
    assert_one_clean_line(result, "FILE", "IO010", exit_code=2)


def test_review_output_is_a_folder(tmp_path):
    (tmp_path / "review.html").mkdir()
    result = run_kbt("review", REPO / "ops" / "softmax.yaml", "--format", "html", "-o", "review.html", cwd=tmp_path, root=REPO)
    assert_one_clean_line(result, "review.html", "IO011", exit_code=2)


def test_check_usage_sample_record_count_is_real(tmp_path):
    """The corpus above edits a real skeleton; it must have records to break."""
    doc = json.loads((_usage_dir(tmp_path) / "KB_USAGE.json").read_text())
    assert len(doc["invariants"]) > 1
