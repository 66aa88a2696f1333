"""``kbt mcp``: the KB's commands as MCP tools, its pages as resources, its roles as prompts.

Built on the official MCP Python SDK's ``MCPServer`` over stdio. Each tool checks its path
arguments against the server's root, runs the matching ``kbt`` command in this process
(agents.invoke) and returns that command's facts as structured data. The KB and the search
index are loaded once and kept while their files are unchanged (files.warm), so a warm call
costs a small part of a ``kbt`` start-up. A refused argument or unusable input comes back as a
tool error; the server goes on serving.
"""

from __future__ import annotations

import functools
from typing import Any
import json
from pathlib import Path

from kb_tools.agents.confine import OutsideRoot, inside
from kb_tools.agents.invoke import run_command
from kb_tools.agents.roles import ROLES, prompt_text
from kb_tools.limits import limit

EXIT_USAGE = 2
MAX_PATHS = limit("OPKB_MAX_AUDIT_PATHS")  # 256 unless set: a call of 20,000 gave no answer in 12 s
DEFAULT_TIME_LIMIT = 120.0  # seconds a tool call may run; kbt mcp --time-limit
WRITTEN = ("KB_SELECTION.json", "KB_USAGE.json")


def _refuse(message: str):
    from mcp.server.mcpserver.exceptions import ToolError

    raise ToolError(message)


