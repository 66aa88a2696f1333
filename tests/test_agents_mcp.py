"""kbt mcp, driven as an agent drives it: the SDK's own client starts the server as a
subprocess and talks to it over stdio. Each answer is held against the CLI's own output."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

mcp = pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'opkb[agents]')")
from mcp import Client, StdioServerParameters  # noqa: E402

from kb_tools.agents.server import DEFAULT_TIME_LIMIT  # noqa: E402

KBT = [sys.executable, "-m", "kb_tools"]


def _session(root: Path, steps):
    """Start ``kbt mcp --root ROOT``, run ``await steps(client)``, return what it returned."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "kb_tools", "--kb-root", str(REPO), "mcp", "--root", str(root)],
                                   cwd=str(root), env={**os.environ})

    async def go():
        # the client waits as long as the server lets one call run (its own time limit), plus a margin:
        # a loaded CI machine must not turn a slow answer into a missing one
        async with Client(params, read_timeout_seconds=DEFAULT_TIME_LIMIT + 10) as client:
            return await steps(client)
    return asyncio.run(go())


def _cli(*argv, cwd=REPO):
    return subprocess.run([*KBT, "--kb-root", str(REPO), *argv], cwd=cwd, capture_output=True, text=True)


def test_tools_resources_and_prompts_are_listed():
    async def steps(c):
        return ((await c.list_tools()).tools, (await c.list_resources()).resources, (await c.list_prompts()).prompts)
    tools, resources, prompts = _session(REPO, steps)
    from kb_tools.commands import command_names

    served = {"route", "page", "select", "usage", "check_usage", "verify", "audit", "compare", "review"}
    assert {t.name for t in tools} == served | ({"spec"} if "spec" in command_names() else set())
    uris = {str(r.uri) for r in resources}
    assert "kb://constraints/wrapper-boundary.md" in uris and "kb://ROUTER.md" in uris
    assert len([u for u in uris if u.endswith(".md") and u != "kb://ROUTER.md"]) == len(list((REPO / "kb").glob("*/*.md")))
    assert {p.name for p in prompts} == {"planner", "architect", "coder", "verifier"}


@pytest.mark.parametrize("query", ["golden casts back to fp16", "精度", "aclnnInplaceCopy failed, error code is 561103"])
def test_route_gives_the_cli_facts(query):
    async def steps(c):
        return await c.call_tool("route", {"query": query})
    r = _session(REPO, steps)
    cli = _cli("route", query, "--format", "json")
    assert not r.is_error and r.structured_content["exit_code"] == cli.returncode == 0
    assert r.structured_content["result"] == json.loads(cli.stdout)


def test_select_check_usage_and_audit_give_the_cli_facts(tmp_path):
    work = tmp_path / "work"
    (work / "ops").mkdir(parents=True)
    (work / "ops" / "softmax.yaml").write_bytes((REPO / "ops" / "softmax.yaml").read_bytes())
    wrapper = REPO / "ops" / "wrappers" / "softmax_antipattern.py"
    (work / "anti.py").write_bytes(wrapper.read_bytes())

    async def steps(c):
        selected = await c.call_tool("select", {"spec": "ops/softmax.yaml", "output": "out", "form": "full"})
        usage = await c.call_tool("usage", {"spec": "ops/softmax.yaml", "output": "out"})
        checked = await c.call_tool("check_usage", {"usage": "out/KB_USAGE.json"})
        audited = await c.call_tool("audit", {"paths": ["anti.py"]})
        return selected, usage, checked, audited
    selected, usage, checked, audited = _session(work, steps)
    assert selected.structured_content["result"] == json.loads((work / "out" / "KB_SELECTION.json").read_text())
    assert usage.structured_content["result"]["op"] == "softmax"
    cli_check = _cli("check-usage", "out/KB_USAGE.json", cwd=work)
    assert checked.structured_content["exit_code"] == cli_check.returncode == 1  # an unfilled skeleton fails
    codes = {d["code"] for d in checked.structured_content["diagnostics"]}
    printed = (cli_check.stderr + cli_check.stdout).splitlines()
    assert codes and codes == {line.split(": ")[1].split()[0] for line in printed if ": US" in line}
    errors = [d for d in checked.structured_content["diagnostics"] if d["severity"] == "error"]
    assert len(errors) == sum(": US" in line for line in cli_check.stderr.splitlines())
    cli_audit = _cli("audit", "anti.py", "--format", "json", cwd=work)
    assert audited.structured_content["result"] == json.loads(cli_audit.stdout)
    assert audited.structured_content["result"]["findings"]  # the anti-pattern is caught


def test_bad_calls_are_error_results_and_the_server_goes_on(tmp_path):
    (tmp_path / "empty").mkdir()
    outside = tmp_path.parent / "outside.txt"
    outside.write_text("x")
    (tmp_path / "link").symlink_to(outside)

    async def steps(c):
        results = [
            await c.call_tool("page", {"path": "constraints/no-such-page.md"}),
            await c.call_tool("verify", {"folder": "empty"}),
            await c.call_tool("check_usage", {"usage": "../outside.txt"}),
            await c.call_tool("check_usage", {"usage": "link"}),
            await c.call_tool("route", {"query": "   "}),
            await c.call_tool("compare", {"dut": "nope.npy", "golden": "nope.npy"}),
        ]
        after = await c.call_tool("page", {"path": "constraints/wrapper-boundary.md"})
        return results, after
    results, after = _session(tmp_path, steps)
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results), texts
    assert "no-such-page" in texts[0]
    assert "empty" in texts[1] and "KB_USAGE.json" in texts[1]
    assert "outside the server's root" in texts[2] and "outside the server's root" in texts[3]
    assert "nope.npy" in texts[5]
    assert not after.is_error and after.structured_content["id"] == "wrapper-boundary"
    assert any(i["id"] for i in after.structured_content["invariants"])


def test_garbage_on_the_wire_does_not_stop_the_server():
    proc = subprocess.Popen([*KBT, "--kb-root", str(REPO), "mcp", "--root", str(REPO)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO)
    try:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}
        proc.stdin.write("this is not json\n" + json.dumps(init) + "\n")
        proc.stdin.flush()
        answers = []
        while len(answers) < 2:
            line = proc.stdout.readline()
            assert line, "the server closed its output"
            message = json.loads(line)
            answers.append(message)
            if message.get("id") == 1:
                break
        assert any(m.get("id") == 1 and "result" in m for m in answers), answers
    finally:
        proc.kill()
        proc.wait()


def test_kbt_mcp_refuses_a_missing_root(tmp_path):
    r = _cli("mcp", "--root", str(tmp_path / "nowhere"))
    assert r.returncode == 2 and "MCP001" in r.stderr and "Traceback" not in r.stderr
