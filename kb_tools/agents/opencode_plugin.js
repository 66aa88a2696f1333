// opkb's checks as an OpenCode plugin, written by `kbt opencode` (do not edit: re-run it).
// The same two hooks as the Claude Code settings, run by the same `kbt hook` command:
//  - after an edit or write of a Python file, `kbt hook edit` audits it and its findings
//    are appended to the tool's output, so the agent reads them at once;
//  - when the session goes idle, `kbt hook stop OPERATOR` runs kbt verify and, while the
//    claims fail, sends the failures back as a prompt. Like Claude Code's stop_hook_active,
//    it sends them once per idle streak: an agent that cannot fix them is never trapped.
import { spawnSync } from "node:child_process";

const KBT = __KBT__; // argv of the kbt that installed this plugin
const OPERATOR = __OPERATOR__; // the operator folder kbt verify checks
const ROOT = __ROOT__; // its source root
const EDIT_TOOLS = new Set(["edit", "write", "multiedit", "patch"]);
const TIMEOUT_MS = 60000;

function hook(args, payload, cwd) {
  const run = spawnSync(KBT[0], [...KBT.slice(1), "hook", ...args], {
    cwd, input: JSON.stringify(payload), encoding: "utf8", timeout: TIMEOUT_MS,
  });
  return { blocked: run.status === 2, said: ((run.stderr || "") + (run.stdout || "")).trim() };
}

export const OpkbChecks = async ({ client, directory }) => {
  const cwd = directory || process.cwd();
  const blockedOnce = new Set(); // sessions sent the verify failures since they last worked
  return {
    "tool.execute.after": async (input, output) => {
      blockedOnce.delete(input.sessionID);
      const path = input.args && (input.args.filePath || input.args.file_path || input.args.path);
      if (!EDIT_TOOLS.has(String(input.tool).toLowerCase()) || typeof path !== "string" || !path.endsWith(".py")) return;
      const result = hook(["edit"], { tool_input: { file_path: path } }, cwd);
      if (result.blocked) output.output = `${output.output || ""}\n\n${result.said}`;
    },
    event: async ({ event }) => {
      if (!event || event.type !== "session.idle") return;
      const session = event.properties && event.properties.sessionID;
      const active = blockedOnce.has(session);
      const result = hook(["stop", OPERATOR, "--root", ROOT], { stop_hook_active: active }, cwd);
      if (!result.blocked) return;
      blockedOnce.add(session);
      await client.session.prompt({ path: { id: session }, body: { parts: [{ type: "text", text: result.said }] } });
    },
  };
};
