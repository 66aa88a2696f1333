"""Nothing a coder wrote is dropped, displaced or left parked (hostile-3 repros 02-05, 15,
25-27, 31, 33): a merge that would lose a record refuses and names it, a KB that cannot be
read stops before any file is touched, stale records come back with their page, writes go
through a symbolic link, an operator's two files change together, and what kbt writes it
can read back."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import REPO
from hostile_support import SOFTMAX, SOFTMAX_ROOT, filled, filled_usage, load, one_line, snapshot
from test_bad_input_limits import assert_one_clean_line, run_kbt


def _usage(kbt, out, root=REPO, spec=None):
    return kbt("usage", spec or root / "ops" / "softmax.yaml", "-o", out, root=root)


def test_a_repeated_record_is_refused_by_name_not_dropped(kbt, tmp_path):
    """Repro 02: two filled records with one (reference, invariant_id); the merge kept one."""
    usage = filled_usage(kbt, tmp_path / "out")
    doc = load(usage)
    first = filled(doc["invariants"])[0]
    doc["invariants"].insert(doc["invariants"].index(first) + 1, {**first, "justification": "a second location, by hand"})
    usage.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    before = snapshot(usage.parent)

    line = one_line(_usage(kbt, usage.parent), f"{usage}:", "US023", exit_code=2)
    assert first["reference"] in line and first["invariant_id"] in line and "line" in line
    assert snapshot(usage.parent) == before

    checked = kbt("check-usage", usage, "--root", SOFTMAX_ROOT, root=REPO)
    assert checked.code == 1 and "Traceback" not in checked.err
    assert any(" US049 " in line and first["invariant_id"] in line for line in checked.err.splitlines()), checked.err


def test_an_identical_copy_of_a_record_is_merged_away(kbt, tmp_path):
    """A record pasted twice, unchanged, holds nothing that one copy does not: the merge keeps one."""
    usage = filled_usage(kbt, tmp_path / "out")
    doc = load(usage)
    first = filled(doc["invariants"])[0]
    doc["invariants"].insert(0, dict(first))
    usage.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    assert _usage(kbt, usage.parent).code == 0
    again = load(usage)["invariants"]
    assert [r for r in again if r == first] == [first]


def test_a_missing_kind_folder_stops_usage_before_any_write(kbt, repo_copy, tmp_path):
    """Repro 03: kb/constraints absent (a checkout in progress) moved all 77 filled records to stale."""
    usage = filled_usage(kbt, tmp_path / "out", root=repo_copy)
    before = snapshot(usage.parent)
    (repo_copy / "kb" / "constraints").rename(repo_copy / "kb" / "constraints.away")
    result = _usage(kbt, usage.parent, root=repo_copy)
    line = one_line(result, "", "PG016", exit_code=2)
    assert "constraints" in line
    assert snapshot(usage.parent) == before
    lint = kbt("lint", "-q", root=repo_copy)
    assert one_line(lint, "", "PG016", exit_code=2)


def test_a_file_where_a_kind_folder_belongs_stops_usage(kbt, repo_copy, tmp_path):
    usage = filled_usage(kbt, tmp_path / "out", root=repo_copy)
    before = snapshot(usage.parent)
    shutil.rmtree(repo_copy / "kb" / "patterns")
    (repo_copy / "kb" / "patterns").write_text("not a folder\n")
    line = one_line(_usage(kbt, usage.parent, root=repo_copy), "", "PG016", exit_code=2)
    assert "patterns" in line
    assert snapshot(usage.parent) == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder whatever its mode; the missing-folder test covers the same check")
def test_an_unlistable_kind_folder_is_named_once(kbt, repo_copy, tmp_path):
    """Repros 03 and 35: a folder that cannot be listed gave 166 follow-on lint findings and no name."""
    usage = filled_usage(kbt, tmp_path / "out", root=repo_copy)
    before = snapshot(usage.parent)
    folder = repo_copy / "kb" / "constraints"
    folder.chmod(0o311)
    try:
        line = one_line(_usage(kbt, usage.parent, root=repo_copy), "", "PG017", exit_code=2)
        assert "constraints" in line
        assert one_line(kbt("lint", root=repo_copy), "", "PG017", exit_code=2)
    finally:
        folder.chmod(0o755)
    assert snapshot(usage.parent) == before


def test_stale_records_come_back_with_their_page(kbt, repo_copy, tmp_path):
    """Repro 04: records parked while a page was away stayed in stale once it returned."""
    usage = filled_usage(kbt, tmp_path / "out", root=repo_copy)
    n_filled = len(filled(load(usage)["invariants"]))
    page = repo_copy / "kb" / "constraints" / "accumulator-precision.md"
    page.rename(tmp_path / "away.md")
    assert _usage(kbt, usage.parent, root=repo_copy).code == 0
    parked = load(usage)
    assert parked.get("stale") and len(filled(parked["invariants"])) < n_filled

    (tmp_path / "away.md").rename(page)
    result = _usage(kbt, usage.parent, root=repo_copy)
    assert result.code == 0 and "restored" in result.out, result.out
    back = load(usage)
    assert len(filled(back["invariants"])) == n_filled
    assert "stale" not in back
    assert all("stale_reason" not in r for r in back["invariants"])


def test_a_record_comes_back_when_its_invariant_id_does(kbt, repo_copy, tmp_path):
    """Repro 04, second case: an invariant id renamed, then renamed back."""
    usage = filled_usage(kbt, tmp_path / "out", root=repo_copy)
    page = repo_copy / "kb" / "constraints" / "accumulator-precision.md"
    text = page.read_text()
    assert "id: fp32-accumulator\n" in text
    page.write_text(text.replace("id: fp32-accumulator\n", "id: fp32-accumulators\n"))
    assert _usage(kbt, usage.parent, root=repo_copy).code == 0
    assert any(r.get("invariant_id") == "fp32-accumulator" for r in load(usage)["stale"])
    page.write_text(text)
    assert _usage(kbt, usage.parent, root=repo_copy).code == 0
    back = load(usage)
    record = next(r for r in back["invariants"] if r["invariant_id"] == "fp32-accumulator")
    assert record["implementation"]["status"] and "stale_reason" not in record
    assert not any(r.get("invariant_id") == "fp32-accumulator" for r in back.get("stale", []))


def test_usage_writes_through_a_symlink_to_its_target(kbt, tmp_path):
    """Repro 05: the link was replaced by a plain file and the user's real file never updated."""
    usage = filled_usage(kbt, tmp_path / "out")
    doc = load(usage)
    kept = tmp_path / "kept" / "KB_USAGE.json"
    kept.parent.mkdir()
    kept.write_text(json.dumps(doc, ensure_ascii=False))  # respelled: the merge rewrites it
    usage.unlink()
    usage.symlink_to(kept)
    assert _usage(kbt, usage.parent).code == 0
    assert usage.is_symlink() and usage.resolve() == kept.resolve()
    assert load(kept) == doc and kept.read_text().count("\n") > 100


