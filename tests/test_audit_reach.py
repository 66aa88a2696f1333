"""Wrappers whose launches the file alone does not show (issue 37: 7 wrappers the blind labels
marked were not found): a public function launching only through ``SomeFunction.apply``, an
``autograd.Function`` whose ``forward`` launches through a helper imported from another module,
a two-stage wrapper whose both launches sit in such helpers. A test file's helper calling a
delivered wrapper stays harness."""

from __future__ import annotations

import shutil
from pathlib import Path

from audit_cases import codes, tree_findings

from kb_tools.audit import audit_source, reach
from kb_tools.audit.batch import audit_files
from kb_tools.audit.discover import python_files

FIXTURES = Path(__file__).parent / "fixtures" / "audit" / "reach"


def _wrappers(folder: Path) -> list[tuple[str, str, int]]:
    results, errors, _ = audit_files(python_files([str(folder)]), roots=[folder])
    assert errors == []
    return [(Path(w.path).relative_to(folder).as_posix(), w.name, w.launches) for r in results for w in r.wrapper_info]


CLASS = """
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        k[(1,)](x, y, x.numel(), 0)
        return y

    @staticmethod
    def backward(ctx, dy):
        return dy

"""


def test_a_function_launching_through_apply_is_a_wrapper_and_its_host_work_is_reported():
    assert codes(CLASS + "def scale(x):\n    return Scale.apply(x.float())\n") == [(14, "WB101")]
    result = audit_source(CLASS + "def scale(x):\n    return Scale.apply(x)\n", "w.py")
    assert [(w.name, w.launches) for w in result.wrapper_info] == [("forward", 1), ("scale", 1)]
    assert result.findings == []
    twice = audit_source(CLASS + "def scale(x):\n    return Scale.apply(Scale.apply(x))\n", "w.py")
    assert [(f.line, f.col, f.code) for f in twice.findings] == [(14, 12, "WB109")]  # the outer call: the second


def test_a_method_reached_through_its_class_is_walked_as_a_helper():
    assert codes("""
        class Prepare:
            @staticmethod
            def apply(x):
                return x.float()

            @classmethod
            def twice(cls, x):
                return cls.apply(x)

        def op_wrapper(x):
            y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
            k[(1,)](Prepare.twice(x), y, x.numel(), 0)
            return y
    """) == [(5, "WB101")]


def test_launches_in_helpers_of_another_module_make_wrappers_and_are_counted():
    found = [(p, line, code, wrappers) for p, line, code, wrappers in tree_findings(FIXTURES)]
    assert found == [("ops/bad.py", 10, "WB102", ("forward", "scale")),
                     ("ops/bad.py", 17, "WB101", ("scale",)),
                     ("ops/bad.py", 21, "WB104", ("two_stage",)),
                     ("ops/bad.py", 24, "WB109", ("two_stage",))]
    assert _wrappers(FIXTURES) == [("ops/bad.py", "forward", 1), ("ops/bad.py", "scale", 1), ("ops/bad.py", "two_stage", 2),
                                   ("ops/good.py", "forward", 1), ("ops/good.py", "scale", 1),
                                   ("ops/good.py", "scale_direct", 1),
                                   ("ops/launchers.py", "launch_scale", 1), ("ops/launchers.py", "launch_finish", 1)]


def test_without_the_launching_module_nothing_is_a_wrapper(tmp_path):
    shutil.copytree(FIXTURES, tmp_path / "reach")
    (tmp_path / "reach" / "ops" / "launchers.py").write_text("def launch_scale(x, y):\n    pass\n\n\n"
                                                             "def launch_finish(x, y):\n    pass\n")
    results, errors, _ = audit_files(python_files([str(tmp_path / "reach")]), roots=[tmp_path / "reach"])
    assert errors == [] and [w.name for r in results for w in r.wrapper_info] == []


def test_chosen_by_name_the_wrappers_are_those_named():
    wrappers = audit_files(python_files([str(FIXTURES)]), roots=[FIXTURES], wrapper_patterns=["two_*"])[0]
    assert [w.name for r in wrappers for w in r.wrapper_info] == ["two_stage"]