class Tools:
    """The tool bodies, apart from the MCP wiring, so the tests can also call them directly."""

    def __init__(self, root: Path, kb_root: Path):
        self.root, self.kb_root = Path(root), Path(kb_root)

    def _path(self, raw, what):
        try:
            return inside(self.root, raw, what)
        except OutsideRoot as exc:
            _refuse(str(exc))

    def _run(self, argv: list[str], *, json_output: bool = False, read_back: str | None = None) -> dict[str, Any]:
        result = run_command(["--kb-root", str(self.kb_root), *argv], json_output=json_output)
        if result.exit_code == EXIT_USAGE:  # input the command cannot use: one line, as the CLI says it
            said = [d["path"] + (f":{d['line']}" if d["line"] else "") + f": {d['code']} {d['message']}"
                    for d in result.diagnostics] or result.stderr.strip().splitlines()[-1:] or ["unusable input"]
            _refuse(f"kbt {argv[0]}: " + "; ".join(said))
        out = result.as_dict()
        out["command"] = "kbt " + " ".join(argv)
        if read_back and result.exit_code == 0:
            with open(Path(self.root) / read_back, encoding="utf-8") as handle:
                out["result"] = json.load(handle)
        return out

    def route(self, query: str, limit: int = 5, skill: str | None = None) -> dict[str, Any]:
        if not isinstance(query, str) or not query.strip():
            _refuse("route: the question is empty; ask in English or Chinese, or paste an error line")
        argv = ["route", "--format", "json", f"--limit={limit}"] + ([f"--skill={skill}"] if skill else [])
        return self._run(argv + ["--", query], json_output=True)  # after --, a question starting with - is data

    def page(self, path: str) -> dict[str, Any]:
        from kb_tools.kb.pages import load_kb

        kb = load_kb(self.kb_root)
        wanted = path.removeprefix("kb://").removeprefix("kb/")
        found = next((p for p in kb.pages.values() if wanted in (p.rel_path, p.id, p.rel_path.removesuffix(".md"))), None)
        if found is None:
            _refuse(f"page: no page {path!r} in {self.kb_root / 'kb'}; `route` finds pages by question, "
                    "and kb:// resources list them all")
        r = found.routing
        return {
            "id": found.id, "path": found.rel_path, "title": found.title, "kind": found.kind, "area": found.area,
            "routing": {"topologies": r.topologies if r.topologies == "all" else list(r.topologies),
                        "properties": list(r.properties), "mandatory_for": list(r.mandatory_for),
                        "target_gate": r.target_gate},
            "trigger": found.trigger,
            "invariants": [{"id": i.id, "text": i.text, "check": i.check} for i in found.invariants],
            "sources": [dict(s) for s in found.sources], "related": list(found.related),
            "demonstrated_by": list(found.demonstrated_by), "body": found.body,
        }

    def select(self, spec: str, output: str | None = None, form: str = "compact") -> dict[str, Any]:
        spec = self._path(spec, "spec")
        argv = ["select", spec] + (["-o", self._path(output, "output")] if output else [])
        return self._shaped(argv, self._written(spec, output, "KB_SELECTION.json"), form)

    def _shaped(self, argv: list[str], written: str | None, form: str) -> dict[str, Any]:
        """The command's answer with the file it wrote: whole (``full``) or as the compact
        rows an agent reads on one screen (``compact``, agents.compact)."""
        from kb_tools.agents import compact

        if form not in ("compact", "full"):
            _refuse(f"{argv[0]}: form must be compact or full, not {str(form)[:40]!r}")
        out = self._run(argv, read_back=written if form == "full" else None)
        if form == "compact" and written and out.get("exit_code") == 0:
            from kb_tools.kb.pages import load_kb

            path = Path(self.root) / written
            out["result"] = (compact.usage_compact(path, load_kb(self.kb_root)) if argv[0] == "usage"
                             else compact.selection_compact(path))
        return out

    def _confined_outputs(self, read_back: str | None) -> None:
        """The files select and usage write, refused when one resolves outside the root (a
        KB_SELECTION.json that is a link to a file elsewhere)."""
        if read_back:
            for name in WRITTEN:
                self._path(str(Path(read_back).parent / name), "output")

    def usage(self, spec: str, output: str | None = None, form: str = "compact") -> dict[str, Any]:
        spec = self._path(spec, "spec")
        argv = ["usage", spec] + (["-o", self._path(output, "output")] if output else [])
        return self._shaped(argv, self._written(spec, output, "KB_USAGE.json"), form)

    def _written(self, spec: str, output: str | None, name: str) -> str | None:
        if output:
            written = str(Path(self._path(output, "output")) / name)
            self._confined_outputs(written)
            return written
        from kb_tools.contract.specs import load_spec
        from kb_tools.diagnostics import KbError, KbErrors

        try:
            loaded = load_spec(Path(self.root) / spec)
        except (KbError, KbErrors):
            return None  # the command itself reports it
        base = Path("build") / loaded.op
        written = str((base if loaded.class_id == "." else base / loaded.class_id) / name)
        self._confined_outputs(written)
        return written

    def check_usage(self, usage: str, root: str = ".") -> dict[str, Any]:
        return self._run(["check-usage", self._path(usage, "usage"), "--root", self._path(root, "root")])

    def verify(self, folder: str, root: str = ".") -> dict[str, Any]:
        return self._run(["verify", self._path(folder, "folder"), "--root", self._path(root, "root")])

    def audit(self, paths: list[str], select: str | None = None, spec: str | None = None) -> dict[str, Any]:
        if not paths:
            _refuse("audit: name at least one Python file or folder")
        if len(paths) > MAX_PATHS:
            _refuse(f"audit: {len(paths)} paths, over the limit of {MAX_PATHS} per call; name their folder, or split the call")
        argv = ["audit", *(self._path(p, "paths") for p in paths), "--format", "json"]
        argv += ([f"--select={select}"] if select else []) + ([f"--spec={self._path(spec, 'spec')}"] if spec else [])
        return self._run(argv, json_output=True)

    def compare(self, dut: str, golden: str, third_party: str | None = None, dtype: str | None = None,
                criterion: str = "mix_tolerance", level: str = "L1") -> dict[str, Any]:
        argv = ["compare", "--dut", self._path(dut, "dut"), "--golden", self._path(golden, "golden"),
                f"--criterion={criterion}", f"--level={level}", "--format", "json"]
        argv += (["--third-party", self._path(third_party, "third_party")] if third_party else [])
        argv += ([f"--dtype={dtype}"] if dtype else [])
        return self._run(argv, json_output=True)

    def review(self, spec: str, root: str | None = None, usage: str | None = None) -> dict[str, Any]:
        argv = ["review", self._path(spec, "spec")]
        argv += (["--root", self._path(root, "root")] if root else []) + (["--usage", self._path(usage, "usage")] if usage else [])
        out = self._run(argv)
        out["markdown"] = "\n".join(out.pop("output", []))
        return out

    def spec(self, path: str) -> dict[str, Any]:
        """``kbt spec PATH --format json``: a CANN operator folder, category or repository read as
        specs, so an agent can start from a CANN folder. One process (--jobs=1): the server's
        process is not forked into a pool."""
        return self._run(["spec", self._path(path, "path"), "--format", "json", "--jobs=1"], json_output=True)


def tool_names() -> tuple[str, ...]:
    """The tools served: one per command below, ``spec`` once its command is installed."""
    from kb_tools.commands import command_names

    served = ("route", "page", "select", "usage", "check_usage", "verify", "audit", "compare", "review")
    return served + (("spec",) if "spec" in command_names() else ())


