"""Roles and the families' plumbing through ``kbt audit``: a file's role told from what it
holds, ``--role`` and ``--spec``, the one-line note for a file whose role cannot be told,
the three output formats, suppressions and ``--select``; and the lint rule that every code
has a page and fixtures."""

from __future__ import annotations

import dataclasses
import json
import shutil

from audit_family_fixtures import FAMILY_FIXTURES, audit, fixture
from conftest import REPO
from kb_tools.audit.codes import RULES
from kb_tools.kb.pages import load_kb
from kb_tools.lint import LintContext, check_rule_codes

GOLDEN_SRC = "import torch\nfrom ops.wrappers.relu_wrapper import relu_wrapper\n\n\ndef reference(x):\n    return torch.relu(x)\n"


def test_roles_from_names_and_contents(tmp_path):
    cases = {
        "relu_golden.py": (GOLDEN_SRC, {"golden"}),
        "helpers.py": (GOLDEN_SRC.replace("def reference", "def golden_relu"), {"golden"}),
        "test_relu.py": ("def check():\n    pass\n", {"test"}),
        "checks.py": ("class TestRelu:\n    def test_one(self):\n        pass\n", {"test"}),
        "sample.py": ("import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\ndef test_k():\n    k[(1,)](1)\n",
                      {"impl", "test"}),
        "legs.py": ("import torch\n\n\ndef third_party_relu(x):\n    return torch.relu(x)\n", {"third_party"}),
        "util.py": ("def add(a, b):\n    return a + b\n", set()),
    }
    for name, (text, roles) in cases.items():
        (tmp_path / name).write_text(text)
        assert audit(tmp_path / name).roles == roles, name


def test_a_file_whose_role_cannot_be_told_gets_one_line_and_the_wrapper_family(kbt, tmp_path):
    src = tmp_path / "util.py"
    src.write_text("import torch\n\n\ndef shape_of(x):\n    return x.shape\n")
    (tmp_path / "__init__.py").write_text("")
    r = kbt("audit", tmp_path)
    assert r.code == 0 and "Traceback" not in r.err
    assert r.err.splitlines() == [f"{src}: AU014 role cannot be told (no kernel or launch, no test_*, no golden, no third-party leg); "
                                  "wrapper family only (choose with --role)"]
    wrapper = tmp_path / "cast_wrapper.py"  # unknown role, still audited as a wrapper
    wrapper.write_text("def cast_wrapper(x):\n    return x.float()\n")
    codes = [f["code"] for f in json.loads(kbt("audit", wrapper, "--format", "json").out)["findings"]]
    assert "WB101" in codes and not any(c[:2] in ("GD", "TS", "KN") for c in codes)


def test_role_option_overrides_what_the_file_holds(kbt, tmp_path):
    src = tmp_path / "reference.py"
    src.write_text(GOLDEN_SRC)
    assert kbt("audit", src).code == 0  # no golden function, no golden name: no role
    r = kbt("audit", src, "--role", "golden", "--format", "json")
    assert r.code == 1 and [f["code"] for f in json.loads(r.out)["findings"]] == ["GD101"]
    as_test = kbt("audit", fixture("GD101", "bad"), "--role", "test", "--format", "json")
    assert not any(f["code"].startswith("GD") for f in json.loads(as_test.out)["findings"])


def test_bad_role_and_bad_spec_are_one_line_usage_errors(kbt, tmp_path):
    r = kbt("audit", fixture("GD101", "bad"), "--role", "delivery")
    assert r.code == 2 and r.err.count("\n") == 1 and "AU021" in r.err
    spec = tmp_path / "broken.yaml"
    spec.write_text("op: [unclosed\n")
    r = kbt("audit", fixture("GD101", "bad"), "--spec", spec)
    assert r.code == 2 and "Traceback" not in r.err and str(spec) in r.err


