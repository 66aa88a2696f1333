"""The public template's shapes (contract version 3): the encoded invariant string round-trips,
a usage file written in that shape is checked exactly as ours is, its faults come back under
the upstream verifier's category names, and kbt map writes schema 3."""

from __future__ import annotations

import json
import shutil

from hypothesis import given, strategies as st

from conftest import REPO
from kb_tools.contract import upstream
from kb_tools.kb.pages import load_kb

KB = load_kb(REPO)


def _page():
    return KB.pages["wrapper-boundary"]


@given(st.text(min_size=1).filter(lambda s: s.strip() and not s[0].isspace()))
def test_the_encoding_round_trips(text):
    page = _page()
    inv = page.invariants[0]
    decoded = upstream.decode(upstream.encode("required_constraints", page, inv.id, text))
    assert decoded == upstream.Encoded("required_constraints", page.id, inv.id, upstream.anchors_of(page), text)


def test_plain_and_malformed_strings_are_not_encoded():
    assert upstream.decode(_page().invariants[0].text) is None
    assert upstream.decode("[required_constraints:no-slash | x] text") is None
    assert upstream.decode("[other_field:a/b | x] text") is None
    assert upstream.looks_encoded("[required_constraints: broken") and upstream.decode("[required_constraints: broken") is None


def _operator(tmp_path, kbt):
    """A filled softmax operator in its own folder, selected against today's pages."""
    work = tmp_path / "softmax"
    shutil.copytree(REPO / "examples" / "softmax", work)
    assert kbt("usage", REPO / "ops" / "softmax.yaml", "-o", work).code == 0
    return work


def _as_template(doc: dict, fields: dict) -> dict:
    """The file as the public template writes it: no invariant_id, the invariant encoded."""
    records = []
    for r in doc["invariants"]:
        page = KB.by_path(r["reference"])
        r = dict(r)
        r["invariant"] = upstream.encode(fields.get(r["reference"], "required_constraints"), page, r.pop("invariant_id"), r["invariant"])
        records.append(r)
    return {**doc, "invariants": records}


def _codes(result):
    return sorted(line.split(": ")[1].split()[0] for line in (result.err + result.out).splitlines() if ": US" in line or ": SE" in line)


def test_a_template_shaped_file_is_checked_as_ours_is(tmp_path, kbt):
    work = _operator(tmp_path, kbt)
    ours = kbt("check-usage", work / "KB_USAGE.json", "--root", work)
    selection = json.loads((work / "KB_SELECTION.json").read_text())
    fields = {ref["path"]: "optional_patterns" for ref in selection["optional_patterns"]}
    doc = json.loads((work / "KB_USAGE.json").read_text())
    (work / "KB_USAGE.json").write_text(json.dumps(_as_template(doc, fields), ensure_ascii=False, indent=2))
    theirs = kbt("check-usage", work / "KB_USAGE.json", "--root", work)
    assert theirs.code == ours.code and _codes(theirs) == _codes(ours)


def test_template_faults_carry_the_contract_categories(tmp_path, kbt):
    work = _operator(tmp_path, kbt)
    doc = json.loads((work / "KB_USAGE.json").read_text())
    template = _as_template(doc, {})
    first, second, third = template["invariants"][:3]
    first["invariant"] = first["invariant"].replace("[required_constraints:" + first["reference"].split("/")[1][:-3],
                                                    "[required_constraints:some-other-page", 1)
    second["invariant"] = second["invariant"] + " (reworded)"
    third["invariant"] = "[required_constraints: not the shape"
    (work / "KB_USAGE.json").write_text(json.dumps(template, ensure_ascii=False, indent=2))
    r = kbt("check-usage", work / "KB_USAGE.json", "--root", work)
    assert r.code == 1
    assert {"US070", "US071", "US073"} <= set(_codes(r))
    assert "categories: " in r.out and "kb_usage_invalid" in r.out.splitlines()[-1]


