"""Issue 24: the audit of a folder as one tree (imports between its modules followed, a
decorator read as host code of each wrapper it decorates), named policies, and a parallel
run that reports exactly what a serial one does."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from kb_tools.audit import audit_source
from kb_tools.audit.batch import audit_files
from kb_tools.audit.discover import python_files
from kb_tools.audit.policies import POLICIES, policy_table
from kb_tools.audit.report import json_report
from kb_tools.cli import main

from audit_cases import tree_findings

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "tests" / "fixtures" / "audit" / "package"


def test_a_helper_and_a_decorator_imported_from_another_module_are_followed():
    found = tree_findings(PACKAGE)
    # the guard's .contiguous() runs around every call of `scale`; to_fp32's .float() is reached by both wrappers
    assert found == [("pkg/utils.py", 10, "WB102", ("scale",)), ("pkg/utils.py", 17, "WB101", ("scale", "scale_twice"))]


def test_one_file_read_alone_does_not_follow_its_imports():
    text = (PACKAGE / "pkg" / "sub" / "ops.py").read_text()
    result = audit_source(text, "ops.py")
    assert result.wrappers == ["scale", "scale_twice"] and result.findings == []


def test_two_jobs_report_byte_identically_to_one(tmp_path):
    for i in range(70):  # enough files for the default to use both cores
        (tmp_path / f"m{i:02d}.py").write_text((PACKAGE / "pkg" / "sub" / "ops.py").read_text()
                                               .replace("from ..utils", "from pkg.utils"))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "utils.py").write_text((PACKAGE / "pkg" / "utils.py").read_text())
    files = python_files([str(tmp_path)])
    serial = json_report(audit_files(files, roots=[tmp_path], jobs=1)[0])
    parallel = json_report(audit_files(files, roots=[tmp_path], jobs=2)[0])
    assert serial == parallel
    helper_line = [f for f in json.loads(serial)["findings"] if f["line"] == 17]
    assert len(helper_line) == 1  # one finding, reached from 140 wrappers in 70 files


def test_an_import_cycle_and_a_star_import_are_bounded(tmp_path):
    (tmp_path / "a.py").write_text(textwrap.dedent("""\
        import torch
        import triton
        from b import helper
        from c import *


        @triton.jit
        def k(x):
            pass


        def wrap(x):
            y = helper(x)
            k[(1,)](y)
            return y
        """))
    (tmp_path / "b.py").write_text("from a import wrap\n\n\ndef helper(x):\n    return wrap(x.float())\n")
    (tmp_path / "c.py").write_text("from a import *\n")
    # helper calls wrap back: that call launches k once more, so k's own launch is a second one
    # helper launches through wrap (another module of the tree): a wrapper too, reaching its own line, and the
    # cycle launches k a second time from helper as it does from wrap
    assert tree_findings(tmp_path) == [("a.py", 14, "WB109", ("wrap",)), ("b.py", 5, "WB109", ("helper",)),
                                       ("b.py", 5, "WB101", ("helper", "wrap"))]


def test_policies_name_the_reading_and_the_strict_one_says_so():
    text = (ROOT / "tests" / "fixtures" / "audit" / "patterns" / "kernel_choice_bad.py").read_text()
    strict = audit_source(text, "k.py")
    assert [f.code for f in strict.findings] == ["WB109", "WB109"] and strict.policy == "strict"
    assert all(f.message.endswith("[strict policy: the lenient readings let this pass]") for f in strict.findings)
    for name in ("lenient", "pypto-op-lint", "agent-verifier"):
        assert audit_source(text, "k.py", policy=name).findings == []
    cast = ("import torch\nimport triton\n\n@triton.jit\ndef k(x):\n    pass\n\n"
            "def w(x):\n    x = x.float()\n    k[(1,)](x)\n    return x\n")
    assert [f.code for f in audit_source(cast, "c.py", policy="agent-verifier").findings] == ["WB101"]  # .float() is not .to()
    assert audit_source(cast, "c.py", policy="pypto-op-lint").findings == []  # every cast passes there


def test_the_policy_table_in_the_docs_is_the_code_s():
    page = (ROOT / "docs" / "audit-policies.md").read_text()
    assert policy_table() in page
    assert set(POLICIES) == {"strict", "lenient", "pypto-op-lint", "agent-verifier"}


def test_cli_policy_and_jobs(capsys):
    assert main(["audit", "--policy", "nope", str(PACKAGE)]) == 2
    assert "AU021 unknown policy 'nope'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as refused:  # argparse's type (commands._bounds.jobs) refuses it, one line
        main(["audit", "--jobs", "0", str(PACKAGE)])
    assert refused.value.code == 2 and "--jobs: expected a whole number of processes" in capsys.readouterr().err
    assert main(["audit", "--policy", "lenient", str(PACKAGE)]) == 1
    assert "kbt audit (policy lenient): 2 findings" in capsys.readouterr().out


def test_scalars_metadata_predicates_factories_and_device_aliases():
    text = textwrap.dedent("""\
        import torch
        import triton

        device_lib = getattr(torch, "npu")


        @triton.jit
        def k(x):
            pass


        def make(n):
            return k


        def loop_wrapper(xs, x, start, end, step):
            n = int(start)
            m = (end - start) / step
            for i, x in enumerate(xs):
                make(n)(x, m, i)
            if x.is_neg():
                pass
            with device_lib.device(0):
                pass
            return xs
        """)
    found = [(f.line, f.code) for f in audit_source(text, "t.py").findings]
    # int(start) makes start a Python number, is_neg() is a flag, make(n)(...) is a launch (here in a loop),
    # and getattr(torch, ...) is torch under another name
    assert found == [(20, "WB110"), (23, "WB113")]
    assert [(f.line, f.code) for f in audit_source(text, "t.py", policy="lenient").findings] == [(20, "WB110")]


def test_reports_name_the_policy_and_a_helper_s_wrappers_in_other_files(capsys, monkeypatch):
    monkeypatch.chdir(PACKAGE)
    assert main(["audit", "--format", "json", "--policy", "lenient", "."]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["policy"] == "lenient"
    shared = [f for f in doc["findings"] if f["line"] == 17]
    assert shared[0]["wrapper"] == "scale" and shared[0]["also"] == ["scale_twice"]
    assert main(["audit", "--format", "sarif", "."]) == 1
    run = json.loads(capsys.readouterr().out)["runs"][0]
    assert run["properties"] == {"policy": "strict"}
    related = [r for r in run["results"] if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 17][0]
    assert [(x["physicalLocation"]["artifactLocation"]["uri"], x["physicalLocation"]["region"]["startLine"])
            for x in related["relatedLocations"]] == [("pkg/sub/ops.py", 15), ("pkg/sub/ops.py", 23)]


def test_same_named_wrappers_in_two_files_stay_apart(tmp_path):
    helper = "def prep(x):\n    return x.float()\n"
    (tmp_path / "common.py").write_text(helper)
    op = ("import triton\nfrom common import prep\n\n@triton.jit\ndef k(x):\n    pass\n\n"
          "def op(x):\n    y = prep(x)\n    k[(1,)](y)\n    return y\n")
    (tmp_path / "npu_op.py").write_text(op)
    (tmp_path / "ilu_op.py").write_text(op.replace("y = prep(x)", "y = x"))
    results, _, _ = audit_files(python_files([str(tmp_path)]), roots=[tmp_path])
    [finding] = [f for r in results for f in r.findings]
    assert [(Path(p).name, n) for p, n in finding.reached_from] == [("npu_op.py", "op")]


def test_a_python_value_helper_fed_a_tensor_and_a_buffer_only_fed_to_softmax():
    text = textwrap.dedent("""\
        import torch
        import triton


        @triton.jit
        def k(x, s):
            pass


        def op(x, lens: torch.Tensor):
            chunks = triton.cdiv(lens[1:] - lens[:-1], 64)
            scratch = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](x, scratch)
            return torch.softmax(scratch, -1)
        """)
    found = [(f.line, f.code) for f in audit_source(text, "t.py").findings]
    assert (11, "WB107") in found  # triton.cdiv of a tensor: host tensor arithmetic
    assert (12, "WB104") in found  # softmax makes another tensor: scratch is still scratch


def test_a_decorator_that_decorates_itself_is_walked_once(tmp_path):
    (tmp_path / "d.py").write_text(textwrap.dedent("""\
        import triton


        def deco(fn):
            @deco
            def wrapper(*args):
                return fn(*[a.contiguous() for a in args])
            return wrapper


        @triton.jit
        def k(x):
            pass


        @deco
        @deco
        def w(x):
            k[(1,)](x)
            return x
        """))
    assert tree_findings(tmp_path) == [("d.py", 7, "WB102", ("w",))]


def test_a_call_only_a_star_import_binds_is_one_line_and_the_rest_is_audited(tmp_path, capsys):
    (tmp_path / "a.py").write_text("import triton\nfrom helpers import *\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\n"
                                   "def wrap(x):\n    y = prepare(x)\n    k[(1,)](y)\n    return len(y)\n")
    (tmp_path / "helpers.py").write_text("def prepare(x):\n    return x.float()\n")
    (tmp_path / "b.py").write_text("import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\n"
                                   "def other(x):\n    k[(1,)](x.contiguous())\n    return x\n")
    assert main(["audit", str(tmp_path)]) == 1
    out, err = capsys.readouterr()
    assert [line for line in err.splitlines() if "star import" in line] == [
        f"kbt audit: 1 star import(s) may bind names that wrappers call; those calls were not followed "
        f"(e.g. {tmp_path / 'a.py'}:2); import the names explicitly"]
    assert f"{tmp_path / 'b.py'}:10:" in out and "2 wrappers in 3 files" in out  # the rest is audited


def test_a_decorator_that_recurses_is_walked_once(tmp_path):
    (tmp_path / "guard.py").write_text(textwrap.dedent("""\
        import functools


        def guard(fn):
            @functools.wraps(fn)
            def inner(*args, **kwargs):
                args = [a.contiguous() for a in args]
                return guard(fn)(*args, **kwargs)
            return inner


        def selfish(fn):
            @selfish
            def inner(*args, **kwargs):
                return inner(*args, **kwargs)
            return inner
        """))
    (tmp_path / "ops.py").write_text(textwrap.dedent("""\
        import triton
        from guard import guard, selfish


        @triton.jit
        def k(x):
            pass


        @guard
        def scale(x):
            k[(1,)](x)
            return x


        @selfish
        @guard
        def shift(x):
            y = x.float()
            k[(1,)](y)
            return y
        """))
    assert tree_findings(tmp_path) == [("guard.py", 7, "WB102", ("scale", "shift")), ("ops.py", 19, "WB101", ("shift",))]