def test_output_onto_a_fifo_or_a_device_link_is_refused(kbt, tmp_path):
    """Repro 05: `kbt map -o` replaced a device node (as root, /dev/full) by a plain file."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    one_line(kbt("map", "-o", fifo, root=REPO), str(fifo), "IO013", exit_code=2)
    assert fifo.is_fifo()
    link = tmp_path / "null"
    link.symlink_to(os.devnull)
    one_line(kbt("map", "-o", link, root=REPO), str(link), "IO013", exit_code=2)
    assert link.is_symlink() and os.readlink(link) == os.devnull


def test_a_fifo_where_the_usage_file_goes_is_refused_not_waited_on(tmp_path):
    """Repro 05's FIFO case for kbt usage itself: the check for an unchanged file opened it and blocked."""
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "KB_USAGE.json")
    result = run_kbt("usage", SOFTMAX, "-o", "out", cwd=tmp_path, root=REPO)
    assert_one_clean_line(result, "out/KB_USAGE.json", "US008", exit_code=2)
    assert (out / "KB_USAGE.json").is_fifo() and not (out / "KB_SELECTION.json").exists()


def test_a_lone_surrogate_is_refused_on_read_with_its_line(kbt, tmp_path):
    """Repro 15: "\\ud800" is valid JSON that no UTF-8 file can hold; check-usage passed it and the merge crashed."""
    usage = filled_usage(kbt, tmp_path / "out")
    text = usage.read_text()
    record = filled(load(usage)["invariants"])[0]
    spelled = json.dumps(record["justification"], ensure_ascii=False)
    assert spelled in text
    text = text.replace(spelled, json.dumps(record["justification"] + " bad ")[:-1] + "\\ud800\"", 1)
    usage.write_text(text)
    line_no = next(i for i, line in enumerate(text.splitlines(), 1) if "\\ud800" in line)
    before = snapshot(usage.parent)
    for argv in (("check-usage", usage, "--root", SOFTMAX_ROOT), ("usage", SOFTMAX, "-o", usage.parent),
                 ("review", SOFTMAX, "--usage", usage)):
        one_line(kbt(*argv, root=REPO), f"{usage}:{line_no}:", "US015", exit_code=2)
    assert snapshot(usage.parent) == before


