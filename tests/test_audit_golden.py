"""The golden family (GD101-GD106, GD105 on third-party legs): one bad and one good fixture
per code, and the conditions each rule depends on (three-party or two-party, integer dtypes,
the spec)."""

from __future__ import annotations

from audit_family_fixtures import audit, codes, fixture, found
from conftest import REPO
from kb_tools.contract.specs import load_spec

GD = codes("GD")
SOFTMAX = load_spec(REPO / "ops" / "softmax.yaml")  # three-party, floats only
ADD = load_spec(REPO / "ops" / "add.yaml")  # two-party, int8 widened to int32


def test_the_family_has_its_six_codes():
    assert GD == ["GD101", "GD102", "GD103", "GD104", "GD105", "GD106",
                  "GD107", "GD108", "GD109", "GD110", "GD111"]  # GD107-GD111: CANN goldens (tests/test_audit_cann.py)


def test_golden_importing_a_kernel_framework(tmp_path):
    src = tmp_path / "relu_golden.py"
    src.write_text("import triton.language as tl\nimport torch\n\n\ndef golden(x):\n    return torch.relu(x)\n")
    assert found(src) == [(1, 1, "GD101")]
    src.write_text("import torch\nimport numpy as np\n\n\ndef golden(x):\n    return torch.relu(x)\n")
    assert found(src) == []


def test_float_casts_are_wrong_only_in_a_three_party_case():
    bad = fixture("GD102", "bad")
    assert {c for *_, c in found(bad, spec=SOFTMAX)} == {"GD102"}
    assert found(bad, spec=ADD, find_specs=False) == []  # two-party: the golden narrows at exit
    unjudged = audit(bad, find_specs=False).findings  # no spec, no verdict: a warning that names the spec
    assert [f.code for f in unjudged] == ["GD106"] and "ops/GD102_bad.yaml was not found" in unjudged[0].message


def test_narrower_is_measured_against_the_widening_of_the_same_kind():
    bad = fixture("GD103", "bad")
    assert [c for *_, c in found(bad)] == ["GD103", "GD103"]  # add2 widens fp16 -> fp32
    assert found(bad, spec=ADD) == []  # add widens only int8: no float widening to fall below
    assert found(fixture("GD103", "good"), spec=ADD) == []


def test_division_rule_needs_integer_dtypes(tmp_path):
    bad = fixture("GD104", "bad")
    assert {c for *_, c in found(bad, spec=ADD)} == {"GD104"}
    assert found(bad, spec=SOFTMAX) == []  # floats only: // is not integer division
    src = tmp_path / "rem_golden.py"  # no spec and no integer dtype named: the dtype is unknown
    src.write_text("import torch\n\n\ndef golden(a, b):\n    return torch.remainder(a, b)\n")
    assert found(src) == []
    src.write_text("import torch\n\n\ndef golden(x, d):\n    return torch.randn(4, d // 2), x.shape[0] // d\n")
    assert found(src, spec=ADD) == []  # // on Python integers


def test_one_missing_guard_is_named(tmp_path):
    src = tmp_path / "fd_golden.py"
    src.write_text("import torch\n\n\ndef golden(a, b):\n    if (b == 0).any():\n        raise ZeroDivisionError\n"
                   "    return torch.floor_divide(a, b).to(torch.int32)\n")
    findings = audit(src).findings
    assert [f.code for f in findings] == ["GD104"] and "INT_MIN / -1" in findings[0].message
    assert "zero" not in findings[0].message


def test_a_test_file_with_a_reference_function_is_not_a_golden(tmp_path):
    src = tmp_path / "test_relu.py"
    src.write_text("import torch\nfrom ops.relu_wrapper import relu_wrapper\n\n\ndef golden_relu(x):\n"
                   "    return torch.relu(x).half()\n\n\ndef test_relu():\n"
                   "    torch.manual_seed(0)\n    x = torch.randn(4)\n    assert torch.equal(relu_wrapper(x), golden_relu(x))\n")
    result = audit(src, spec=SOFTMAX)
    assert result.roles == {"test"} and [f.code for f in result.findings if f.code.startswith("GD")] == []


