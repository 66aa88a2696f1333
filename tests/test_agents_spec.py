"""kbt spec as an MCP tool (issue 38 item 9): an agent starts from a CANN operator folder and
gets what the CLI prints, driven over stdio; a path out of the root is refused."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import REPO
from kb_tools.commands import command_names

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'opkb[agents]')")
if "spec" not in command_names():
    pytest.skip("kbt spec is not installed in this tree (kb_tools/commands/spec.py)", allow_module_level=True)
from test_agents_mcp import _cli, _session  # noqa: E402

FOLDER = REPO / "tests" / "fixtures" / "cann_golden" / "math" / "mean_two_good"


def test_spec_over_mcp_gives_the_cli_facts(tmp_path):
    work = tmp_path / "work"
    shutil.copytree(FOLDER, work / "mean_two_good")

    async def steps(c):
        return (await c.call_tool("spec", {"path": "mean_two_good"}),
                await c.call_tool("spec", {"path": "../"}),
                (await c.list_tools()).tools)
    answer, outside, tools = _session(work, steps)
    cli = _cli("spec", "mean_two_good", "--format", "json", cwd=work)
    assert not answer.is_error and answer.structured_content["exit_code"] == cli.returncode == 0
    assert answer.structured_content["result"] == json.loads(cli.stdout)
    (op,) = answer.structured_content["result"]["operators"]
    assert op["op"] == "mean_two_good" and op["dtypes"]
    assert outside.is_error and "outside" in outside.content[0].text
    hints = {t.name: t.annotations.model_dump(by_alias=True) for t in tools}["spec"]
    assert hints["readOnlyHint"] is True