def test_spec_option_replaces_the_spec_found_beside_the_file(kbt):
    bad = fixture("GD102", "bad")  # beside softmax3 (three-party)
    assert kbt("audit", bad).code == 1
    assert kbt("audit", bad, "--spec", REPO / "ops" / "add.yaml").code == 0  # two-party: casts at exit are due


def test_family_findings_in_json_and_sarif(kbt, tmp_path, monkeypatch):
    monkeypatch.chdir(FAMILY_FIXTURES)
    data = json.loads(kbt("audit", ".", "--format", "json").out)
    codes = {f["code"] for f in data["findings"]}
    cann_only = {"GD107", "GD108", "GD109", "GD110", "GD111"}  # CANN goldens only: tests/test_audit_cann.py
    assert codes == {c for c in RULES if c[:2] in ("GD", "TS", "KN")} - cann_only
    assert all(f["fix"] == RULES[f["code"]].fix for f in data["findings"])
    run = json.loads(kbt("audit", ".", "--format", "sarif").out)["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert rules["GD101"]["properties"]["tags"] == ["golden"] and rules["KN101"]["properties"]["tags"] == ["kernel"]
    assert rules["TS105"]["defaultConfiguration"]["level"] == "warning"
    assert {r["ruleId"] for r in run["results"]} == codes
    assert all(r["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] == "%SRCROOT%" for r in run["results"])


def test_suppressions_and_select_work_for_the_families(kbt, tmp_path):
    src = tmp_path / "GD101_bad.py"
    text = fixture("GD101", "bad").read_text()
    src.write_text(text.replace("import relu_wrapper\n", "import relu_wrapper  # kbt: ignore[GD101]\n", 1))
    r = kbt("audit", src)
    assert r.code == 0 and "suppressed by `# kbt: ignore[...]` (1)" in r.out
    both = tmp_path / "test_mixed.py"
    both.write_text("import torch\nfrom relu_wrapper import relu_wrapper\n\n\ndef test_relu():\n"
                    "    x = torch.randn(4)\n    assert torch.allclose(relu_wrapper(x), x.clamp(min=0))\n")
    codes = lambda *extra: [f["code"] for f in json.loads(kbt("audit", both, "--format", "json", *extra).out)["findings"]]
    assert codes() == ["TS105", "TS102"]
    assert codes("--select", "TS102") == ["TS102"]
    assert codes("--select", "WB") == []


def test_lint_finds_a_code_without_page_or_fixtures(tmp_path):
    kb = load_kb(REPO)
    ctx = LintContext(REPO, kb)
    assert check_rule_codes(ctx) == (len(RULES), [])
    partial = tmp_path / "repo"
    shutil.copytree(FAMILY_FIXTURES, partial / "tests" / "fixtures" / "audit_families")
    (partial / "tests" / "fixtures" / "audit_families" / "plain" / "KN103_good.py").unlink()
    (partial / "kb").mkdir()  # a KB without its inventory is AU031 (repro 04), not what this case is about
    shutil.copy(REPO / "kb" / "api_inventory.yaml", partial / "kb" / "api_inventory.yaml")
    _, diags = check_rule_codes(LintContext(partial, kb))
    messages = {(d.code, d.message.split()[1]) for d in diags}
    assert ("LN044", "KN103") in messages and ("LN044", "WB101") in messages  # WB fixtures are not in the copy
    assert all(d.code == "LN044" for d in diags)
    page = kb.pages["platform-gated-conversion"]
    kb.pages[page.id] = dataclasses.replace(page, invariants=tuple(i for i in page.invariants if i.rule != "KN103"))
    _, diags = check_rule_codes(LintContext(REPO, kb))
    assert [(d.code, d.message.split()[1]) for d in diags] == [("LN043", "KN103")]


def test_deep_code_is_one_line_and_a_long_call_chain_is_followed(kbt, tmp_path):
    terms = " + ".join(["x"] * 1500)  # parses, but is deeper than the kernel rules follow
    deep = tmp_path / "deep_impl.py"
    deep.write_text(f"import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(x_ptr, y_ptr):\n"
                    f"    x = tl.load(x_ptr)\n    tl.store(y_ptr, tl.exp({terms}))\n\n\n"
                    "def k_wrapper(x):\n    y = x.float()\n    k[(1,)](x, y)\n    return y\n")
    r = kbt("audit", deep)
    assert r.code == 1 and "Traceback" not in r.err and "WB101" in r.out  # the wrapper family still ran
    assert r.err.splitlines() == [f"{deep}: AU013 too deeply nested for the impl rules; they were skipped for this file"]
    chain = tmp_path / "test_chain.py"
    chain.write_text("from relu_wrapper import relu_wrapper\n"
                     + "".join(f"def f{i}():\n    return f{i + 1}()\n" for i in range(3000))
                     + "def f3000():\n    return relu_wrapper\n\n\ndef test_x():\n    f0()\n")
    r = kbt("audit", chain, "--format", "json")
    assert r.code == 0 and json.loads(r.out)["findings"] == []


def test_a_kernel_named_for_a_test_is_not_a_test(tmp_path):
    src = tmp_path / "hc_pre.py"
    src.write_text("import pypto.language as pl\n\n\n@pl.jit\ndef hc_pre_test(x, y):\n    pl.store(y, [0], x)\n")
    assert audit(src).roles == {"impl"}
    src.write_text("import pypto.language as pl\n\n\n@pl.jit\ndef k_test(x, y):\n    pl.store(y, [0], x)\n\n\n"
                   "def golden_k_test(tensors):\n    tensors['y'][:] = tensors['x']\n")
    assert audit(src).roles == {"impl"}  # the golden of a test kernel is no test
    src.write_text("import pypto.language as pl\n\n\n@pl.jit\ndef k(x, y):\n    pl.store(y, [0], x)\n\n\ndef test_k():\n    k(1, 2)\n")
    assert audit(src).roles == {"impl", "test"}


def test_a_file_importing_a_kernel_framework_is_not_a_standalone_golden(tmp_path):
    src = tmp_path / "decode.py"
    body = "\n\ndef build():\n    @pl.program\n    class Decode:\n        pass\n    return Decode\n\n\n" \
           "def golden_decode(tensors):\n    import torch\n    tensors['y'][:] = torch.relu(tensors['x'])\n"
    src.write_text("import pypto.language as pl\n" + body)
    assert "golden" not in audit(src).roles  # an implementation holding its reference, kernels built in a class
    src.write_text("import torch\n" + body.replace("@pl.program", "@staticmethod"))
    assert audit(src).roles == {"golden"}


def test_family_heldout_labels_are_well_formed_and_held_out():
    import re

    import yaml

    corpus = REPO / "benchmarks" / "audit_corpus"
    tuned = {x["repo"] for x in yaml.safe_load((corpus / "labels.yaml").read_text())}
    data = yaml.safe_load((corpus / "family_heldout.yaml").read_text())
    scopes = {}
    for source in data["sources"]:
        assert set(source) == {"batch", "repo", "commit", "paths", "scope"}, source
        assert source["repo"] not in tuned and re.fullmatch(r"[0-9a-f]{40}", source["commit"])
        assert all(RULES[c].code[:2] in ("GD", "TS", "KN") for c in source["scope"])
        scopes.setdefault(source["repo"], set()).update(source["scope"])
    for label in data["labels"]:
        assert set(label) == {"repo", "path", "line", "code", "why"}, label
        assert label["code"] in scopes[label["repo"]] and label["line"] > 0 and label["why"].strip()


def test_a_file_s_stem_is_read_as_pathlib_reads_it():
    from pathlib import Path

    from kb_tools.audit.roles import _stem

    for path in ("a/test_b.py", "b_golden.py", "<source>", "x/.hidden.py", "a.", "..", "a/..", ".py", "a.tar.gz",
                 "a//b_test.py", "a/./b.py", "a/b.py/", ".", "", "...", "x.py.", "dir/test_x"):
        assert _stem(path) == Path(path).stem, path
