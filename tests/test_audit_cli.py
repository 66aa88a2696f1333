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
    assert [d["code"] for d in data] == ["WB101", "WB102", "WB103", "WB103", "WB102", "WB101"]
    assert set(data[0]) == {"path", "line", "col", "code", "message", "wrapper"}
    assert data[0]["wrapper"] == "op_wrapper" and data[0]["line"] == 19 and data[0]["col"] == 27


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


def test_select_filters_and_unknown_code_is_a_usage_error(kbt):
    r = kbt("audit", ANTI, "--select", "WB103", "--format", "json")
    assert [d["code"] for d in json.loads(r.out)] == ["WB103", "WB103"]
    r = kbt("audit", ANTI, "--select", "WB999")
    assert r.code == 2 and "AU020" in r.err


def test_bad_input_one_line_each(kbt, tmp_path):
    cases = {
        "syntax.py": b"def f(:\n    pass\n",
        "latin1.py": "x = 'caf\xe9'\n".encode("latin-1"),
        "empty.py": b"",
        "big.py": b"# " + b"x" * (10 * 1024 * 1024) + b"\n",
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / "adir").mkdir()
    want = {"syntax.py": "AU010", "latin1.py": "AU006", "empty.py": "AU011", "big.py": "AU003", "adir": "AU002"}
    for name, code in want.items():
        r = kbt("audit", tmp_path / name)
        assert r.code == 2, name
        err = r.err.strip().splitlines()
        assert len(err) == 1 and code in err[0] and "Traceback" not in r.err, (name, r.err)
    assert "line 1, column 7" in kbt("audit", tmp_path / "syntax.py").err


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
