// `ward mcp` driven by the MCP Inspector's command-line mode
// (@modelcontextprotocol/inspector --cli), a second independent client.
//
// Run: node --test tests/mcp/inspector.test.mjs   (tests/e2e/mcp.bats does)
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { MARKER, WARD, exists, scratch } from "./helpers.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);

function runnerUsable() {
  try {
    const probe = JSON.parse(
      execFileSync(WARD, ["probe", "--json"], { encoding: "utf8" }),
    );
    return probe.chain.some((c) => c.usable);
  } catch {
    return false;
  }
}
const NO_RUNNER = runnerUsable()
  ? false
  : "no runner can confine on this machine (ward probe)";

// `npx @modelcontextprotocol/inspector --cli -e … -- ward mcp … ARGS`,
// from tests/mcp (so npx uses the pinned, installed copy); its stdout as
// JSON.
async function inspector(s, mode, args) {
  const { stdout } = await run(
    "npx",
    [
      "--no-install",
      "@modelcontextprotocol/inspector",
      "--cli",
      "-e",
      `XDG_STATE_HOME=${s.env.XDG_STATE_HOME}`,
      "-e",
      `XDG_CONFIG_HOME=${s.env.XDG_CONFIG_HOME}`,
      "--",
      WARD,
      "mcp",
      "--workspace",
      s.ws,
      "--mode",
      mode,
      ...args,
    ],
    { cwd: here, timeout: 60000, env: process.env },
  );
  return JSON.parse(stdout);
}

test("inspector-list: tools/list", async (t) => {
  const s = scratch();
  t.after(() => s.cleanup());
  const out = await inspector(s, "read-only", ["--method", "tools/list"]);
  const names = out.tools.map((x) => x.name).sort();
  assert.deepEqual(names, [
    "bash",
    "edit_file",
    "list_directory",
    "read_file",
    "task_kill",
    "task_output",
    "write_file",
  ]);
  const bash = out.tools.find((x) => x.name === "bash");
  assert.equal(bash.annotations.readOnlyHint, false);
  assert.ok(bash.inputSchema.properties.command);
});

test("inspector-call: tools/call bash", { skip: NO_RUNNER }, async (t) => {
  const s = scratch();
  t.after(() => s.cleanup());
  const out = await inspector(s, "read-only", [
    "--method",
    "tools/call",
    "--tool-name",
    "bash",
    "--tool-arg",
    "command=echo hello from ward",
  ]);
  assert.equal(out.isError, false);
  assert.equal(out.content[0].text, "hello from ward\nexit code: 0");
  assert.equal(out.structuredContent.exit_code, 0);
  assert.equal(out.structuredContent.sandbox.mode, "read-only");
});

test("inspector-denied: tools/call bash, a write denied in read-only", { skip: NO_RUNNER }, async (t) => {
  const s = scratch();
  t.after(() => s.cleanup());
  const out = await inspector(s, "read-only", [
    "--method",
    "tools/call",
    "--tool-name",
    "bash",
    "--tool-arg",
    "command=touch denied.txt",
    "timeout_ms=10000",
  ]);
  assert.match(out.content[0].text, /exit code: 1\n/);
  assert.ok(out.content[0].text.includes(MARKER("read-only")));
  assert.equal(out.structuredContent.sandbox.denied, true);
  assert.equal(exists(path.join(s.ws, "denied.txt")), false);
});

test("inspector-write: tools/call write_file in workspace-write", { skip: NO_RUNNER }, async (t) => {
  const s = scratch();
  t.after(() => s.cleanup());
  const out = await inspector(s, "workspace-write", [
    "--method",
    "tools/call",
    "--tool-name",
    "write_file",
    "--tool-arg",
    "path=hello.txt",
    "content=hi there",
  ]);
  assert.equal(out.content[0].text, "wrote 8 bytes to hello.txt");
  assert.equal(exists(path.join(s.ws, "hello.txt")), true);
});
