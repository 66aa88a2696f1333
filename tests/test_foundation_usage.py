"""KB_USAGE.json: the skeleton, merging that never loses a person's work, and check-usage."""

from __future__ import annotations

import copy
import json
import shutil

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import REPO
from kb_tools.contract.selection import select
from kb_tools.contract.specs import load_spec
from kb_tools.contract.usage import merge_usage
from kb_tools.kb.pages import load_kb

KB = load_kb(REPO)
SELECTION = select(KB, load_spec(REPO / "ops" / "bernoulli.yaml"))
SKELETON, _ = merge_usage(SELECTION, None)

text = st.text(min_size=1, max_size=20)
filled_impl = st.fixed_dictionaries({
    "file": st.one_of(st.none(), text),
    "symbol": st.one_of(st.none(), text),
    "status": st.sampled_from([None, "implemented", "deviated", "not_applicable"]),
})


def test_skeleton_has_one_record_per_invariant_with_nulls():
    n = sum(len(v.page.invariants) for v in SELECTION.references)
    assert len(SKELETON["invariants"]) == n
    for record in SKELETON["invariants"]:
        assert record["implementation"] == {"file": None, "symbol": None, "status": None}
        assert record["justification"] is None and record["invariant"] and record["invariant_id"]
    assert (SKELETON["schema_version"], SKELETON["op"], SKELETON["class_id"]) == (3, "bernoulli", ".")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_regenerating_keeps_everything_a_person_wrote(data):
    doc = copy.deepcopy(SKELETON)
    indices = data.draw(st.sets(st.integers(0, len(doc["invariants"]) - 1), max_size=8))
    for i in indices:
        record = doc["invariants"][i]
        record["implementation"] = data.draw(filled_impl)
        record["justification"] = data.draw(st.one_of(st.none(), text))
        if data.draw(st.booleans()):
            record["invariant"] = data.draw(text)
        if data.draw(st.booleans()):
            record["note"] = data.draw(text)  # a key the coder added
    custom = {"reference": SELECTION.constraints[0].page.rel_path, "invariant": data.draw(text),
              "implementation": {"file": "x.py", "symbol": "k", "status": "implemented"}, "justification": None}
    doc["invariants"].append(custom)
    doc["reviewer_notes"] = data.draw(text)
    before = copy.deepcopy(doc)

    merged, report = merge_usage(SELECTION, doc)

    assert doc == before  # the input is not mutated
    for i in indices:
        assert before["invariants"][i] in merged["invariants"]
    assert custom in merged["invariants"]
    assert merged["reviewer_notes"] == before["reviewer_notes"]
    assert report.added == 0 and not report.stale
    again, _ = merge_usage(SELECTION, merged)
    assert again == merged  # a second regeneration is a fixed point


def test_vanished_reference_moves_to_stale_not_lost():
    doc = copy.deepcopy(SKELETON)
    doc["invariants"][0]["implementation"] = {"file": "a.py", "symbol": "f", "status": "implemented"}
    doc["invariants"][0]["reference"] = "constraints/retired-page.md"
    merged, report = merge_usage(SELECTION, doc)
    assert len(report.stale) == 1 and "no longer selected" in report.stale[0]
    (stale,) = merged["stale"]
    assert stale["implementation"] == {"file": "a.py", "symbol": "f", "status": "implemented"}
    # the real invariant the record used to answer is back as a fresh skeleton record
    assert report.added == 1


def _fill(usage_dir, root):
    (root / "impl").mkdir(exist_ok=True)
    (root / "impl" / "bernoulli_impl.py").write_text("def bernoulli_wrapper(x):\n    pass\n\ndef bernoulli_kernel(x):\n    pass\n")
    doc = json.loads((usage_dir / "KB_USAGE.json").read_text())
    for record in doc["invariants"]:
        record["implementation"] = {"file": "impl/bernoulli_impl.py", "symbol": "bernoulli_kernel", "status": "implemented"}
    (usage_dir / "KB_USAGE.json").write_text(json.dumps(doc, indent=2))
    return doc


def test_check_usage_passes_a_hand_filled_file_and_fails_each_corruption(kbt, tmp_path):
    out = tmp_path / "out"
    assert kbt("usage", REPO / "ops" / "bernoulli.yaml", "-o", out).code == 0
    assert kbt("check-usage", out / "KB_USAGE.json", "--root", tmp_path).code == 1  # a bare skeleton is unfilled
    good = _fill(out, tmp_path)
    result = kbt("check-usage", out / "KB_USAGE.json", "--root", tmp_path)
    assert result.code == 0, result.err
    assert "PASS" in result.out

    static_index = next(i for i, r in enumerate(good["invariants"]) if r["invariant_id"] == "no-host-cast")
    review_index = next(i for i, r in enumerate(good["invariants"]) if r["invariant_id"] == "driver-not-delivered")

    def corrupt(mutate, expected):
        bad = copy.deepcopy(good)
        mutate(bad)
        (out / "KB_USAGE.json").write_text(json.dumps(bad, indent=2))
        res = kbt("check-usage", out / "KB_USAGE.json", "--root", tmp_path)
        assert res.code == 1, (expected, res.err)
        assert expected in res.err, res.err
        assert "Traceback" not in res.err

    corrupt(lambda d: d["invariants"][0]["implementation"].update(status="verified"), "only the verifier verifies")
    corrupt(lambda d: d["invariants"][review_index]["implementation"].update(status="deviated"), "justification")
    corrupt(lambda d: d["invariants"][static_index].update(justification="measured, cheap") or
            d["invariants"][static_index]["implementation"].update(status="not_applicable"), "static invariant cannot be not_applicable")
    corrupt(lambda d: d["invariants"][0]["implementation"].update(file="impl/missing.py"), "does not exist")
    corrupt(lambda d: d["invariants"][0]["implementation"].update(symbol="no_such_symbol"), "does not occur")
    corrupt(lambda d: d.update(op="softmax"), "differs from the selection")
    corrupt(lambda d: d["invariants"][0].update(reference="constraints/unknown.md"), "is not in KB_SELECTION.json")
    first_ref = good["invariants"][0]["reference"]
    corrupt(lambda d: d.update(invariants=[r for r in d["invariants"] if r["reference"] != first_ref]), f"{first_ref} has no invariant record")
    corrupt(lambda d: d["invariants"][0]["implementation"].pop("status"), "'status' is required")

    # a page edited after selection reads as stale
    (out / "KB_USAGE.json").write_text(json.dumps(good, indent=2))
    sel = json.loads((out / "KB_SELECTION.json").read_text())
    sel["required_constraints"][0]["sha256"] = "sha256:" + "0" * 64
    (out / "KB_SELECTION.json").write_text(json.dumps(sel, indent=2))
    res = kbt("check-usage", out / "KB_USAGE.json", "--root", tmp_path)
    assert res.code == 1 and "stale selection" in res.err


def test_usage_refuses_to_overwrite_unreadable_or_foreign_files(kbt, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    target = out / "KB_USAGE.json"
    target.write_text('{"invariants": [')  # truncated: a person's half-saved file
    res = kbt("usage", REPO / "ops" / "bernoulli.yaml", "-o", out)
    assert res.code == 2 and "invalid JSON" in res.err
    assert target.read_text() == '{"invariants": ['
    shutil.rmtree(out)
    assert kbt("usage", REPO / "ops" / "softmax.yaml", "-o", out).code == 0
    before = target.read_bytes()
    res = kbt("usage", REPO / "ops" / "bernoulli.yaml", "-o", out)
    assert res.code == 2 and "not 'bernoulli'" in res.err
    assert target.read_bytes() == before