def _chain(folder: Path, n: int) -> None:
    """m0 calls m1's f, ..., m{n-1}'s f launches; every text names jit, so each module is read."""
    folder.mkdir()
    for i in range(n - 1):
        (folder / f"m{i}.py").write_text(f"# jit\nfrom m{i + 1} import f as g\n\n\ndef f(x):\n    return g(x.float())\n")
    (folder / f"m{n - 1}.py").write_text("import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\ndef f(x):\n    k[(1,)](x)\n")


def test_a_long_import_chain_is_followed_a_bounded_number_of_modules_the_same_in_parallel(tmp_path):
    _chain(tmp_path / "chain", 40)
    files = python_files([str(tmp_path / "chain")])
    serial, errors, _ = audit_files(files, roots=[tmp_path / "chain"], jobs=1)
    parallel = audit_files(files, roots=[tmp_path / "chain"], jobs=2)[0]
    found = sorted(int(Path(r.path).stem[1:]) for r in serial for _ in r.wrapper_info)
    assert errors == [] and found == list(range(40 - 1 - reach.MAX_MODULES, 40))  # the launcher and 16 modules on
    assert [(r.path, r.wrappers, [str(f) for f in r.findings]) for r in serial] == \
        [(r.path, r.wrappers, [str(f) for f in r.findings]) for r in parallel]


def test_an_import_cycle_ends_and_what_launches_is_found(tmp_path):
    (tmp_path / "a.py").write_text("import triton\nfrom b import bounce\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\n"
                                   "def launch(x):\n    k[(1,)](x)\n\n\ndef ping(x, n):\n    return bounce(x, n - 1)\n")
    (tmp_path / "b.py").write_text("# jit\nfrom a import launch, ping\n\n\ndef bounce(x, n):\n"
                                   "    if n:\n        return ping(x, n)\n    return launch(x.float())\n")
    assert _wrappers(tmp_path) == [("a.py", "launch", 1), ("a.py", "ping", 1), ("b.py", "bounce", 1)]


def test_an_autograd_function_through_a_base_class_of_the_file_and_a_cycle_of_bases():
    base = CLASS.replace("class Scale(torch.autograd.Function):", "class Base(torch.autograd.Function):\n    pass\n\n\n"
                         "class Scale(Base):")
    assert codes(base + "def scale(x):\n    return Scale.apply(x.float())\n") == [(18, "WB101")]
    looped = CLASS.replace("class Scale(torch.autograd.Function):", "class A(B):\n    pass\n\n\nclass B(A):\n    pass\n\n\n"
                           "class Scale(B):")
    result = audit_source(looped + "def scale(x):\n    return Scale.apply(x.float())\n", "w.py")
    assert [w.name for w in result.wrapper_info] == ["forward"]  # not an autograd.Function: apply is not forward


def test_a_path_of_a_wrapper_found_through_apply_that_launches_nothing_is_reported():
    early = "def scale(x):\n    if x.numel() == 0:\n        return x\n    return Scale.apply(x)\n"
    result = audit_source(CLASS + early, "w.py")
    assert [(f.line, f.code) for f in result.findings] == [(15, "WB109")] and "returns without" in result.findings[0].message


def test_a_runs_tree_is_freed_when_the_run_ends():
    """What is known of a tree's launches is kept only while the tree lives: the knowledge must
    not hold the tree itself, or every run's parsed modules stay in memory."""
    import gc

    from kb_tools.audit import package

    chain = Path(__file__).parent / "fixtures" / "audit" / "chain"
    for _ in range(2):
        audit_files(sorted(chain.rglob("*.py")), roots=[chain], jobs=1)
    gc.collect()
    assert not any(type(o) is package.Tree for o in gc.get_objects()) and len(reach._reaches) == 0


def test_a_file_whose_wrappers_launch_in_another_module_is_no_file_of_unknown_role(capsys):
    """A module the audit finds wrappers in, through helpers of other modules, is an
    implementation: no "role cannot be told" note for it, while the wrappers are still listed."""
    import json

    from kb_tools.cli import main

    chain = Path(__file__).parent / "fixtures" / "audit" / "chain"
    main(["audit", str(chain), "--format", "json"])
    captured = capsys.readouterr()
    wrappers = json.loads(captured.out)["wrappers"]
    assert any(w["path"].endswith("pkg/api.py") for w in wrappers) and "AU014" not in captured.err
