"""``kbt audit`` end to end: formats, exit codes, bad input, and a harmful file audited
without running it; ``kbt verify`` refusing claims the code does not keep."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kb_tools.audit.codes import RULES

FIXTURES = Path(__file__).parent / "fixtures" / "audit"
ANTI = FIXTURES / "seed003_antipattern.py"
GOOD = FIXTURES / "seed003_compliant.py"


def test_text_format_and_exit_codes(kbt):
    r = kbt("audit", ANTI)
    assert r.code == 1
    lines = [x for x in r.out.splitlines() if ": WB" in x]
    assert lines[0] == f"{ANTI}:19:27: WB101 host cast .to()"
    assert len(lines) == 6
    assert kbt("audit", GOOD).code == 0


def test_json_format(kbt):
    r = kbt("audit", ANTI, "--format", "json")
    data = json.loads(r.out)
    assert set(data) == {"files", "policy", "wrappers", "findings"} and data["files"] == 1 and data["policy"] == "strict"
    assert data["wrappers"] == [{"path": str(ANTI), "name": "op_wrapper", "line": 12, "launches": 1}]
    findings = data["findings"]
    assert [d["code"] for d in findings] == ["WB101", "WB102", "WB103", "WB103", "WB102", "WB101"]
    assert set(findings[0]) == {"path", "line", "col", "code", "message", "wrapper", "fix"}
    assert findings[0]["wrapper"] == "op_wrapper" and findings[0]["line"] == 19 and findings[0]["col"] == 27
    assert findings[0]["fix"] == RULES["WB101"].fix


def test_json_lists_a_clean_wrapper(kbt):
    data = json.loads(kbt("audit", GOOD, "--format", "json").out)
    assert data["findings"] == [] and [w["name"] for w in data["wrappers"]] == ["op_wrapper"]


def test_text_ends_with_each_codes_fix_once(kbt):
    out = kbt("audit", ANTI).out.splitlines()
    tail = out[out.index("how to fix:") + 1:]
    assert [x.split()[0] for x in tail[:3]] == ["WB101", "WB102", "WB103"]
    assert tail[0] == f"  WB101 host-cast: {RULES['WB101'].fix}"
    assert sum(RULES["WB102"].fix in x for x in out) == 1


def test_sarif_format(kbt, tmp_path):
    src = tmp_path / "s.py"
    src.write_text(ANTI.read_text().replace("# cast - measured\n    x_transposed", "# kbt: ignore[WB101]\n    x_transposed", 1))
    r = kbt("audit", src, "--format", "sarif")
    assert r.code == 1
    doc = json.loads(r.out)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == sorted(RULES)
    results = run["results"]
    assert len(results) == 6
    suppressed = [x for x in results if x.get("suppressions")]
    assert len(suppressed) == 1 and suppressed[0]["ruleId"] == "WB101"
    region = results[0]["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] >= 1 and region["startColumn"] >= 1
    assert all(run["tool"]["driver"]["rules"][x["ruleIndex"]]["id"] == x["ruleId"] for x in results)
    assert "suppressed: " in r.err


SHARED_HELPER = """import torch
import pypto_pro.language as pl


@pl.jit
def k(x, y):
    pass


def _prep(t):
    return t.float()


def a_wrapper(x):
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    k(_prep(x), y)
    return y


def b_wrapper(x):
    y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
    k(_prep(x), y)
    return y