def test_kbt_usage_writes_and_keeps_the_upstream_encoding(tmp_path, kbt):
    out = tmp_path / "out"
    assert kbt("usage", REPO / "ops" / "softmax.yaml", "-o", out, "--invariant-format", "upstream").code == 0
    first = json.loads((out / "KB_USAGE.json").read_text())
    assert all(upstream.decode(r["invariant"]) for r in first["invariants"])
    assert kbt("usage", REPO / "ops" / "softmax.yaml", "-o", out).code == 0  # a merge keeps the file's encoding
    assert json.loads((out / "KB_USAGE.json").read_text()) == first
    assert kbt("usage", REPO / "ops" / "softmax.yaml", "-o", out, "--invariant-format", "opkb").code == 0
    plain = json.loads((out / "KB_USAGE.json").read_text())
    assert [r["invariant"] for r in plain["invariants"]] == [upstream.decode(r["invariant"]).text for r in first["invariants"]]


def test_a_stale_selection_is_a_selection_failure(tmp_path, kbt):
    work = _operator(tmp_path, kbt)
    selection = json.loads((work / "KB_SELECTION.json").read_text())
    selection["required_constraints"][0]["sha256"] = "sha256:" + "0" * 64
    (work / "KB_SELECTION.json").write_text(json.dumps(selection, indent=2))
    r = kbt("check-usage", work / "KB_USAGE.json", "--root", work)
    assert r.code == 1 and "kb_selection_invalid" in r.out.splitlines()[-1]


def test_map_schema_3_adds_reference_classes_and_roles(kbt):
    r = kbt("map", "--schema", "3")
    doc = json.loads(r.out)
    assert doc["schema_version"] == 3 and doc["contract"]["contract_version"] == 3
    assert set(doc["contract"]["reference_classes"]) == {"optional_patterns", "required_constraints", "mandatory_constraints"}
    two = json.loads(kbt("map").out)
    assert two["schema_version"] == 2 and {k: v for k, v in doc.items() if k not in ("schema_version", "contract")} == \
        {k: v for k, v in two.items() if k not in ("schema_version", "contract")}


def test_check_usage_and_verify_take_the_folder_or_the_file(tmp_path, kbt):
    work = _operator(tmp_path, kbt)
    by_file, by_folder = kbt("check-usage", work / "KB_USAGE.json", "--root", work), kbt("check-usage", work, "--root", work)
    assert by_file.code == by_folder.code and _codes(by_file) == _codes(by_folder)
    v_folder, v_file = kbt("verify", work, "--root", work), kbt("verify", work / "KB_USAGE.json", "--root", work)
    assert v_folder.code == v_file.code and _codes(v_folder) == _codes(v_file)


def test_a_deviation_without_justification_names_its_invariant(tmp_path, kbt):
    work = _operator(tmp_path, kbt)
    doc = json.loads((work / "KB_USAGE.json").read_text())
    record = doc["invariants"][0]
    record["implementation"]["status"] = "deviated"
    record["justification"] = None
    (work / "KB_USAGE.json").write_text(json.dumps(doc, indent=2))
    r = kbt("check-usage", work)
    line = next(line for line in r.err.splitlines() if "US030" in line)
    assert f"{record['reference']} {record['invariant_id']}" in line and "needs a justification" in line
    assert "invariants.0" not in line


# --- the v3 template's spelling (issue 38 item 5) -------------------------------------------

def _v3_record(record: dict) -> dict:
    """One record as the public v3 template has a coder write it: no invariant_id, the
    req_id and the anchors json.dumps-quoted, a justification only where one is required."""
    page = KB.by_path(record["reference"])
    field = "required_constraints"
    text = upstream.encode(field, page, record["invariant_id"], record["invariant"], quoted=True)
    out = {"reference": record["reference"], "invariant": text, "implementation": dict(record["implementation"])}
    if record["implementation"]["status"] != "implemented":
        out["justification"] = record["justification"]
    return out


