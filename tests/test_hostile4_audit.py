"""Round-4 hostile inputs to the audit (repros 03, 04, 05, 07, 09): a FIFO beside a test never
blocks it, a huge conftest.py is glanced at, not read, a helper chain costs time in proportion
to its length, a list literal stays under the memory promise or is refused in one line, and a
KB whose API inventory is missing or unusable says so instead of switching KN103 off."""

from __future__ import annotations

import os
import time

import pytest

from conftest import copy_repo
from hostile4_support import run_kbt

TEST = ("import torch\nfrom golden import golden_relu\n\ndef test_relu():\n    x = torch.randn(4)\n"
        "    assert torch.equal(golden_relu(x), golden_relu(x))\n")


def test_a_fifo_beside_a_test_blocks_neither_the_audit_nor_the_edit_hook(tmp_path):
    (tmp_path / "test_relu.py").write_text(TEST)
    (tmp_path / "golden.py").write_text("def golden_relu(x):\n    return x\n")
    control = run_kbt("audit", "test_relu.py", cwd=tmp_path, timeout=60)
    os.mkfifo(tmp_path / "zz_anything.py")
    run = run_kbt("audit", "test_relu.py", cwd=tmp_path, timeout=60)
    assert run.code == control.code == 1 and run.out == control.out  # 124 (blocked) before the fix
    hook = run_kbt("hook", "edit", cwd=tmp_path, stdin=b'{"tool_input": {"file_path": "test_relu.py"}}', timeout=60)
    assert hook.code == 2 and "TS101" in hook.err


def test_a_huge_conftest_is_glanced_at_not_read(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "test_relu_wrapper.py").write_text(
        "import torch\nfrom relu_wrapper import relu_wrapper\n\ndef test_relu():\n    x = torch.randn(4)\n"
        "    assert torch.allclose(relu_wrapper(x), torch.relu(x))\n")
    (tmp_path / "sub" / "relu_wrapper.py").write_text("import triton\n@triton.jit\ndef k(x):\n    pass\ndef relu_wrapper(x):\n"
                                                      "    k[(1,)](x)\n    return x\n")
    control = run_kbt("audit", "sub/test_relu_wrapper.py", cwd=tmp_path)
    with open(tmp_path / "conftest.py", "wb") as handle:
        handle.truncate(1 << 30)
    run = run_kbt("audit", "sub/test_relu_wrapper.py", cwd=tmp_path)
    assert run.code == control.code and "TS105" in run.out
    assert run.peak_mb < control.peak_mb + 100, (run.peak_mb, control.peak_mb)  # ~2 GB before the fix
    (tmp_path / "conftest.py").write_text("import torch\ntorch.manual_seed(0)\n")  # a seeding conftest still counts
    assert "TS105" not in run_kbt("audit", "sub/test_relu_wrapper.py", cwd=tmp_path).out


def _chain(n: int) -> str:
    return ("import triton\n@triton.jit\ndef k(x):\n    pass\n"
            + "".join(f"def h{i}(x):\n    return h{i + 1}(x.float())\n" for i in range(n))
            + f"def h{n}(x):\n    k[(1,)](x)\ndef softmax_wrapper(x):\n    h0(x)\n")


def test_a_helper_chain_costs_time_in_proportion_to_its_length(tmp_path):
    from kb_tools.audit.engine import audit_path

    def took(n):
        path = tmp_path / f"h{n}.py"
        path.write_text(_chain(n))
        start = time.perf_counter()
        result = audit_path(path)
        assert "softmax_wrapper" in result.wrappers
        return time.perf_counter() - start

    took(200)  # warm the imports
    short, long = took(1000), took(4000)
    assert long < 8 * short + 0.5, (short, long)  # 4x the chain: ~16x when each round rescanned every function


def test_a_list_literal_stays_under_the_memory_promise_or_is_refused(tmp_path):
    def listing(n):
        path = tmp_path / f"l{n}.py"
        path.write_text("import triton\n@triton.jit\ndef k(x):\n    pass\ndef softmax_wrapper(x):\n    y = ["
                        + "x, " * n + "]\n    k[(1,)](y)\n")
        return path

    under = run_kbt("audit", listing(140_000))
    assert under.code in (0, 1) and under.peak_mb < 300, under.peak_mb
    over = run_kbt("audit", listing(220_000))
    assert over.code == 2 and "AU011" in over.err and len(over.err.strip().splitlines()) == 1
    assert over.peak_mb < 300, over.peak_mb  # 357 MB before the fix


KERNEL = ("import torch\nimport pypto.language as pl\nfrom pypto.language import vf\n\n@pl.jit\ndef k(x, y):\n"
          "    y[0] = vf.cast(x, 'float32')\n\ndef k_wrapper(x):\n    y = torch.empty(3)\n    k(x, y)\n    return y\n")


@pytest.mark.parametrize("how, code", [("missing", "AU031"), ("directory", "AU002"), ("fifo", "AU008"), ("devzero", "AU008")])
def test_an_unusable_api_inventory_is_one_line_never_kn103_switched_off(tmp_path, how, code):
    root = copy_repo(tmp_path)
    (root / "kn_wrapper.py").write_text(KERNEL)
    control = run_kbt("audit", "kn_wrapper.py", cwd=root)
    assert control.code == 1 and "KN103" in control.out
    inventory = root / "kb" / "api_inventory.yaml"
    inventory.unlink()
    {"missing": lambda: None, "directory": inventory.mkdir, "fifo": lambda: os.mkfifo(inventory),
     "devzero": lambda: inventory.symlink_to("/dev/zero")}[how]()
    run = run_kbt("audit", "kn_wrapper.py", cwd=root, timeout=60)
    assert run.code == 2 and "Traceback" not in run.err
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(str(inventory)) and code in lines[0], lines
