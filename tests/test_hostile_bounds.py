"""Bounds and plain words for hostile input (hostile-3 repros 11-14, 16, 18, 19, 28, 29, 32,
34-36): every input is bounded (digits, size), odd files are refused where a regular file is
expected (the cache included), standard streams that cannot take the output are said so in
one line, and each message names the file the user must change. Cases that could hang or
take the machine's memory run as real processes under the CPU and memory bar."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO
from hostile_support import SOFTMAX, SOFTMAX_ROOT, filled, filled_usage, load, one_line, spec_with
from test_bad_input_limits import assert_bounded, assert_one_clean_line, run_kbt

NOT_ROOT = pytest.mark.skipif(os.geteuid() == 0, reason="root ignores mode bits; this case needs an unprivileged user")


def test_a_fifo_or_dev_zero_in_the_cache_is_passed_over(tmp_path, monkeypatch):
    """Repro 11: a FIFO entry hung every command; a link to /dev/zero read until MemoryError."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("OPKB_CACHE_DIR", str(cache))
    assert run_kbt("select", SOFTMAX, "-o", "out", cwd=tmp_path, root=REPO).code == 0
    entries = sorted(cache.glob("pages-*"))
    assert entries
    for entry in entries:
        entry.unlink()
        os.mkfifo(entry)
    result = run_kbt("select", SOFTMAX, "-o", "out", cwd=tmp_path, root=REPO)
    assert result.code == 0 and "Traceback" not in result.err, result.err
    assert_bounded(result)
    for entry in entries:
        entry.unlink()
        entry.symlink_to("/dev/zero")
    result = run_kbt("select", SOFTMAX, "-o", "out", cwd=tmp_path, root=REPO)
    assert result.code == 0 and "Traceback" not in result.err, result.err
    assert_bounded(result)


