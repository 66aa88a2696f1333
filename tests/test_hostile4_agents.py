"""Round-4 hostile inputs to the agent front doors (repros 18-23, issue 38 items 2-4), driven
over real stdio: nothing outside the root is read or written, values are data, every call is
bounded and says which bound it hit in one line, no traceback reaches standard error, and the
hooks never trap an agent. Each refusal has a benign control beside it."""

from __future__ import annotations

import json
import shutil
import time

import pytest

from conftest import REPO
from hostile4_support import Mcp, digest, run_kbt
from hostile_support import SOFTMAX_ROOT

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'opkb[agents]')")


@pytest.fixture
def layout(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "out").mkdir(parents=True)
    outside.mkdir()
    shutil.copy(REPO / "ops" / "softmax.yaml", root)
    shutil.copytree(SOFTMAX_ROOT, root / "softmax")
    (outside / "notes.txt").write_text("precious text outside the server's root\n")
    (outside / "creds.yaml").write_text("op: 123-not-an-identifier\npassword: hunter2\n")
    (outside / "secrets.py").write_text("API_TOKEN_abc123 = 1\n")
    (outside / "wrap_out.py").write_text("import triton\n@triton.jit\ndef k(x):\n    pass\ndef secret_wrapper(x):\n    k[(1,)](x.float())\n")
    (root / "w_wrapper.py").write_text("import triton\n@triton.jit\ndef k(x):\n    pass\ndef w_wrapper(x):\n    k[(1,)](x)\n")
    return root, outside


def test_select_never_writes_through_an_output_link_leading_out(layout):
    root, outside = layout
    (root / "out" / "KB_SELECTION.json").symlink_to(outside / "notes.txt")
    before = digest(outside / "notes.txt")
    server = Mcp(root)
    try:
        for tool in ("select", "usage"):
            error, said = server.tool(tool, {"spec": "softmax.yaml", "output": "out"})
            assert error and "outside the server's root" in said and "through a symbolic link" in said, said
        (root / "ok").mkdir()
        error, said = server.tool("select", {"spec": "softmax.yaml", "output": "ok"})  # control
        assert not error and said["exit_code"] == 0 and (root / "ok" / "KB_SELECTION.json").is_file()
    finally:
        err = server.close()
    assert digest(outside / "notes.txt") == before
    assert "Traceback" not in err


def test_nothing_outside_the_root_is_read_through_files_links_or_option_shaped_values(layout):
    root, outside = layout
    (root / "ops").mkdir()
    spec = (REPO / "ops" / "softmax.yaml").read_text().replace("wrapper: ops/wrappers/softmax_wrapper.py", f"wrapper: {outside}/wrap_out.py")
    (root / "ops" / "escape.yaml").write_text(spec.replace("op: softmax", "op: escape"))
    (root / "sel").mkdir()
    shutil.copy(root / "softmax" / "KB_USAGE.json", root / "sel")
    selection = json.loads((root / "softmax" / "KB_SELECTION.json").read_text())
    (root / "sel" / "KB_SELECTION.json").write_text(json.dumps(selection | {"wrapper": str(outside / "wrap_out.py")}))
    (root / "softmax" / "link_out").symlink_to(outside)
    server = Mcp(root)
    try:
        error, said = server.tool("review", {"spec": "ops/escape.yaml", "root": "softmax"})
        assert error and "RV003" in said and "secret_wrapper" not in said
        error, said = server.tool("verify", {"folder": "sel", "root": "softmax"})
        assert error and "VF004" in said
        assert not server.tool("verify", {"folder": "softmax", "root": "softmax"})[0]  # control
        usage = root / "softmax" / "KB_USAGE.json"
        data = json.loads(usage.read_text())
        data["invariants"][0]["implementation"].update(file="link_out/secrets.py", symbol="API_TOKEN_abc123")
        usage.write_text(json.dumps(data, indent=2))
        error, said = server.tool("check_usage", {"usage": "softmax/KB_USAGE.json", "root": "softmax"})
        assert any("outside the source root" in d["message"] for d in said["diagnostics"]), said
        for value in ("--spec=" + str(outside / "creds.yaml"), "--help", "-h"):
            error, said = server.tool("audit", {"paths": ["w_wrapper.py", value]})
            text = json.dumps(said)
            assert "hunter2" not in text and "usage: kbt" not in text and "123-not-an-identifier" not in text, text[:500]
        error, said = server.tool("route", {"query": "--help"})  # a question that looks like an option is a question
        assert not error and "usage: kbt" not in json.dumps(said)
        error, said = server.tool("audit", {"paths": ["w_wrapper.py"]})  # control
        assert not error and said["exit_code"] == 0, said
    finally:
        err = server.close()
    assert "Traceback" not in err


def test_a_request_over_the_size_limit_is_refused_by_its_size_without_its_text(tmp_path):
    server = Mcp(tmp_path, "--max-request-bytes", str(1 << 20))
    try:
        marker = "PAYLOAD" * 10
        server.send({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                     "params": {"name": "route", "arguments": {"query": marker + "x" * (8 << 20)}}})
        reply = server.reply(99, timeout=60)
        assert reply is not None and "error" in reply, reply
        message = reply["error"]["message"]
        assert "over the server's 1048576-byte limit" in message and marker not in json.dumps(reply) and len(json.dumps(reply)) < 500
        assert server.call("tools/list", {}) is not None  # the server goes on
        error, said = server.tool("route", {"query": "fp16 softmax overflow"})  # control
        assert not error
    finally:
        err = server.close()
    assert "Traceback" not in err and marker not in err


