"""Round-4 hostile inputs that passed silently, escaped the root or lost data (repros 10, 11,
13, 14, 15, 16, 26): each gets one line naming the file and a non-zero exit, nothing outside
the root is read or written, and the user's file keeps its bytes. Each has a benign control."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from conftest import REPO, copy_repo
from hostile4_support import digest, run_kbt
from conftest import copy_example
from hostile_support import SOFTMAX_ROOT, filled_usage, one_line


def _source(kbt, tmp_path):
    """The worked example's folder, its selection and records merged against this KB (so a
    control passes whatever pages changed since the example was filled)."""
    src = copy_example(SOFTMAX_ROOT.name, tmp_path / "src", ignore=())
    filled_usage(kbt, src)
    return src


def _broken_page(root):
    (root / "kb" / "constraints" / "zz-broken.md").write_text("this page has no front matter\n")


@pytest.mark.parametrize("router", ["missing", "fifo", "folder"])
def test_a_kb_checkout_without_a_usable_router_is_named_not_passed_over(tmp_path, router):
    root = copy_repo(tmp_path)
    _broken_page(root)
    control = run_kbt("lint", cwd=root)
    assert control.code != 0 and "zz-broken" in control.out + control.err  # the KB here is the one linted
    (root / "ROUTER.md").unlink()
    if router == "fifo":
        os.mkfifo(root / "ROUTER.md")
    elif router == "folder":
        (root / "ROUTER.md").mkdir()
    for argv in (["lint"], ["usage", "ops/softmax.yaml", "-o", "out"]):
        run = run_kbt(*argv, cwd=root, timeout=60)
        line = one_line(run, str(root / "ROUTER.md"), "KB003", 2)
        assert ("missing" if router == "missing" else "not a regular file") in line
    assert not (root / "out").exists()


@pytest.mark.parametrize("field, value", [("op", "softmax\n"), ("op", "soft\nmax"), ("class_id", "v2\n")])
def test_a_name_with_a_newline_is_refused_and_makes_no_folder(kbt, tmp_path, field, value):
    ops = tmp_path / "ops"
    ops.mkdir()
    head = {"op": "mean", "class_id": "v2"} | {field: value}
    (ops / "nl.yaml").write_text(f"op: {json.dumps(head['op'])}\nclass_id: {json.dumps(head['class_id'])}\n"
                                 "topologies: [row-reduction]\nproperties:\n  dtypes: [float16]\ncriteria:\n  float16: cross_check\n")
    result = kbt("usage", ops / "nl.yaml", "-o", tmp_path / "out", root=REPO)
    assert result.code != 0 and "SP020" in result.err and "Traceback" not in result.err
    assert not (tmp_path / "out").exists()
    (ops / "nl.yaml").write_text((ops / "nl.yaml").read_text().replace(json.dumps(value), json.dumps(value.strip().replace("\n", ""))))
    assert kbt("usage", ops / "nl.yaml", "-o", tmp_path / "out", root=REPO).code in (0, 1)  # the control is written


def _usage_with(root, index, **implementation):
    path = root / "KB_USAGE.json"
    data = json.loads(path.read_text())
    data["invariants"][index]["implementation"].update(implementation)
    path.write_text(json.dumps(data, indent=2))
    return path


def test_a_nul_in_an_implementation_file_is_a_finding_not_a_traceback(kbt, tmp_path):
    src = _source(kbt, tmp_path)
    assert kbt("check-usage", src / "KB_USAGE.json", "--root", src).code == 0  # control
    usage = _usage_with(src, 0, file="a\u0000b.py")
    for argv in (["check-usage", usage, "--root", src], ["verify", src, "--root", src]):
        result = kbt(*argv)
        assert result.code == 1 and "Traceback" not in result.err, result.err[-600:]
        assert "US045" in result.err and "NUL" in result.err


def test_claims_through_links_out_of_the_root_are_refused(kbt, tmp_path):
    src = _source(kbt, tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def softmax_wrapper(x):\n    return x\nTOKEN = 1\n")
    (src / "escape.py").symlink_to(outside / "secret.py")
    (src / "outdir").symlink_to(outside)
    before = digest(outside / "secret.py")
    _usage_with(src, 0, file="escape.py", symbol="TOKEN")
    usage = _usage_with(src, 1, file="outdir/secret.py", symbol="TOKEN")
    for argv in (["check-usage", usage, "--root", src], ["verify", src, "--root", src]):
        result = kbt(*argv)
        assert result.code == 1 and result.err.count("outside the source root") == 2, result.err[-800:]
    assert digest(outside / "secret.py") == before


def test_verify_refuses_a_selection_wrapper_outside_the_root(kbt, tmp_path):
    src = _source(kbt, tmp_path)
    assert kbt("verify", src, "--root", src).code == 0  # control
    elsewhere = tmp_path / "elsewhere.py"
    shutil.copy(src / "ops" / "wrappers" / "softmax_wrapper.py", elsewhere)
    selection = src / "KB_SELECTION.json"
    data = json.loads(selection.read_text())
    for wrapper in (str(elsewhere), "../elsewhere.py"):
        selection.write_text(json.dumps(data | {"wrapper": wrapper}, indent=2))
        line = one_line(kbt("verify", src, "--root", src), str(selection), "VF004", 2)
        assert "outside the source root" in line


def test_review_refuses_a_usage_file_of_another_operator(kbt, tmp_path):
    src = _source(kbt, tmp_path)
    spec = REPO / "ops" / "softmax.yaml"
    control = kbt("review", spec, "--usage", src / "KB_USAGE.json", "--root", src, "--format", "html", "-o", tmp_path / "ok.html", root=REPO)
    assert control.code == 0, control.err
    usage = src / "KB_USAGE.json"
    usage.write_text(json.dumps(json.loads(usage.read_text()) | {"op": "mean"}, indent=2))
    for fmt in ("md", "html"):
        result = kbt("review", spec, "--usage", usage, "--root", src, "--format", fmt, "-o", tmp_path / f"r.{fmt}", root=REPO)
        line = one_line(result, str(usage), "RV004", 2)
        assert "'mean', not 'softmax'" in line
        assert not (tmp_path / f"r.{fmt}").exists()


@pytest.mark.parametrize("number", ["1e-400", "-2.5e-330", "0.1000000000000000000001", "123456789012345678.5"])
def test_a_merge_never_rewrites_a_number_a_double_cannot_hold(kbt, tmp_path, number):
    out = tmp_path / "out"
    out.mkdir()
    shutil.copy(SOFTMAX_ROOT / "KB_SELECTION.json", out)
    data = json.loads((SOFTMAX_ROOT / "KB_USAGE.json").read_text())
    data["invariants"].pop()
    text = json.dumps(data, indent=2).replace('"class_id": ".",', f'"class_id": ".",\n  "tolerance_floor": {number},', 1)
    (out / "KB_USAGE.json").write_text(text + "\n")
    before = digest(out / "KB_USAGE.json")
    line = one_line(kbt("usage", REPO / "ops" / "softmax.yaml", "-o", out, root=REPO), str(out / "KB_USAGE.json"), "US016", 2)
    assert "not exactly a double" in line
    assert digest(out / "KB_USAGE.json") == before
    (out / "KB_USAGE.json").write_text(text.replace(number, "0.5") + "\n")  # the control merges and keeps the key
    assert kbt("usage", REPO / "ops" / "softmax.yaml", "-o", out, root=REPO).code == 0
    assert json.loads((out / "KB_USAGE.json").read_text())["tolerance_floor"] == 0.5


def test_lint_finds_links_and_evidence_that_leave_the_repository(tmp_path):
    root = copy_repo(tmp_path / "r") if (tmp_path / "r").mkdir() is None else None
    page = root / "kb" / "constraints" / "accumulator-precision.md"
    text = page.read_text()
    control = run_kbt("lint", cwd=root)
    assert "Traceback" not in control.err and "leaves the repository" not in control.out + control.err
    (tmp_path / "outside.md").write_text("x")
    (root / "kb" / "constraints" / "out.md").symlink_to(tmp_path / "outside.md")
    page.write_text(text.replace("    evidence: notebooks/precision_metrics.py", "    evidence: ../../../../../../../../etc/hostname", 1)
                    + "\n[hosts](/etc/hostname) [up](../../../../../../../../etc/hostname) [link](out.md)\n")
    run = run_kbt("lint", cwd=root)
    assert run.code == 1 and "Traceback" not in run.err
    said = run.out + run.err
    assert said.count("leaves the repository") == 4, said
