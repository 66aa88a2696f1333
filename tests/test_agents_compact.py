"""The usage and selection answers over MCP are compact by default (under 8 KB for softmax,
a catalog operator), the whole file on request, and every tool carries the MCP hints
(issue 38 item 7). Driven over stdio as an agent drives the server."""

from __future__ import annotations

import json

import pytest

from conftest import REPO

pytest.importorskip("mcp", reason="the MCP SDK is not installed (pip install 'opkb[agents]')")
from test_agents_mcp import _session  # noqa: E402

from kb_tools.agents.compact import COMPACT_LIMIT  # noqa: E402


def _work(tmp_path):
    work = tmp_path / "work"
    (work / "ops").mkdir(parents=True)
    (work / "ops" / "softmax.yaml").write_bytes((REPO / "ops" / "softmax.yaml").read_bytes())
    return work


def test_usage_and_select_answers_are_compact_by_default_and_full_on_request(tmp_path):
    work = _work(tmp_path)

    async def steps(c):
        return [await c.call_tool(tool, {"spec": "ops/softmax.yaml", "output": "out", **form})
                for tool in ("select", "usage") for form in ({}, {"form": "full"})]
    sel, sel_full, usage, usage_full = _session(work, steps)
    for answer in (sel, usage):
        assert not answer.is_error and len(json.dumps(answer.structured_content).encode()) < COMPACT_LIMIT
    written = json.loads((work / "out" / "KB_USAGE.json").read_text())
    assert usage_full.structured_content["result"] == written
    assert sel_full.structured_content["result"] == json.loads((work / "out" / "KB_SELECTION.json").read_text())
    assert len(json.dumps(usage_full.structured_content)) > 4 * len(json.dumps(usage.structured_content))
    rows = usage.structured_content["result"]["obligations"]
    assert len(rows) == len(written["invariants"])  # a fresh skeleton: every obligation is open
    lines = (work / "out" / "KB_USAGE.json").read_text().splitlines()
    for (ident, rule, fill, line), record in zip(rows, written["invariants"]):
        assert ident.endswith("/" + record["invariant_id"]) and fill == "status+file+symbol"
        assert lines[line - 1].strip() == "{" and f'"{record["invariant_id"]}"' in lines[line + 1]
    assert ["wrapper-boundary/no-host-cast", "WB101"] in [row[:2] for row in rows]
    assert sel.structured_content["result"]["required_constraints"] == [
        ref["path"] for ref in json.loads((work / "out" / "KB_SELECTION.json").read_text())["required_constraints"]]


def test_a_filled_record_leaves_the_compact_list(tmp_path):
    work = _work(tmp_path)

    async def first(c):
        return await c.call_tool("usage", {"spec": "ops/softmax.yaml", "output": "out"})
    before = _session(work, first).structured_content["result"]
    path = work / "out" / "KB_USAGE.json"
    doc = json.loads(path.read_text())
    doc["invariants"][0]["implementation"] = {"file": "w.py", "symbol": "w", "status": "implemented"}
    doc["invariants"][1]["implementation"]["status"] = "not_applicable"
    path.write_text(json.dumps(doc, indent=2))
    after = _session(work, first).structured_content["result"]
    assert after["open"] == before["open"] - 1 and after["filled"] == 1
    assert after["obligations"][0][2] == "justification"  # not_applicable without a reason


def test_an_unknown_form_is_one_error(tmp_path):
    work = _work(tmp_path)

    async def steps(c):
        return await c.call_tool("usage", {"spec": "ops/softmax.yaml", "form": "everything"})
    answer = _session(work, steps)
    assert answer.is_error and "compact or full" in answer.content[0].text


def test_every_tool_says_whether_it_reads_or_writes():
    async def steps(c):
        return (await c.list_tools()).tools
    hints = {t.name: t.annotations.model_dump(by_alias=True) for t in _session(REPO, steps)}  # as on the wire
    for name, a in hints.items():
        assert a["idempotentHint"] is True and a["openWorldHint"] is False and a["destructiveHint"] is False, name
        assert a["readOnlyHint"] is (name not in ("select", "usage")), name