def test_a_number_too_large_for_a_double_is_refused_not_nulled(kbt, tmp_path):
    """Repro 33: a kept top-level 1e400 (read as infinity) was written back as null."""
    usage = filled_usage(kbt, tmp_path / "out")
    text = usage.read_text().replace('"schema_version": 3,', '"schema_version": 3,\n  "budget": 1e400,', 1)
    usage.write_text(text)
    before = snapshot(usage.parent)
    one_line(_usage(kbt, usage.parent), f"{usage}:3:", "US016", exit_code=2)
    one_line(kbt("check-usage", usage, root=REPO), f"{usage}:3:", "US016", exit_code=2)
    assert snapshot(usage.parent) == before


def test_two_specs_for_one_operator_are_refused_not_overwritten(kbt, repo_copy, tmp_path):
    """Repro 25: both specs were "written" into one folder, and its stale list grew on every build."""
    catalog = tmp_path / "cat"
    catalog.mkdir()
    shutil.copy(SOFTMAX, catalog / "softmax.yaml")
    shutil.copy(REPO / "ops" / "mean.yaml", catalog / "mean.yaml")
    (catalog / "softmax_v2.yaml").write_text((REPO / "ops" / "mean.yaml").read_text().replace("op: mean", "op: softmax"))
    for _ in range(2):
        result = kbt("build", catalog, "-o", tmp_path / "b", root=REPO)
        assert result.code == 1 and "Traceback" not in result.err
        (line,) = [line for line in result.err.splitlines() if " BU002 " in line]
        assert "softmax.yaml" in line and "softmax_v2.yaml" in line and "softmax" in line
        assert not (tmp_path / "b" / "softmax").exists()
        assert (tmp_path / "b" / "mean" / "KB_USAGE.json").is_file()
    shutil.copy(catalog / "softmax_v2.yaml", repo_copy / "ops" / "softmax_v2.yaml")
    lint = kbt("lint", "-q", root=repo_copy)
    assert lint.code == 1 and any(" LN101 " in line and "softmax_v2.yaml" in line for line in lint.err.splitlines()), lint.err


def test_build_of_an_empty_catalog_is_an_error(kbt, tmp_path):
    """Repro 36: an empty catalog "wrote 0 operators" with exit 0."""
    (tmp_path / "empty").mkdir()
    one_line(kbt("build", tmp_path / "empty", "-o", tmp_path / "out", root=REPO), str(tmp_path / "empty"), "BU003", exit_code=2)


