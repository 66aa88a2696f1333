"""A corpus of malformed inputs: each gets clear lines naming the file (and line where
there is one), exit 1 for findings or 2 for unusable input, and never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import REPO

PAGE = (REPO / "kb/patterns/packed-mask-expansion.md").read_text().replace("id: packed-mask-expansion", "id: bad-page")
SPEC = (REPO / "ops/add.yaml").read_text()


def edited(text, old, new):
    assert old in text, old
    return text.replace(old, new, 1)


def page_with(old, new):
    return edited(PAGE, old, new)


def page_line(prefix, new):
    """The page with its line starting ``prefix`` replaced (for lines whose tail KB edits change)."""
    line = next(line for line in PAGE.splitlines() if line.startswith(prefix))
    return edited(PAGE, line, new)


def spec_with(old, new):
    return edited(SPEC, old, new)


# Pages: (id, content, code). Any bad page, even an unreadable one, is a finding of the KB
# load, so the command exits 1. Specs: (id, content (None: a directory), exit, code).
PAGES = [
    ("page-yaml-syntax", page_with("kind: pattern", "kind: [pattern"), "PG003"),
    ("page-no-front-matter", "# just a title\n", "PG001"),
    ("page-unclosed-front-matter", "---\nid: bad-page\n", "PG002"),
    ("page-wrong-type", page_line("related: [", "related: wrapper-boundary"), "PG010"),
    ("page-title-number", page_with("area: memory", "area: 3"), "PG010"),
    ("page-id-not-stem", page_with("id: bad-page", "id: other-page"), "PG011"),
    ("page-unknown-key", page_with("area: memory", "area: memory\nowner: me"), "PG010"),
    ("page-unknown-topology", page_with("topologies: all", "topologies: [warp-shuffle]"), "PG010"),
    ("page-static-without-rule", page_with("check: review", "check: static"), "PG010"),
    ("page-duplicate-invariant", page_with("  - id: final-prefix-read-whole", "  - id: high-to-low-waves"), "PG013"),
    ("page-duplicate-yaml-key", page_with("area: memory", "area: memory\narea: host"), "PG003"),
    ("page-front-matter-list", "---\n- a\n- b\n---\nbody\n", "PG004"),
    ("page-empty", "", "PG001"),
    ("page-binary", b"\x00\x01\x02binary", "PG005"),
    ("page-not-utf8", b"---\nid: caf\xe9\n---\n", "PG006"),
    ("page-wrong-kind-dir", page_with("kind: pattern", "kind: playbook"), "PG012"),
]

SPECS = [
    ("spec-yaml-syntax", spec_with("op: add", "op: [add"), 1, "SP011"),
    ("spec-unknown-topology", spec_with("[elementwise]", "[elementwise, warp-shuffle]"), 1, "SP020"),
    ("spec-unknown-dtype", spec_with("int64]", "int64, float128]"), 1, "SP020"),
    ("spec-empty", "", 1, "SP010"),
    ("spec-binary", b"\x89PNG\r\n\x1a\n\x00\x00", 2, "SP005"),
    ("spec-directory", None, 2, "SP002"),
    ("spec-wrong-type", spec_with("unaligned_shapes: true", "unaligned_shapes: yes please"), 1, "SP020"),
    ("spec-criterion-for-unregistered-dtype", spec_with("  int64: binary_equal", "  int64: binary_equal\n  uint8: binary_equal"), 1, "SP021"),
    ("spec-unknown-criterion", spec_with("float16: close", "float16: roughly"), 1, "SP020"),
    ("spec-duplicate-key", spec_with("op: add", "op: add\nop: sub"), 1, "SP011"),
    ("spec-not-mapping", "- op: add\n", 1, "SP012"),
    ("spec-class-id-leaves-build", spec_with('class_id: "."', "class_id: ../../elsewhere"), 1, "SP020"),
    ("spec-class-id-absolute", spec_with('class_id: "."', "class_id: /etc"), 1, "SP020"),
    ("spec-number-and-text-keys", spec_with("op: add", "op: add\n1: x\nzz: y"), 1, "SP020"),
    ("spec-missing-properties", "op: add\ntopologies: [elementwise]\ncriteria: {}\n", 1, "SP020"),
]


def _write(path: Path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    if content is None:
        path.mkdir()
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


def _assert_clean_error(result, code, exit_code, name):
    assert result.code == exit_code, result.err
    assert "Traceback" not in result.err and result.err.strip()
    lines = result.err.strip().splitlines()
    assert all(name in line for line in lines), lines
    assert any(f" {code} " in line for line in lines), lines


@pytest.mark.parametrize("case,content,code", PAGES, ids=[p[0] for p in PAGES])
def test_bad_page(kbt, repo_copy, tmp_path, case, content, code):
    _write(repo_copy / "kb" / "patterns" / "bad-page.md", content)
    result = kbt("select", repo_copy / "ops" / "add.yaml", "-o", tmp_path / "out", root=repo_copy)
    _assert_clean_error(result, code, 1, "bad-page.md")


@pytest.mark.parametrize("case,content,exit_code,code", SPECS, ids=[s[0] for s in SPECS])
def test_bad_spec(kbt, tmp_path, case, content, exit_code, code):
    spec = tmp_path / "bad_spec.yaml"
    _write(spec, content)
    result = kbt("select", spec, "-o", tmp_path / "out")
    _assert_clean_error(result, code, exit_code, "bad_spec.yaml")
    assert not (tmp_path / "out").exists()


def test_missing_spec(kbt, tmp_path):
    result = kbt("select", tmp_path / "nope.yaml")
    _assert_clean_error(result, "SP001", 2, "nope.yaml")


def test_duplicate_page_id_across_folders(kbt, repo_copy, tmp_path):
    text = PAGE.replace("kind: pattern", "kind: playbook")
    _write(repo_copy / "kb/playbooks/bad-page.md", text)
    _write(repo_copy / "kb/patterns/bad-page.md", PAGE)
    result = kbt("select", repo_copy / "ops" / "add.yaml", "-o", tmp_path / "out", root=repo_copy)
    _assert_clean_error(result, "PG014", 1, "bad-page.md")


@pytest.mark.parametrize("row,code", [
    ("| Do a thing `do-thing` | `op-review` | [x](kb/constraints/nowhere.md) |", "LN010"),
    ("| Do a thing `do-thing` | `op-review` |", "RT011"),
    ("| Do a thing `do-thing` | `op-review` | no link here |", "RT013"),
    ("| Decide what may run on the host `decide-host-work` | `op-review` | [x](kb/constraints/wrapper-boundary.md) |", "RT014"),
])
def test_bad_router_row(kbt, repo_copy, row, code):
    router = repo_copy / "ROUTER.md"
    text = router.read_text()
    anchor = "|---|---|---|\n"
    router.write_text(text.replace(anchor, anchor + row + "\n", 1))
    result = kbt("lint", "-q", root=repo_copy)
    assert result.code == 1 and "Traceback" not in result.err
    assert any("ROUTER.md:" in line and f" {code} " in line for line in result.err.splitlines()), result.err


def test_router_without_table(kbt, repo_copy):
    (repo_copy / "ROUTER.md").write_text("# Router\n\nNo table here.\n")
    result = kbt("lint", "-q", root=repo_copy)
    assert result.code == 1 and "RT010" in result.err and "Traceback" not in result.err


@pytest.fixture
def usage_dir(kbt, tmp_path):
    out = tmp_path / "u"
    assert kbt("usage", REPO / "ops" / "cat.yaml", "-o", out).code == 0
    return out


USAGE = [
    ("usage-truncated", '{"schema_version": 3, "op": "cat", "invariants": [', 2, "US012"),
    ("usage-duplicate-key", '{"schema_version": 3, "op": "cat", "op": "add", "class_id": ".", "invariants": []}', 2, "US011"),
    ("usage-empty", "", 2, "US010"),
    ("usage-list", "[1, 2]", 1, "US020"),
    ("usage-not-utf8", b'{"op": "caf\xe9"}', 2, "US006"),
    ("usage-binary", b"\x00\x00\x00", 2, "US005"),
    ("usage-invariants-not-list", '{"schema_version": 3, "op": "cat", "class_id": ".", "invariants": {}}', 1, "US030"),
    ("usage-wrong-version", '{"schema_version": 2, "op": "cat", "class_id": ".", "invariants": []}', 1, "US030"),
    ("usage-nan", '{"schema_version": NaN, "op": "cat", "class_id": ".", "invariants": []}', 2, "US014"),
    ("usage-reference-a-list", '{"schema_version": 3, "op": "cat", "class_id": ".", "invariants": [{"reference": ["x"]}]}', 1, "US030"),
]

# Records that are not records: the merge (`kbt usage`) and the review refuse them line by
# line and leave the file as it was. (field path, value)
MALFORMED_RECORDS = [
    ("invariants", 5),
    ("stale", 5),
    ("invariants.0", [1]),
    ("invariants.0.reference", ["a"]),
    ("invariants.0.invariant_id", {"a": 1}),
    ("invariants.0.implementation", 7),
    ("invariants.0.implementation.status", ["implemented"]),
]


def _set(doc, dotted, value):
    *parents, last = dotted.split(".")
    for part in parents:
        doc = doc[int(part)] if part.isdigit() else doc[part]
    doc[int(last) if last.isdigit() else last] = value


@pytest.mark.parametrize("case,content,exit_code,code", USAGE, ids=[u[0] for u in USAGE])
def test_bad_usage_file(kbt, usage_dir, case, content, exit_code, code):
    (usage_dir / "KB_USAGE.json").unlink()
    _write(usage_dir / "KB_USAGE.json", content)
    result = kbt("check-usage", usage_dir / "KB_USAGE.json")
    assert result.code == exit_code, result.err
    assert "Traceback" not in result.err
    assert any(f" {code} " in line and "KB_USAGE.json" in line for line in result.err.splitlines()), result.err


@pytest.mark.parametrize("field,value", MALFORMED_RECORDS, ids=[m[0] for m in MALFORMED_RECORDS])
def test_merge_and_review_refuse_records_that_are_not_records(kbt, usage_dir, field, value):
    path = usage_dir / "KB_USAGE.json"
    doc = json.loads(path.read_text())
    _set(doc, field, value)
    path.write_text(json.dumps(doc, indent=2))
    before = path.read_bytes()
    for argv in (("usage", REPO / "ops" / "cat.yaml", "-o", usage_dir),
                 ("review", REPO / "ops" / "cat.yaml", "--usage", path)):
        result = kbt(*argv)
        assert result.code == 2 and "Traceback" not in result.err, result.err
        (line,) = result.err.strip().splitlines()
        assert line.startswith(f"{path}:") and " US022 " in line and field in line, line
        assert path.read_bytes() == before
    checked = kbt("check-usage", path)
    assert checked.code in (1, 2) and "Traceback" not in checked.err


def test_merge_keeps_an_integer_past_64_bits(kbt, usage_dir):
    path = usage_dir / "KB_USAGE.json"
    doc = json.loads(path.read_text())
    doc["note"] = 10**30
    path.write_text(json.dumps(doc, indent=2))
    assert kbt("usage", REPO / "ops" / "cat.yaml", "-o", usage_dir).code == 0
    assert json.loads(path.read_text())["note"] == 10**30


def test_verify_with_a_wrapper_that_is_not_text(kbt, usage_dir):
    path = usage_dir / "KB_SELECTION.json"
    sel = json.loads(path.read_text())
    sel["wrapper"] = {"file": "x.py"}
    path.write_text(json.dumps(sel, indent=2))
    result = kbt("verify", usage_dir)
    assert result.code == 1 and "Traceback" not in result.err
    assert any("KB_SELECTION.json" in line and "wrapper" in line and " SE020 " in line for line in result.err.splitlines())


def test_usage_status_verified_and_missing_justification(kbt, usage_dir):
    path = usage_dir / "KB_USAGE.json"
    doc = json.loads(path.read_text())
    doc["invariants"][0]["implementation"] = {"file": None, "symbol": None, "status": "verified"}
    doc["invariants"][1]["implementation"] = {"file": None, "symbol": None, "status": "not_applicable"}
    path.write_text(json.dumps(doc, indent=2))
    result = kbt("check-usage", path)
    assert result.code == 1
    assert "US032 status 'verified' is refused: only the verifier verifies" in result.err
    assert "justification" in result.err
    lines = [l for l in result.err.splitlines() if "US032" in l]
    assert lines[0].split(":")[1].isdigit()  # the line of the offending record


def test_usage_without_selection(kbt, usage_dir):
    (usage_dir / "KB_SELECTION.json").unlink()
    result = kbt("check-usage", usage_dir / "KB_USAGE.json")
    assert result.code == 2 and "US001" in result.err and "Traceback" not in result.err


def test_usage_folder_without_a_usage_file(kbt, tmp_path):
    result = kbt("check-usage", tmp_path)  # a folder stands for the KB_USAGE.json in it
    assert result.code == 2 and f"{tmp_path / 'KB_USAGE.json'}" in result.err and "no such file" in result.err


def test_build_over_a_missing_catalog(kbt, tmp_path):
    result = kbt("build", tmp_path / "no-ops", "-o", tmp_path / "b")
    assert result.code == 2 and "BU001" in result.err