def _v3_usage(folder):
    """The softmax example's claims rewritten in the v3 template's encoding, with records only
    for the binding obligations (a not_applicable one left out where its page has another)."""
    doc = json.loads((REPO / "examples" / "softmax" / "KB_USAGE.json").read_text())
    binding = {r["reference"] for r in doc["invariants"] if r["implementation"]["status"] != "not_applicable"}
    kept = [r for r in doc["invariants"]
            if r["implementation"]["status"] != "not_applicable" or r["reference"] not in binding]
    v3 = {"schema_version": 3, "op": doc["op"], "class_id": doc["class_id"], "invariants": [_v3_record(r) for r in kept]}
    folder.mkdir(parents=True)
    shutil.copy(REPO / "examples" / "softmax" / "KB_SELECTION.json", folder / "KB_SELECTION.json")
    (folder / "KB_USAGE.json").write_text(json.dumps(v3, indent=2, ensure_ascii=False) + "\n")
    return v3, len(doc["invariants"]) - len(kept)


def test_the_quoted_spelling_reads_a_bracket_or_bar_inside_an_anchor():
    page = _page()
    inv = page.invariants[0]
    text = f'[optional_patterns:"{page.id}/{inv.id}" | ["a ] b", "c | d"]] {inv.text}'
    assert upstream.decode(text) == upstream.Encoded("optional_patterns", page.id, inv.id, "a ] b, c | d", inv.text)
    assert upstream.decode(f'[optional_patterns:"{page.id}/{inv.id}" | [1]] x') is None  # anchors are strings
    assert upstream.decode(f'[optional_patterns:"{page.id}/{inv.id}" | ["a"' + "] x") is None  # unclosed list


def test_a_file_in_the_v3_template_encoding_round_trips(kbt, tmp_path):
    folder = tmp_path / "softmax"
    v3, dropped = _v3_usage(folder)
    assert dropped and all("invariant_id" not in r for r in v3["invariants"])
    root = REPO / "examples" / "softmax"
    first = kbt("check-usage", folder, "--root", root, root=REPO)
    assert first.code == 0 and "PASS" in first.out, first.err
    written = kbt("usage", REPO / "ops" / "softmax.yaml", "-o", folder, root=REPO)
    assert written.code == 0, written.err
    again = json.loads((folder / "KB_USAGE.json").read_text())
    assert len(again["invariants"]) == len(v3["invariants"])  # only the binding obligations, as read
    assert [r["invariant"] for r in again["invariants"]] == [r["invariant"] for r in v3["invariants"]]
    assert [r["implementation"] for r in again["invariants"]] == [r["implementation"] for r in v3["invariants"]]
    second = kbt("check-usage", folder, "--root", root, root=REPO)
    assert second.code == 0 and "PASS" in second.out, second.err


def test_usage_writes_the_v3_spelling_on_request(kbt, tmp_path):
    result = kbt("usage", REPO / "ops" / "softmax.yaml", "-o", tmp_path / "out", "--invariant-format", "upstream-v3", root=REPO)
    assert result.code == 0, result.err
    doc = json.loads((tmp_path / "out" / "KB_USAGE.json").read_text())
    for record in doc["invariants"]:
        decoded = upstream.decode(record["invariant"])
        assert decoded is not None and record["invariant"].split(":", 1)[1].startswith(f'"{decoded.page_id}/{decoded.invariant_id}" | [')
    assert upstream.spelling((tmp_path / "out" / "KB_USAGE.json").read_bytes()) == "upstream-v3"


def test_hostile_anchors_are_not_an_encoding():
    head = '[required_constraints:"wrapper-boundary/no-host-cast" | '
    assert upstream.decode(head + "[" * 100_000 + "] text") is None  # nested 100,000 deep: no RecursionError
    assert upstream.decode(head + '"' + "x" * 1_000_000) is None  # an unterminated string