def test_a_refused_usage_file_keeps_its_selection(kbt, tmp_path):
    """Repro 26: US021 said "left untouched", but KB_SELECTION.json beside it was already replaced."""
    out = tmp_path / "out"
    assert _usage(kbt, out, spec=REPO / "ops" / "mean.yaml").code == 0
    before = snapshot(out)
    one_line(_usage(kbt, out), f"{out / 'KB_USAGE.json'}:", "US021", exit_code=2)
    assert snapshot(out) == before
    one_line(kbt("select", SOFTMAX, "-o", out, root=REPO), f"{out / 'KB_USAGE.json'}:", "US021", exit_code=2)
    assert snapshot(out) == before


def test_two_operators_racing_into_one_folder_leave_a_matching_pair(tmp_path):
    """Repro 26, concurrent: 18 of 20 runs left a selection and a usage file of different operators."""
    for round_ in range(3):
        out = tmp_path / f"out{round_}"
        runs = [subprocess.Popen([sys.executable, "-m", "kb_tools", f"--kb-root={REPO}", "usage", REPO / "ops" / f"{op}.yaml",
                                  "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for op in ("mean", "softmax")]
        results = [(run.wait(60), run.stderr.read()) for run in runs]
        for run in runs:
            run.stdout.close()
            run.stderr.close()
        assert sorted(code for code, _ in results) == [0, 2], results
        assert all("Traceback" not in err for _, err in results)
        assert load(out / "KB_SELECTION.json")["op"] == load(out / "KB_USAGE.json")["op"]


def test_a_merge_that_would_outgrow_the_reader_is_refused(kbt, tmp_path):
    """Repro 27: a minified file under the 1 MiB read limit was re-indented past it, and every
    later command refused the file kbt had just written."""
    usage = filled_usage(kbt, tmp_path / "out")
    doc = load(usage)
    extra = {"reference": doc["invariants"][0]["reference"], "invariant": "a coder's own note " * 4,
             "implementation": {"file": None, "symbol": None, "status": None}, "justification": None}
    doc["invariants"] += [extra] * 4100
    usage.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")))
    assert 900_000 < usage.stat().st_size < 1024 * 1024
    before = snapshot(usage.parent)
    line = one_line(_usage(kbt, usage.parent), str(usage), "US024", exit_code=2)
    assert "bytes" in line
    assert snapshot(usage.parent) == before
    assert " US003 " not in kbt("check-usage", usage, root=REPO).err


def test_temporaries_left_by_a_killed_run_are_cleared(kbt, tmp_path):
    """Repro 31: kill -9 mid-write left hidden .tmp files (one half-written) that nothing removed."""
    out = tmp_path / "out"
    assert _usage(kbt, out).code == 0
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    leftovers = [out / f".KB_USAGE.json.{dead.pid}.0badc0de.tmp", out / f".KB_SELECTION.json.{dead.pid}.1badc0de.tmp",
                 out / ".KB_USAGE.json.ec8fbbe0.tmp"]
    for path in leftovers:
        path.write_bytes(b'{"half": ')
    old = time.time() - 2 * 3600
    os.utime(leftovers[2], (old, old))
    live = out / f".KB_USAGE.json.{os.getpid()}.2badc0de.tmp"  # a writer still running: never touched
    live.write_bytes(b"")
    assert _usage(kbt, out).code == 0
    assert not any(p.exists() for p in leftovers)
    assert live.exists()


def test_a_malformed_record_is_named_by_what_it_answers(kbt, tmp_path):
    """Principle of issue 26: a message names the record by reference and invariant, not only
    by its place in a list that the next edit shifts."""
    usage = filled_usage(kbt, tmp_path / "out")
    doc = load(usage)
    record = filled(doc["invariants"])[2]
    record["justification"] = ["not", "text"]
    usage.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    line = one_line(_usage(kbt, usage.parent), f"{usage}:", "US022", exit_code=2)
    assert record["reference"] in line and record["invariant_id"] in line
