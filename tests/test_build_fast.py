"""``kbt build``'s shortcuts change nothing it writes: selections shared between operators of
equal facts, skeleton records made once per page, files that already hold the right bytes
left alone, and a whole catalog's specs remembered between builds."""

from __future__ import annotations

import json
import os
import random

import pytest

from conftest import REPO
from kb_tools.contract import specs as spec_memo
from kb_tools.contract.selection import Router, evaluate, select
from kb_tools.contract.specs import load_spec
from kb_tools.contract.usage import fresh_usage, merge_usage
from kb_tools.diagnostics import KbError
from kb_tools.files import cache
from kb_tools.files.jsonio import dump_bytes, write_atomic
from kb_tools.kb import vocabulary as V
from kb_tools.kb.pages import load_kb

KB = load_kb(REPO)


def _random_specs(folder, n: int, seed: int = 1):
    """Specs drawn over the whole vocabulary, several of them sharing their facts."""
    rng = random.Random(seed)
    folder.mkdir(exist_ok=True)
    paths = []
    for i in range(n):
        dtypes = rng.sample(V.DTYPES, rng.randint(1, 3))
        flags = rng.sample([k for k in V.PROPERTY_KEYS if k not in V.LIST_PROPERTY_KEYS], rng.randint(0, 3))
        text = "\n".join([f"op: op{i}", f"topologies: [{', '.join(rng.sample(V.TOPOLOGIES, rng.randint(1, 2)))}]",
                          "properties:", f"  dtypes: [{', '.join(dtypes)}]", *(f"  {f}: true" for f in flags),
                          f"target: {rng.choice(V.TARGETS)}", "criteria:", *(f"  {d}: {rng.choice(V.CRITERIA)}" for d in dtypes)])
        path = folder / f"op{i}.yaml"
        path.write_text(text + "\n")
        paths.append(path)
    return paths


def test_one_router_gives_every_page_the_verdict_it_gets_alone(tmp_path):
    router = Router(KB)
    pages = sorted(KB.pages.values(), key=lambda p: p.rel_path)
    for path in _random_specs(tmp_path, 40) + sorted((REPO / "ops").glob("*.yaml")):
        spec = load_spec(path)
        sel = router.select(spec)
        alone = {p.rel_path: evaluate(p, spec, spec.facts()) for p in pages}
        for bucket in (sel.constraints, sel.patterns, sel.playbooks, sel.excluded):
            for verdict in bucket:
                assert verdict == alone[verdict.page.rel_path]
        assert sorted(v.page.rel_path for v in sel.excluded) == sorted(p for p, v in alone.items() if not v.applies)
        assert sel.to_json() == select(KB, spec).to_json()


def test_operators_with_equal_facts_differ_only_in_their_names(tmp_path):
    body = "topologies: [elementwise]\nproperties: {dtypes: [float16, int8]}\ncriteria: {float16: close, int8: binary_equal}\n"
    (tmp_path / "a.yaml").write_text("op: a\n" + body)
    (tmp_path / "b.yaml").write_text("op: b\n" + body)
    router = Router(KB)
    a, b = router.select(load_spec(tmp_path / "a.yaml")), router.select(load_spec(tmp_path / "b.yaml"))
    assert {**a.to_json(), "op": "b"} == b.to_json()
    a.constraints.clear()  # a caller's edit of one selection does not reach the other
    assert b.constraints and router.select(load_spec(tmp_path / "a.yaml")).constraints


@pytest.mark.parametrize("varied", ["target", "topologies", "dtypes"])
def test_operators_that_differ_in_one_routing_input_are_routed_apart(tmp_path, varied):
    """One router, many operators equal but for one input: each gets what a router of its own gives."""
    choices = {"target": ["target: a2", "target: a5"],
               "topologies": ["topologies: [elementwise, scan]", "topologies: [scan, elementwise]", "topologies: [scan]"],
               "dtypes": ["properties: {dtypes: [float16]}", "properties: {dtypes: [int8]}", "properties: {dtypes: [float16, int8]}",
                          "properties: {dtypes: [float16, int8, int32]}"]}
    base = {"target": "target: a2", "topologies": "topologies: [elementwise]", "dtypes": "properties: {dtypes: [float16]}"}
    router = Router(KB)
    seen = set()
    for i, line in enumerate(choices[varied]):
        lines = {**base, varied: line}
        dtypes = lines["dtypes"].split("[")[1].split("]")[0].split(", ")
        (tmp_path / f"s{i}.yaml").write_text("op: a\n" + "\n".join(lines.values()) + "\ncriteria: {" + ", ".join(f"{d}: close" for d in dtypes) + "}\n")
        spec = load_spec(tmp_path / f"s{i}.yaml")
        doc = router.select(spec).to_json()
        assert doc == Router(KB).select(spec).to_json()
        seen.add(json.dumps(doc["required_constraints"] + doc["optional_patterns"] + doc["excluded"]))
    assert len(seen) > 1  # the input changes what is written