def test_third_party_leg_narrowing_floats_only(tmp_path):
    bad = fixture("GD105", "bad")
    assert audit(bad).roles == {"third_party"}
    assert {c for *_, c in found(bad, spec=ADD)} == {"GD105"}  # add widens int8 -> int32
    assert found(bad, spec=SOFTMAX) == []  # no integer output is widened: nothing can leave wide
    leg = tmp_path / "third_party.py"  # a role by file name; the repository's own leg is clean
    leg.write_text((REPO / "examples" / "softmax" / "legs" / "third_party.py").read_text())
    assert audit(leg).roles == {"third_party"} and found(leg) == []
    assert found(bad, roles=frozenset({"golden"})) == []  # GD105 is the third-party leg's rule only


MOE_IMPL = "import pypto.language as pl\nimport torch\n\n\n@pl.jit\ndef moe(x, y):\n    pl.store(y, [0], x)\n\n\n" \
           "def golden_moe(x):\n    return torch.relu(x)\n"


def test_golden_importing_a_local_module_that_defines_kernels(tmp_path):
    (tmp_path / "moe.py").write_text(MOE_IMPL)
    (tmp_path / "ref_math.py").write_text("import torch\n\n\ndef golden_moe(x):\n    return torch.relu(x)\n")
    (tmp_path / "utils").mkdir()
    src = tmp_path / "utils" / "fwd_golden.py"
    src.write_text("import torch\nfrom moe import golden_moe\n\n\ndef golden(x):\n    return golden_moe(x)\n")
    assert found(src) == [(2, 1, "GD101")]  # one folder up, as a script's sys.path.insert(0, parent) finds it
    src.write_text("import torch\nfrom ref_math import golden_moe\n\n\ndef golden(x):\n    return golden_moe(x)\n")
    assert found(src) == []  # a local module with torch alone is a fine place for a reference
    src.write_text("import torch\nfrom ..moe import golden_moe\nfrom .... import nothing\n\n\ndef golden(x):\n    return golden_moe(x)\n")
    assert [c for *_, c in found(src)] == ["GD101"]  # relative import; one past the root is no module


def test_a_local_module_made_between_two_audits_is_found_by_the_second(tmp_path):
    """The folders beside a golden are listed once per run, never kept into the next run."""
    from kb_tools.audit.batch import audit_files
    from kb_tools.audit.families import FamilyOptions

    src = tmp_path / "fwd_golden.py"
    src.write_text("import torch\nfrom moe import golden_moe\n\n\ndef golden(x):\n    return golden_moe(x)\n")
    codes_of = lambda: [f.code for r in audit_files([src], roots=[tmp_path], jobs=1, families=FamilyOptions())[0]
                        for f in r.findings]
    assert codes_of() == []  # no moe.py yet: an installed package
    (tmp_path / "moe.py").write_text(MOE_IMPL)
    assert codes_of() == ["GD101"]


def test_a_local_module_that_starts_defining_kernels_is_seen_by_the_next_audit(tmp_path):
    """A long-lived process (the MCP server, a notebook) audits again after an edit: what a
    local module defines, and the spec beside a file, are read afresh for each audit."""
    from kb_tools.audit import audit_path
    from kb_tools.audit.families import FamilyOptions

    (tmp_path / "moe.py").write_text("import torch\n\n\ndef golden_moe(x):\n    return torch.relu(x)\n")
    src = tmp_path / "fwd_golden.py"
    src.write_text("import torch\nfrom moe import golden_moe\n\n\ndef golden(x):\n    return golden_moe(x)\n")
    codes_of = lambda: [f.code for f in audit_path(src, families=FamilyOptions()).findings]
    assert codes_of() == []
    (tmp_path / "moe.py").write_text(MOE_IMPL)
    assert codes_of() == ["GD101"]
