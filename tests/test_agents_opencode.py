"""kbt opencode installs opkb's hooks as an OpenCode plugin; the plugin, loaded by node as
OpenCode loads it and driven with OpenCode's hook arguments, runs the same checks as the
Claude Code hooks and never traps the agent (issue 38 item 8)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import REPO

NODE = shutil.which("node")
DRIVER = """
const mod = await import(process.argv[2]);
const prompts = [];
const client = { session: { prompt: async (request) => { prompts.push(request); } } };
const hooks = await mod.OpkbChecks({ client, directory: process.argv[3] });
const edited = { title: "edit", output: "edited", metadata: {} };
await hooks["tool.execute.after"]({ tool: "edit", sessionID: "s1", callID: "c1", args: { filePath: "anti.py" } }, edited);
const read = { title: "read", output: "read", metadata: {} };
await hooks["tool.execute.after"]({ tool: "read", sessionID: "s1", callID: "c2", args: { filePath: "anti.py" } }, read);
const idle = { type: "session.idle", properties: { sessionID: "s1" } };
await hooks.event({ event: idle });
await hooks.event({ event: idle });
console.log(JSON.stringify({ edited: edited.output, read: read.output, prompts }));
"""


@pytest.fixture
def project(tmp_path, kbt):
    """A project with an anti-pattern wrapper and an operator whose golden casts back, the plugin installed."""
    root = tmp_path / "project"
    shutil.copytree(REPO / "examples" / "softmax", root / "op", ignore=shutil.ignore_patterns("__pycache__", "tensors"))
    (root / "op" / "ops" / "softmax.yaml").write_bytes((REPO / "ops" / "softmax.yaml").read_bytes())
    golden = root / "op" / "legs" / "golden.py"
    golden.write_text(golden.read_text().replace("return torch.softmax(x, dim=dim)", "return torch.softmax(x, dim=dim).half()"))
    (root / "anti.py").write_bytes((REPO / "ops" / "wrappers" / "softmax_antipattern.py").read_bytes())
    result = kbt("opencode", "op", "--root", "op", "--project", root, root=REPO)
    assert result.code == 0, result.err
    return root


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_plugin_runs_the_same_checks_and_prompts_once(project, tmp_path):
    plugin = tmp_path / "opkb.mjs"  # node reads ES modules by suffix; OpenCode (Bun) loads the .js as it is
    shutil.copy(project / ".opencode" / "plugins" / "opkb.js", plugin)
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    run = subprocess.run([NODE, driver, plugin.as_uri(), str(project)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    said = json.loads(run.stdout)
    assert "WB101" in said["edited"] and said["edited"].startswith("edited\n")  # the audit's findings, appended
    assert said["read"] == "read"  # a read is no edit
    assert len(said["prompts"]) == 1  # the second idle is let through (stop_hook_active)
    prompt = said["prompts"][0]
    assert prompt["path"] == {"id": "s1"} and "GD102" in prompt["body"]["parts"][0]["text"]


def test_install_leaves_a_foreign_plugin_alone(kbt, tmp_path):
    plugins = tmp_path / ".opencode" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "opkb.js").write_text("// mine\n")
    result = kbt("opencode", "op", "--project", tmp_path, root=REPO)
    assert result.code == 2 and " OC002 " in result.err and len(result.err.strip().splitlines()) == 1
    assert (plugins / "opkb.js").read_text() == "// mine\n"


def test_install_is_idempotent_and_names_this_kbt(kbt, tmp_path):
    first = kbt("opencode", "op", "--project", tmp_path, root=REPO)
    text = (tmp_path / ".opencode" / "plugins" / "opkb.js").read_text()
    second = kbt("opencode", "op", "--project", tmp_path, root=REPO)
    assert first.code == second.code == 0 and "kept" in second.out
    assert '"kb_tools"' in text and 'const OPERATOR = "op"' in text and "__KBT__" not in text