def test_fresh_usage_is_the_merge_with_nothing(tmp_path):
    router, skeletons = Router(KB), {}
    for path in _random_specs(tmp_path, 20) + sorted((REPO / "ops").glob("*.yaml")):
        sel = router.select(load_spec(path))
        merged, _ = merge_usage(sel, None)
        assert dump_bytes(fresh_usage(sel, skeletons)) == dump_bytes(merged)


def _state(folder):
    return {p.relative_to(folder): (p.read_bytes(), p.stat().st_ino, p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_rebuild_writes_nothing_and_keeps_filled_records(kbt, tmp_path):
    out = tmp_path / "out"
    assert kbt("build", REPO / "ops", "-o", out, root=REPO).code == 0
    before = _state(out)
    assert kbt("build", REPO / "ops", "-o", out, root=REPO).code == 0
    assert _state(out) == before  # same bytes, same files: nothing replaced
    usage = out / "add" / "KB_USAGE.json"
    doc = json.loads(usage.read_text())
    doc["invariants"][0]["implementation"] = {"file": "add.cpp", "symbol": "Add", "status": "implemented"}
    usage.write_text(json.dumps(doc, indent=1))
    assert kbt("build", REPO / "ops", "-o", out, root=REPO).code == 0
    again = json.loads(usage.read_text())
    assert again["invariants"][0]["implementation"]["status"] == "implemented"
    assert usage.read_bytes() == dump_bytes(merge_usage(select(KB, load_spec(REPO / "ops" / "add.yaml")), doc)[0])


def test_write_atomic_keeps_equal_bytes_and_makes_missing_folders(tmp_path):
    path = tmp_path / "a" / "b" / "f.json"
    assert write_atomic(path, b"{}\n", keep_equal=True)
    inode = path.stat().st_ino
    assert not write_atomic(path, "{}\n", keep_equal=True)
    assert path.stat().st_ino == inode
    assert write_atomic(path, "[]\n", keep_equal=True) and path.read_text() == "[]\n"
    assert oct(path.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.json"]  # no temporary left behind


def test_write_atomic_onto_a_folder_is_refused_and_leaves_nothing(tmp_path):
    (tmp_path / "f.json").mkdir()
    with pytest.raises(KbError) as err:
        write_atomic(tmp_path / "f.json", "{}\n", keep_equal=True)
    assert err.value.diagnostic.code == "IO011"
    assert [p.name for p in tmp_path.iterdir()] == ["f.json"]


def test_a_build_remembers_more_specs_than_the_shared_memo(kbt, tmp_path, monkeypatch):
    monkeypatch.setenv("OPKB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(spec_memo, "MEMO", cache.Memo("specs", max_items=4))
    paths = _random_specs(tmp_path / "ops", 9)
    assert kbt("build", tmp_path / "ops", "-o", tmp_path / "out", root=REPO).code == 0
    remembered = cache.Memo("catalog-specs", max_items=9)
    keys = [spec_memo._memo_key(p.read_text()) for p in paths]
    assert all(remembered.get(k) is not None for k in keys)
    assert spec_memo.MEMO.max_items == 4  # the shared memo is back, as small as it was


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@pytest.mark.parametrize("output", ["FILE", "FILE/sub"])
def test_an_output_folder_blocked_by_a_file_is_one_line(kbt, tmp_path, output):
    (tmp_path / "FILE").write_text("a person's notes\n")
    result = kbt("build", REPO / "ops", "-o", tmp_path / output, root=REPO)
    assert result.code == 2
    assert result.err.splitlines() == [f"{tmp_path / 'FILE'}: IO010 exists and is not a directory; a folder is needed here"]
    assert (tmp_path / "FILE").read_text() == "a person's notes\n"
    assert [p.name for p in tmp_path.iterdir()] == ["FILE"]
