"""The agent skill and its hooks: the skill's front matter is what the Agent Skills format
asks for, every command it tells an agent to run exists and runs on the shipped catalog, and
the hooks hand a finding back (exit 2) and let clean work through."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys

import yaml

from conftest import REPO
from kb_tools.cli import command_names

SKILL = REPO / "skills" / "opkb" / "SKILL.md"
SETTINGS = REPO / "skills" / "opkb" / "hooks" / "claude-settings.json"


def _front_matter_and_body():
    text = SKILL.read_text(encoding="utf-8")
    _, front, body = text.split("---\n", 2)
    return yaml.safe_load(front), body


def _commands() -> list[list[str]]:
    _, body = _front_matter_and_body()
    blocks = re.findall(r"```bash\n(.*?)```", body, flags=re.S)
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line.startswith("kbt ")]


def test_front_matter_names_the_skill_and_says_when_to_use_it():
    front, body = _front_matter_and_body()
    assert front["name"] == SKILL.parent.name and re.fullmatch(r"[a-z0-9-]{1,64}", front["name"])
    assert 0 < len(front["description"]) <= 1024 and "Use when" in front["description"]
    assert "verified" in body and "kbt verify" in body  # the honesty rule and the done-rule


def test_every_command_the_skill_gives_exists_and_runs_in_its_order(tmp_path):
    """As an agent follows the skill: top to bottom, in one copy of the catalog."""
    names = {n.replace("_", "-") for n in command_names()} | {"mcp", "hook"}
    work = tmp_path / "repo"
    for part in ("ops", "examples", "kb", "ROUTER.md"):
        src = REPO / part
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / part)
    commands = _commands()
    assert len(commands) >= 8
    for argv in commands:
        assert argv[1] in names, argv
        r = subprocess.run([sys.executable, "-m", "kb_tools", *argv[1:]], cwd=work, capture_output=True, text=True, timeout=300)
        assert r.returncode in (0, 1), (argv, r.stderr)  # ran; 1 is a finding (an unfilled skeleton), never a usage error
        assert "Traceback" not in r.stderr, argv


def _hook(args, payload=None, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "kb_tools", "hook", *args], input=json.dumps(payload or {}),
                          cwd=cwd, capture_output=True, text=True, timeout=300)


def test_edit_hook_hands_back_findings_and_passes_clean_files():
    bad = _hook(["edit"], {"tool_name": "Edit", "tool_input": {"file_path": "ops/wrappers/softmax_antipattern.py"}})
    assert bad.returncode == 2 and "WB101" in bad.stderr
    good = _hook(["edit"], {"tool_name": "Edit", "tool_input": {"file_path": "ops/wrappers/softmax_wrapper.py"}})
    assert good.returncode == 0, good.stderr
    for payload in ({"tool_input": {"file_path": "README.md"}}, {"tool_input": "garbage"}, None):
        assert _hook(["edit"], payload).returncode == 0


def test_stop_hook_blocks_while_verify_fails(tmp_path):
    r = _hook(["stop", str(tmp_path)])
    assert r.returncode == 2 and "kbt verify" in r.stderr and "KB_USAGE.json" in r.stderr


def test_hook_settings_call_the_hooks():
    settings = json.loads(SETTINGS.read_text())
    commands = [h["command"] for entries in settings["hooks"].values() for e in entries for h in e["hooks"]]
    assert any(c.startswith("kbt hook edit") for c in commands) and any(c.startswith("kbt hook stop") for c in commands)