"""


def test_sarif_relative_uris_fingerprints_and_one_result_per_helper_line(kbt, tmp_path, monkeypatch):
    (tmp_path / "ops").mkdir()
    (tmp_path / "ops" / "shared.py").write_text(SHARED_HELPER)
    monkeypatch.chdir(tmp_path)
    run = json.loads(kbt("audit", "./ops/../ops/shared.py", "--format", "sarif").out)["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    (result,) = run["results"]
    artifact = result["locations"][0]["physicalLocation"]["artifactLocation"]
    assert artifact == {"uri": "ops/shared.py", "uriBaseId": "%SRCROOT%"}
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 11
    related = result["relatedLocations"]
    assert [x["message"]["text"] for x in related] == ["reached from wrapper `a_wrapper`", "reached from wrapper `b_wrapper`"]
    assert [x["physicalLocation"]["region"]["startLine"] for x in related] == [14, 20]
    (print_once,) = result["partialFingerprints"].values()
    (tmp_path / "ops" / "shared.py").write_text("# a new first line moves every finding\n" + SHARED_HELPER)
    moved = json.loads(kbt("audit", "ops/shared.py", "--format", "sarif").out)["runs"][0]["results"][0]
    assert moved["locations"][0]["physicalLocation"]["region"]["startLine"] == 12
    assert list(moved["partialFingerprints"].values()) == [print_once]
    text = kbt("audit", "ops/shared.py").out
    assert text.count("WB101") == 2  # the finding once, its fix once


def test_select_filters_and_unknown_code_is_a_usage_error(kbt):
    r = kbt("audit", ANTI, "--select", "WB103", "--format", "json")
    assert [d["code"] for d in json.loads(r.out)["findings"]] == ["WB103", "WB103"]
    r = kbt("audit", ANTI, "--select", "WB999")
    assert r.code == 2 and "AU020" in r.err


BAD_FILES = {
    "syntax.py": (b"def f(:\n    pass\n", "AU010"),
    "template.py": (b"def {{ name }}_wrapper(x):\n    {% if fast %}pass{% endif %}\n", "AU010"),
    "latin1.py": ("x = 'caf\xe9'\n".encode("latin-1"), "AU006"),
    "nul.py": (b"x = 1\x00\n", "AU005"),
    "big.py": (b"# " + b"x" * (3 * 1024 * 1024) + b"\n", "AU003"),
}


def test_bad_input_one_line_each_and_the_run_goes_on(kbt, tmp_path):
    for name, (data, _) in BAD_FILES.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "good_wrapper.py").write_text(GOOD.read_text())
    (tmp_path / "__init__.py").write_text("")
    r = kbt("audit", tmp_path)
    assert r.code == 1 and "Traceback" not in r.err
    err = r.err.strip().splitlines()
    assert sorted(x.split(": ")[1].split()[0] for x in err) == sorted(code for _, code in BAD_FILES.values())
    assert "1 wrappers in 2 files, 5 files unusable" in r.out
    for name, (_, code) in BAD_FILES.items():
        alone = kbt("audit", tmp_path / name)
        assert alone.code == 2 and alone.err.count("\n") == 1 and code in alone.err, name
    assert "line 1, column 7" in kbt("audit", tmp_path / "syntax.py").err


def test_empty_files_are_fine_and_a_missing_path_is_one_line(kbt, tmp_path):
    (tmp_path / "__init__.py").write_text("")
    r = kbt("audit", tmp_path / "__init__.py")
    assert r.code == 0 and "AU012" in r.out
    r = kbt("audit", tmp_path / "missing.py")
    assert r.code == 2 and r.err.count("\n") == 1 and "AU001" in r.err


def test_directories_skip_hidden_venvs_build_and_excluded(kbt, tmp_path):
    anti = ANTI.read_text()
    layout = ["ops/a_wrapper.py", "ops/deep/b_wrapper.py", ".hidden/c_wrapper.py", "build/d_wrapper.py",
              "env1/e_wrapper.py", "vendor/f_wrapper.py", "ops/skip_me.py"]
    for rel in layout:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(anti)
    (tmp_path / "env1" / "pyvenv.cfg").write_text("home = /usr\n")
    r = kbt("audit", tmp_path, "--exclude", "vendor", "--exclude", "skip_*.py", "--format", "json")
    data = json.loads(r.out)
    audited = sorted({Path(f["path"]).relative_to(tmp_path).as_posix() for f in data["findings"]})
    assert audited == ["ops/a_wrapper.py", "ops/deep/b_wrapper.py"] and data["files"] == 2


def test_wrapper_pattern_is_repeatable(kbt, tmp_path):
    src = tmp_path / "ops.py"
    src.write_text(ANTI.read_text().replace("def op_wrapper(", "def op_fwd(") + "\n\ndef op_bwd(x):\n    return x.float()\n")
    names = lambda *extra: [w["name"] for w in json.loads(kbt("audit", src, "--format", "json", *extra).out)["wrappers"]]
    assert names() == ["op_fwd"]
    assert names("--wrapper-pattern", "*_fwd", "--wrapper-pattern", "*_bwd") == ["op_fwd", "op_bwd"]


def test_harmful_file_is_audited_without_running(kbt, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    marker = tmp_path / "ran.txt"
    evil = tmp_path / "evil.py"
    evil.write_text(
        "import os, pathlib, torch\n"
        f"os.remove({str(victim)!r})\n"
        f"pathlib.Path({str(marker)!r}).write_text('ran')\n"
        "raise SystemExit(3)\n"
        "def evil_wrapper(x: torch.Tensor):\n"
        "    return x.float()\n"
    )
    r = kbt("audit", evil)
    assert r.code == 1 and "WB101" in r.out and "WB109" in r.out
    assert victim.read_text() == "keep me" and not marker.exists()


def _usage_dir(kbt, tmp_path, wrapper: str) -> Path:
    root = Path(__file__).parents[1]
    out = tmp_path / "softmax"
    assert kbt("select", root / "ops" / "softmax.yaml", "-o", out).code == 0
    assert kbt("usage", root / "ops" / "softmax.yaml", "-o", out).code == 0
    sel = json.loads((out / "KB_SELECTION.json").read_text())
    assert sel["wrapper"] == "ops/wrappers/softmax_wrapper.py"
    sel["wrapper"] = wrapper
    (out / "KB_SELECTION.json").write_text(json.dumps(sel, indent=2))
    usage = json.loads((out / "KB_USAGE.json").read_text())
    for record in usage["invariants"]:
        record["implementation"] = {"file": "ops/wrappers/softmax_wrapper.py", "symbol": "softmax_wrapper", "status": "implemented"}
    (out / "KB_USAGE.json").write_text(json.dumps(usage, indent=2))
    return out


def test_verify_passes_the_compliant_wrapper(kbt, tmp_path):
    out = _usage_dir(kbt, tmp_path, "ops/wrappers/softmax_wrapper.py")
    r = kbt("verify", out, "--root", Path(__file__).parents[1])
    assert r.code == 0, r.err
    assert "PASS" in r.out


def test_verify_refuses_claims_the_wrapper_breaks(kbt, tmp_path):
    root = Path(__file__).parents[1]
    out = _usage_dir(kbt, tmp_path, "ops/wrappers/softmax_antipattern.py")
    r = kbt("verify", out, "--root", root)
    assert r.code == 1
    refused = [x for x in r.err.splitlines() if "VF010" in x and "wrapper-boundary.md" in x]
    assert {x.split()[3].rstrip(":") for x in refused} == {"no-host-cast", "no-host-layout-change", "no-host-reshape-or-slice"}


def test_verify_ignores_justifications_and_suppressions(kbt, tmp_path):
    root = tmp_path / "src"
    (root / "ops" / "wrappers").mkdir(parents=True)
    anti = (Path(__file__).parents[1] / "ops" / "wrappers" / "softmax_antipattern.py").read_text()
    anti = anti.replace("# cast: measured\n    x_transposed", "# kbt: ignore[WB101]\n    x_transposed", 1)
    shutil.copy(Path(__file__).parents[1] / "ops" / "wrappers" / "softmax_wrapper.py", root / "ops" / "wrappers")
    (root / "ops" / "wrappers" / "softmax_antipattern.py").write_text(anti)
    out = _usage_dir(kbt, tmp_path, "ops/wrappers/softmax_antipattern.py")
    usage = json.loads((out / "KB_USAGE.json").read_text())
    for record in usage["invariants"]:
        if record["invariant_id"] == "no-host-cast":
            record["implementation"]["status"] = "deviated"
            record["justification"] = "the profile shows the cast is cheap"
    (out / "KB_USAGE.json").write_text(json.dumps(usage, indent=2))
    r = kbt("verify", out, "--root", root)
    assert r.code == 1
    assert any("VF010" in x and "no-host-cast: claims deviated" in x for x in r.err.splitlines())
    assert "waives nothing under verify" in r.err


def test_verify_without_a_wrapper_is_not_a_pass(kbt, tmp_path):
    out = _usage_dir(kbt, tmp_path, "ops/wrappers/softmax_wrapper.py")
    sel = json.loads((out / "KB_SELECTION.json").read_text())
    sel["wrapper"] = None
    (out / "KB_SELECTION.json").write_text(json.dumps(sel, indent=2))
    r = kbt("verify", out, "--root", Path(__file__).parents[1])
    assert r.code == 1 and "VF001" in r.err
