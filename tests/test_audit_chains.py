"""Helper chains across files and through classes (issue 37: 22 lines in other files were
missed where the audit stopped before a torch call three calls deep, through classmethods and
``cls.`` chains). A chain that recurses or runs deeper than the walk follows is bounded: the
rest is audited, and one line says which call was not followed."""

from __future__ import annotations

import textwrap

from audit_cases import tree_findings

from kb_tools.audit.batch import audit_files
from kb_tools.audit.discover import python_files
from kb_tools.cli import main

OP = """\
    import torch
    import triton

    from pkg.config import Config


    @triton.jit
    def k(x, y, n, b):
        pass


    def op(x):
        block = Config.get_best("op", x.shape[-1])
        y = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        k[(1,)](x, y, x.numel(), block)
        return y
"""


def _package(tmp_path, config: str) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "config.py").write_text(textwrap.dedent(config))
    (tmp_path / "pkg" / "op.py").write_text(textwrap.dedent(OP))


def _unfollowed(folder) -> list[str]:
    results, errors, _ = audit_files(python_files([str(folder)]), roots=[folder])
    assert errors == []
    return [u.replace(str(folder) + "/", "") for r in results for u in r.unfollowed]


def test_a_torch_call_three_calls_deep_through_classmethods_in_another_file_is_reported(tmp_path):
    _package(tmp_path, """\
        import torch


        def get_file_name(op):
            return f"{op}_{torch.cuda.get_device_name()}.json"


        class Config:
            @classmethod
            def get_best(cls, op, n):
                return cls.get_config(op).get(n, 128)

            @classmethod
            def get_config(cls, op):
                return {"file": get_file_name(op)}
    """)
    assert tree_findings(tmp_path) == [("pkg/config.py", 5, "WB113", ("op",))]
    assert _unfollowed(tmp_path) == []


def test_a_classmethod_cycle_is_walked_once_and_named_in_one_line(tmp_path, capsys):
    _package(tmp_path, """\
        import torch


        class Config:
            @classmethod
            def get_best(cls, op, n):
                return cls.get_config(op, n)

            @classmethod
            def get_config(cls, op, n):
                if n > 1:
                    return cls.get_best(op, n // 2)
                return torch.cuda.device_count()
    """)
    assert tree_findings(tmp_path) == [("pkg/config.py", 13, "WB113", ("op",))]
    assert _unfollowed(tmp_path) == ["pkg/config.py:12 `get_best` (a call back into a function being walked)"]
    assert main(["audit", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if "not followed further" in line] == [
        f"kbt audit: 1 helper call(s) were not followed further, the rest was audited "
        f"(e.g. {tmp_path / 'pkg' / 'config.py'}:12 `get_best` (a call back into a function being walked))"]


def test_a_chain_deeper_than_the_walk_follows_is_cut_there_and_the_rest_audited(tmp_path):
    chain = "\n\n".join(f"def h{i}(x):\n    return h{i + 1}(x)" for i in range(12))
    _package(tmp_path, f"""\
import torch


class Config:
    @classmethod
    def get_best(cls, op, n):
        return h0(torch.cuda.device_count())


{chain}


def h12(x):
    return torch.cuda.synchronize()
""")
    found = tree_findings(tmp_path)
    assert found == [("pkg/config.py", 7, "WB113", ("op",))]  # h12's synchronize lies beyond the cut
    (cut,) = _unfollowed(tmp_path)
    assert cut.endswith("(more than 8 helpers deep)") and cut.startswith("pkg/config.py:")


def test_a_wrapper_whose_launch_lies_beyond_the_cut_is_not_told_it_launches_nothing(tmp_path):
    (tmp_path / "chain").mkdir()
    for i in range(11):
        (tmp_path / "chain" / f"m{i}.py").write_text(f"# jit\nfrom m{i + 1} import f as g\n\n\ndef f(x):\n    return g(x)\n")
    (tmp_path / "chain" / "m11.py").write_text("import triton\n\n\n@triton.jit\ndef k(x):\n    pass\n\n\ndef f(x):\n    k[(1,)](x)\n")
    results, errors, _ = audit_files(python_files([str(tmp_path / "chain")]), roots=[tmp_path / "chain"])
    assert errors == [] and len([w for r in results for w in r.wrapper_info]) == 12
    assert [str(f) for r in results for f in r.findings] == []  # m0..m2 walk 8 helpers deep, then stop: no WB109
    assert sorted(u.split(" ", 1)[1] for r in results for u in r.unfollowed) == ["`f` (more than 8 helpers deep)"] * 3