def test_every_tool_states_its_limits_and_audit_caps_its_paths(tmp_path):
    server = Mcp(tmp_path, "--time-limit", "30")
    try:
        tools = {t["name"]: t for t in server.call("tools/list", {})["result"]["tools"]}
        for tool in tools.values():
            assert "Limits:" in tool["description"] and "at most 30 s per call" in tool["description"], tool["name"]
        assert "at most 256 paths per call" in tools["audit"]["description"]
        start = time.monotonic()
        error, said = server.tool("audit", {"paths": [f"f{i}.py" for i in range(20_000)]})
        assert error and "20000 paths, over the limit of 256" in said and len(said) < 300
        assert time.monotonic() - start < 30
    finally:
        err = server.close()
    assert "Traceback" not in err


def test_a_tool_call_over_its_time_limit_is_stopped_in_one_line(tmp_path, monkeypatch):
    from kb_tools.agents import server as served

    def slow(*args, **kwargs):
        time.sleep(5)

    call = served._on_the_loop(slow, 0.2)
    call.__name__ = "slow"
    import asyncio

    from mcp.server.mcpserver.exceptions import ToolError

    with pytest.raises(ToolError, match=r"over the 0.2 s limit per call"):
        asyncio.run(call())
    assert asyncio.run(served._on_the_loop(lambda: 7, 5)()) == 7  # control


def test_prompt_arguments_and_a_client_that_hangs_up_leave_no_traceback(tmp_path):
    shutil.copytree(SOFTMAX_ROOT, tmp_path / "softmax")
    server = Mcp(tmp_path)
    reply = server.call("prompts/get", {"name": "coder", "arguments": {"x": "y"}})
    assert reply is not None and "error" in reply
    assert server.call("prompts/get", {"name": "coder"})["result"]["messages"]  # control
    err = server.close()
    assert "Traceback" not in err and all(line.startswith("kbt mcp: ") for line in err.splitlines() if line.strip()), err
    server = Mcp(tmp_path)
    server.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "compare", "arguments": {
        "dut": "softmax/tensors/float16/dut.npy", "golden": "softmax/tensors/float16/golden.npy"}}})
    time.sleep(0.3)
    server.proc.stdout.close()
    server.proc.stdin.close()
    assert server.proc.wait(60) == 0
    err = server.proc.stderr.read().decode()
    server.proc.stderr.close()
    assert "Traceback" not in err and "BrokenPipe" not in err, err


WRAPPER = "import triton\n@triton.jit\ndef k(x):\n    pass\ndef softmax_wrapper(x):\n    k[(1,)](x.float())\n"


@pytest.mark.parametrize("payload, says", [
    (b"", "empty"), (b"{not json", "invalid JSON"), (b"\xff\xfe", "not UTF-8"), (b"[" * 100_000 + b"]" * 100_000, "nested"),
    (b'{"tool_input": ' + b"[" * 50_000 + b"]" * 50_000 + b"}", "nested"), (b"[1, 2]", "not a JSON object"),
    (json.dumps({"pad": "x" * (2 << 20), "tool_input": {"file_path": "w.py"}}).encode(), "over 1048576 bytes"),
])
def test_the_edit_hook_says_in_one_line_what_it_could_not_read(tmp_path, payload, says):
    (tmp_path / "w.py").write_text(WRAPPER)
    run = run_kbt("hook", "edit", cwd=tmp_path, stdin=payload, timeout=60)
    assert run.code == 0 and "Traceback" not in run.err
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kbt hook: edit: nothing checked") and says in lines[0], lines
    control = run_kbt("hook", "edit", cwd=tmp_path, stdin=b'{"tool_input": {"file_path": "w.py"}}')
    assert control.code == 2 and "WB101" in control.err


def test_the_stop_hook_never_traps_the_agent(tmp_path):
    blocked = run_kbt("hook", "stop", tmp_path, cwd=tmp_path, stdin=b"{}")  # control: an empty operator folder blocks
    assert blocked.code == 2 and "kbt verify" in blocked.err
    again = run_kbt("hook", "stop", tmp_path, cwd=tmp_path, stdin=json.dumps({"stop_hook_active": True}).encode())
    assert again.code == 0 and "stop_hook_active" in again.err and len(again.err.strip().splitlines()) == 1
    none = run_kbt("hook", "stop", "examples/softmax", cwd=tmp_path, stdin=b"{}")
    assert none.code == 0 and "no operator folder" in none.err and len(none.err.strip().splitlines()) == 1


def test_a_hook_over_its_time_limit_lets_the_agent_go_on(tmp_path):
    (tmp_path / "test_relu.py").write_text("import torch\nfrom golden import golden_relu\n\ndef test_relu():\n"
                                           "    x = torch.randn(4)\n    assert torch.equal(golden_relu(x), golden_relu(x))\n")
    run = run_kbt("hook", "--timeout", "0.001", "edit", cwd=tmp_path, stdin=b'{"tool_input": {"file_path": "test_relu.py"}}')
    assert run.code == 0 and "took over 0.001 s" in run.err and len(run.err.strip().splitlines()) == 1
    bad = run_kbt("hook", "--timeout", "-1", "edit", cwd=tmp_path, stdin=b"{}")
    assert bad.code == 2 and "HK001" in bad.err