def build_server(root: Path, kb_root: Path, *, time_limit: float = DEFAULT_TIME_LIMIT, max_request_bytes: int | None = None):
    """The MCPServer: one tool per command, one resource per page, one prompt per role. Each
    tool's description states the bounds a call meets (``_limits``)."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.resources import FunctionResource

    from kb_tools.files import warm
    from kb_tools.kb.pages import load_kb

    warm.enable()
    tools = Tools(root, kb_root)
    server = MCPServer("opkb", instructions="opkb: route operator rules, fill and check KB_USAGE.json, audit "
                       "wrappers, compare tensors. Paths are relative to the server's root.")
    for name in tool_names():
        server.add_tool(_on_the_loop(getattr(tools, name), time_limit), name=name, annotations=_annotations(name),
                        description=_DESCRIPTIONS[name] + _limits(name, time_limit, max_request_bytes), structured_output=True)
    kb = load_kb(kb_root)
    for page in kb.pages.values():
        server.add_resource(FunctionResource(uri=f"kb://{page.rel_path}", name=page.id, title=page.title,
                                             mime_type="text/markdown", fn=_reader(page.path)))
    server.add_resource(FunctionResource(uri="kb://ROUTER.md", name="router", title="ROUTER.md: task -> skill -> pages",
                                         mime_type="text/markdown", fn=_reader(Path(kb_root) / "ROUTER.md")))
    for role in ROLES:
        server.add_prompt(_prompt(role))
    return server


_DESCRIPTIONS = {
    "route": "The pages for a task id or any question (English, 中文, a symptom, a pasted error), ranked.",
    "page": "One page: its front matter (routing, trigger, invariants, sources) and its body.",
    "select": "Write KB_SELECTION.json for an operator spec (kbt select); returns the selected pages "
              "(form=full: the whole file).",
    "usage": "Write or merge the KB_USAGE.json skeleton for a spec (kbt usage); returns each open obligation as "
             "[id, rule, fields to fill, line in the file] (form=full: the whole file).",
    "check_usage": "Check a filled KB_USAGE.json against its selection and the contract (kbt check-usage).",
    "verify": "check-usage, the wrapper audit, and the claims against the audit (kbt verify) for a folder.",
    "audit": "Audit Python files or folders: wrappers, goldens, tests, kernels (kbt audit --format json).",
    "compare": "Judge saved DUT/golden/third-party tensors by a TTK criterion (kbt compare --format json).",
    "review": "The design-review walkthrough of one operator as Markdown (kbt review).",
    "spec": "Read a CANN operator folder, category or repository as specs: dtypes, criteria, uncovered and stale "
            "dtypes, three-party or not, golden framework, each with its source line (kbt spec --format json).",
}


WRITES = ("select", "usage")  # the tools that write files (KB_SELECTION.json, KB_USAGE.json)


def _annotations(name: str):
    """The MCP tool hints: every tool but select and usage only reads; those two write their
    files again the same for the same spec (idempotent) and never drop what a person wrote in
    KB_USAGE.json (the merge keeps it, so not destructive). None reaches outside the root."""
    from mcp.types import ToolAnnotations

    return ToolAnnotations(read_only_hint=name not in WRITES, destructive_hint=False, idempotent_hint=True,
                           open_world_hint=False)


def _limits(name: str, seconds: float, max_request_bytes: int | None) -> str:
    """The bounds of one tool, as its description states them to the agent."""
    from kb_tools.agents.wire import DEFAULT_MAX_REQUEST_BYTES

    paths = f" at most {MAX_PATHS} paths per call;" if name == "audit" else ""
    return (f" Limits:{paths} at most {seconds:g} s per call; a request of at most "
            f"{max_request_bytes or DEFAULT_MAX_REQUEST_BYTES} bytes. Paths resolve inside the root, "
            "links followed; every value is data, never an option.")


def _on_the_loop(method, seconds: float = DEFAULT_TIME_LIMIT):
    """The tool as a coroutine, so that it runs on the server's one thread (the captured output
    of a command and the kept search index, an SQLite connection, are never shared between
    threads), within ``seconds``: a call over its time is refused in one line."""
    from kb_tools.agents.deadline import TimeUp, time_limit

    @functools.wraps(method)
    async def call(*args, **kwargs):
        try:
            with time_limit(seconds):
                return method(*args, **kwargs)
        except TimeUp:
            _refuse(f"{method.__name__}: over the {seconds:g} s limit per call (kbt mcp --time-limit); the call was stopped")
    return call


def _reader(path: Path):
    def read() -> str:
        return Path(path).read_text(encoding="utf-8")
    return read


def _prompt(role: str):
    from mcp.server.mcpserver.prompts.base import Prompt

    def text() -> str:
        return prompt_text(role)
    return Prompt.from_function(text, name=role, description=ROLES[role][0])