def test_the_default_cache_never_creates_a_missing_home(tmp_path):
    """Repro 36, aside: with HOME=/nonexistent/home, kbt made the whole path for its cache."""
    home = tmp_path / "no" / "such" / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("OPKB_CACHE_DIR", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    run = subprocess.run([sys.executable, "-m", "kb_tools", f"--kb-root={REPO}", "select", SOFTMAX, "-o", tmp_path / "out"],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert not (tmp_path / "no").exists()


BIG = "9" * 5000


def test_integers_past_python_digit_limit_are_refused_with_their_line(tmp_path):
    """Repro 12: a 5000-digit integer raised ValueError in the YAML and JSON readers; waves
    crashed printing 8 * n."""
    spec = tmp_path / "big.yaml"
    spec.write_text(spec_with("ranks: [1, 2, 3, 4]", f"ranks: [{BIG}]"))
    line = next(i for i, line in enumerate(spec.read_text().splitlines(), 1) if BIG in line)
    assert_one_clean_line(run_kbt("usage", spec.name, "-o", "out", cwd=tmp_path, root=REPO), "big.yaml", "SP011", line=line, exit_code=1)

    usage = tmp_path / "u" / "KB_USAGE.json"
    usage.parent.mkdir()
    usage.write_text('{\n  "schema_version": ' + BIG + ',\n  "op": "softmax"\n}\n')
    assert_one_clean_line(run_kbt("check-usage", "u/KB_USAGE.json", cwd=tmp_path, root=REPO), "u/KB_USAGE.json", "US016", line=2, exit_code=2)

    waves = run_kbt("waves", "--n", "9" * 4300, "--dtype", "float64", cwd=tmp_path)
    assert_one_clean_line(waves, "kbt", "ARG001", exit_code=2)


def test_a_big_integer_in_a_kb_yaml_file_is_a_lint_finding(kbt, repo_copy):
    sources = repo_copy / "kb" / "sources.yaml"
    sources.write_text(f"huge: {BIG}\n" + sources.read_text())
    result = kbt("lint", "-q", root=repo_copy)
    assert result.code != 0 and "Traceback" not in result.err
    assert any("sources.yaml:1:" in line and "digits" in line for line in result.err.splitlines()), result.err


def test_names_too_long_for_the_file_system_are_findings(kbt, tmp_path):
    """Repro 13: ENAMETOOLONG from exists()/is_file() came out as tracebacks."""
    usage = filled_usage(kbt, tmp_path / "out")
    doc = load(usage)
    record = filled(doc["invariants"])[0]
    record["implementation"]["file"] = "a" * 300 + ".py"
    usage.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    checked = kbt("check-usage", usage, "--root", SOFTMAX_ROOT, root=REPO)
    assert checked.code == 1
    assert any(" US045 " in line and "too long" in line for line in checked.err.splitlines()), checked.err

    one_line(kbt("--kb-root", "x" * 5000, "lint"), "x" * 20, "KB001", exit_code=2)

    long_op = tmp_path / "long.yaml"
    long_op.write_text(spec_with("op: hostile", "op: " + "s" * 300))
    review = kbt("review", long_op, root=REPO)
    assert review.code == 0 and "# Design review: " + "s" * 300 in review.out


def test_a_wrapper_name_too_long_is_one_verify_line(kbt, tmp_path):
    """Repro 13: the selection's 300-character wrapper raised ENAMETOOLONG in kbt verify."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_with("wrapper: ops/wrappers/softmax_wrapper.py", "wrapper: " + "w" * 300 + ".py"))
    assert kbt("usage", spec, "-o", tmp_path / "out", root=REPO).code == 0
    result = kbt("verify", tmp_path / "out", "--root", tmp_path, root=REPO)
    assert result.code == 2 and "Traceback" not in result.err
    assert any(" VF002 " in line and "KB_SELECTION.json" in line for line in result.err.splitlines()), result.err


def test_audit_of_a_file_whose_stem_cannot_name_a_spec(kbt, tmp_path):
    """Repro 13: a 252-character stem beside an ops/ folder made the spec lookup raise ENAMETOOLONG."""
    (tmp_path / "ops").mkdir()
    wrapper = tmp_path / ("b" * 252 + ".py")
    shutil.copy(REPO / "ops" / "wrappers" / "softmax_antipattern.py", wrapper)
    result = kbt("audit", wrapper, root=REPO)
    assert result.code == 1 and "Traceback" not in result.err and " WB" in result.out + result.err


def test_a_page_linking_a_very_long_path_is_a_link_finding(kbt, repo_copy):
    page = repo_copy / "kb" / "constraints" / "accumulator-precision.md"
    page.write_text(page.read_text() + "\n[x](" + "a/" * 3000 + "b.md)\n")
    result = kbt("lint", "-q", root=repo_copy)
    assert result.code == 1
    assert any("accumulator-precision.md:" in line and " LN060 " in line for line in result.err.splitlines()), result.err


def test_verify_sorts_findings_with_and_without_a_line(kbt, tmp_path):
    """Repro 14: VF003 (no line) and KN103 (line 6) on one file raised TypeError while sorting."""
    (tmp_path / "k.py").write_text("import pypto.language as pl\nfrom pypto.language import vf\n\n"
                                   "@pl.jit\ndef k(x, y):\n    y[0] = vf.cast(x, 'float32')\n")
    spec = tmp_path / "spec.yaml"
    spec.write_text(spec_with("wrapper: ops/wrappers/softmax_wrapper.py", "wrapper: k.py"))
    assert kbt("usage", spec, "-o", tmp_path / "out", root=REPO).code == 0
    result = kbt("verify", tmp_path / "out", "--root", tmp_path, root=REPO)
    assert result.code == 1
    codes = {line.split(": ", 1)[1].split()[0] for line in result.err.splitlines() if ": " in line}
    assert {"VF003", "KN103"} <= codes, result.err


def test_a_page_file_name_that_is_not_utf8_is_named(kbt, repo_copy, tmp_path):
    """Repro 16: kb/constraints/bad\\xff.md crashed lint, route and usage in the cache key."""
    folder = os.fsencode(repo_copy / "kb" / "constraints")
    shutil.copy(repo_copy / "kb" / "constraints" / "accumulator-precision.md", os.fsdecode(folder + b"/bad\xff.md"))
    for argv in (("lint", "-q"), ("usage", repo_copy / "ops" / "softmax.yaml", "-o", tmp_path / "o")):
        result = kbt(*argv, root=repo_copy)
        assert result.code != 0
        assert any(" PG015 " in line and "bad" in line for line in result.err.splitlines()), result.err
    assert not (tmp_path / "o").exists()
    routed = kbt("route", "wrapper", root=repo_copy)
    assert routed.code == 0 and "bad" in routed.err


def _kbt_process(*argv, env=None, **kwargs):
    return subprocess.run([sys.executable, "-m", "kb_tools", f"--kb-root={REPO}", *map(str, argv)],
                          env={**os.environ, **(env or {})}, timeout=120, **kwargs)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_terminal_that_cannot_show_the_text_gets_escapes(encoding):
    """Repro 18: an ASCII or Latin-1 terminal turned the answer into a UnicodeEncodeError."""
    for argv in (("route", "精度对不齐"), ("review", SOFTMAX)):
        run = _kbt_process(*argv, env={"PYTHONIOENCODING": encoding}, capture_output=True)
        assert run.returncode == 0 and b"Traceback" not in run.stderr, run.stderr[-2000:]
        run.stdout.decode(encoding)  # what was printed is in the terminal's encoding
        assert b"\\u" in run.stdout


def test_a_full_stdout_is_one_line():
    """Repro 18: `kbt lint > /dev/full` ended in an OSError traceback."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    with open("/dev/full", "w") as full:
        run = _kbt_process("map", stdout=full, stderr=subprocess.PIPE, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert "standard output" in line and "IO014" in line


def test_a_closed_stdin_is_one_line():
    """Repro 18: `kbt route - <&-` raised AttributeError."""
    run = subprocess.run(["bash", "-c", 'exec "$@" <&-', "kbt", sys.executable, "-m", "kb_tools", f"--kb-root={REPO}", "route", "-"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert "standard input" in line


def test_a_c_locale_question_in_chinese_is_still_text():
    """Repro 18: with LC_ALL=C PYTHONUTF8=0 a Chinese question was called binary data."""
    run = _kbt_process("route", "精度", env={"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONIOENCODING": "utf-8"},
                       capture_output=True, text=True)
    assert "RQ003" not in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 0, run.stderr


@NOT_ROOT
def test_a_kb_root_that_cannot_be_entered_is_one_line(kbt, tmp_path):
    """Repro 19: --kb-root on a folder without permission raised PermissionError."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        one_line(kbt("--kb-root", locked, "lint"), str(locked), "KB001", exit_code=2)
    finally:
        locked.chmod(0o755)


def test_a_deleted_working_directory_is_named(kbt, tmp_path, monkeypatch):
    """Repro 28: "None: IO001 no such file or directory"."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    line = one_line(kbt("lint"), "", "KB002", exit_code=2)
    assert "current directory" in line and "None" not in line


def test_implementation_files_that_are_not_plain_text_say_what_they_are(kbt, tmp_path):
    """Repro 29: a FIFO and a link loop were "does not exist"; a 17 MiB file was cut and its
    symbol reported absent."""
    root = tmp_path / "root"
    shutil.copytree(SOFTMAX_ROOT, root, ignore=shutil.ignore_patterns("tensors", "KB_*.json"))
    usage = filled_usage(kbt, root)
    os.mkfifo(root / "fifo.py")
    (root / "loop.py").symlink_to("loop.py")
    (root / "big.py").write_bytes(b"#" * (17 * 1024 * 1024) + b"\nzzz_at_end = 1\n")
    doc = load(usage)
    records = filled(doc["invariants"])
    for record, name in zip(records, ("fifo.py", "loop.py", "big.py")):
        record["implementation"].update({"file": name, "symbol": "zzz_at_end", "status": "implemented"})
    usage.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    result = kbt("check-usage", usage, "--root", root, root=REPO)
    said = {name: [line for line in result.err.splitlines() if f"'{name}'" in line] for name in ("fifo.py", "loop.py", "big.py")}
    assert any("FIFO" in line for line in said["fifo.py"]), said
    assert any("link loop" in line for line in said["loop.py"]), said
    assert any("limit" in line for line in said["big.py"]), said
    assert not any("does not exist" in line for lines in said.values() for line in lines), said


def test_check_usage_checks_every_file_it_is_given(kbt, tmp_path):
    """Repro 32: a missing first file ended the run; the second was never checked."""
    good = filled_usage(kbt, tmp_path / "out")
    result = kbt("check-usage", tmp_path / "missing" / "KB_USAGE.json", good, "--root", SOFTMAX_ROOT, root=REPO)
    assert result.code == 2 and "Traceback" not in result.err
    assert any("missing" in line and " US001 " in line for line in result.err.splitlines()), result.err
    assert f"kbt check-usage: {good}: PASS" in result.out, result.out


def test_a_symlinked_page_is_named_by_its_own_name(kbt, repo_copy, monkeypatch):
    """Repro 34: the finding about acc-copy.md (a link) named the file it points to."""
    (repo_copy / "kb" / "constraints" / "acc-copy.md").symlink_to("accumulator-precision.md")
    monkeypatch.chdir(repo_copy)
    result = kbt("lint", "-q", root=repo_copy)
    (line,) = [line for line in result.err.splitlines() if " PG011 " in line]
    assert line.startswith("kb/constraints/acc-copy.md:"), line


def test_an_empty_kb_root_is_an_error(kbt, tmp_path, monkeypatch):
    """Repro 36: --kb-root "" was ignored and another KB used."""
    monkeypatch.chdir(tmp_path)
    one_line(kbt("--kb-root", "", "lint"), "--kb-root", "KB001", exit_code=2)
