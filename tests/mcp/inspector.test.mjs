// `ward mcp` driven by the MCP Inspector's command-line mode
// (@modelcontextprotocol/inspector --cli), a second independent client.
//
// Run: node --test tests/mcp/inspector.test.mjs   (tests/e2e/mcp.bats does)
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { MARKER, WARD, defer, exists, scratch } from "./helpers.mjs";

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
  defer(t, () => s.cleanup());
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
  defer(t, () => s.cleanup());
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
  defer(t, () => s.cleanup());
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
  // What was refused, by which mode, and how it is known.
  const d = out.structuredContent.denials;
  assert.equal(d.length, 1);
  assert.equal(d[0].path, path.join(s.ws, "denied.txt"));
  assert.equal(d[0].cause, "mode");
  assert.equal(d[0].mode, "read-only");
  assert.match(d[0].source, /^session [0-9a-f]{16}$/);
  assert.equal(d[0].how, "derived");
  // The Inspector cannot ask its user: no retry hint, no field it lacks;
  // how a person widens the mode instead.
  const text = out.content[0].text;
  assert.doesNotMatch(text, /sandbox_permissions|retry/);
  assert.match(text, /\na person can allow this by widening the session's mode: ward session mode [0-9a-f]{16} workspace-write$/);
});

test("inspector-fields: a client without elicitation is offered no escalation fields", async (t) => {
  const s = scratch();
  defer(t, () => s.cleanup());
  const out = await inspector(s, "read-only", ["--method", "tools/list"]);
  for (const x of out.tools) {
    assert.equal(x.inputSchema.properties.sandbox_permissions, undefined, x.name);
    assert.doesNotMatch(x.description, /sandbox_permissions/, x.name);
  }
});

test("inspector-read: read_file of a 5 MB file is bounded", async (t) => {
  const s = scratch();
  defer(t, () => s.cleanup());
  writeFileSync(path.join(s.ws, "big.txt"), ("y".repeat(99) + "\n").repeat(50000));
  const out = await inspector(s, "read-only", [
    "--method",
    "tools/call",
    "--tool-name",
    "read_file",
    "--tool-arg",
    "path=big.txt",
  ]);
  const text = out.content[0].text;
  assert.ok(text.length <= 64 * 1024 + 200, `${text.length} characters`);
  assert.match(text.split("\n").at(-1), /^\[truncated: \d+ more lines \(\d+ bytes\) not shown; read on with offset \d+/);
  assert.equal(out.structuredContent.truncated, true);
});

test("inspector-partial: a rule the runner cannot enforce makes enforcement partial, with the reason", { skip: NO_RUNNER }, async (t) => {
  const s = scratch();
  defer(t, () => s.cleanup());
  let usable = false;
  try {
    usable = JSON.parse(execFileSync(WARD, ["probe", "--json", "-r", "landlock"], { encoding: "utf8" })).chain[0].usable;
  } catch {
    usable = false;
  }
  if (!usable) return t.skip("the landlock runner is not usable here (ward probe)");
  // The user file (the Inspector takes the flags after the command as
  // its own): the Landlock runner, and a rule it cannot enforce: one that
  // hides a directory holding the workspace (a writable root inside a
  // hidden path stays usable; rules inside the workspace it enforces).
  mkdirSync(path.join(s.env.XDG_CONFIG_HOME, "ward"), { recursive: true });
  writeFileSync(
    path.join(s.env.XDG_CONFIG_HOME, "ward", "config.yml"),
    `runners: [landlock]\naccess: ["-- ${s.base}"]\n`,
  );
  const out = await inspector(s, "workspace-write", [
    "--method",
    "tools/call",
    "--tool-name",
    "bash",
    "--tool-arg",
    "command=echo ok", // not "true": the Inspector makes that a boolean
  ]);
  assert.equal(out.structuredContent.sandbox.runner, "landlock");
  assert.equal(out.structuredContent.sandbox.enforcement, "partial");
  assert.match(out.structuredContent.sandbox.partial[0], /^landlock: rule "-- .*" \(.*config\.yml:2\): hides .*, but the writable root .* inside it stays readable and writable/);
});

test("inspector-write: tools/call write_file in workspace-write", { skip: NO_RUNNER }, async (t) => {
  const s = scratch();
  defer(t, () => s.cleanup());
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
