// `ward mcp` driven by the official TypeScript SDK client
// (@modelcontextprotocol/sdk: Client + StdioClientTransport), an
// independent implementation of the protocol. Every scenario checks the
// exact model-facing text and what is on disk afterwards (did anything
// run?).
//
// Run: node --test tests/mcp/sdk.test.mjs   (tests/e2e/mcp.bats does)
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import {
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

import {
  HINT,
  MARKER,
  WARD,
  alive,
  call,
  pidsOf,
  connect,
  exists,
  scratch,
  sessionId,
  sleep,
  waitFor,
  wardCli,
} from "./helpers.mjs";

const TOOLS = [
  "bash",
  "edit_file",
  "list_directory",
  "read_file",
  "task_kill",
  "task_output",
  "write_file",
];

// Commands need a runner that can confine on this machine.
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

const accept = async () => ({ action: "accept", content: { allow: true } });

test("tools-list: every tool, honest annotations, escalation fields", async (t) => {
  const ctx = await connect(t, { mode: "read-only" });
  const { tools } = await ctx.client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), TOOLS);
  const by = Object.fromEntries(tools.map((x) => [x.name, x]));

  for (const name of ["read_file", "list_directory", "task_output"]) {
    assert.equal(by[name].annotations.readOnlyHint, true, name);
    assert.equal(by[name].annotations.destructiveHint, false, name);
  }
  for (const name of ["bash", "write_file", "edit_file", "task_kill"]) {
    assert.equal(by[name].annotations.readOnlyHint, false, name);
    assert.equal(by[name].annotations.destructiveHint, true, name);
  }
  assert.equal(by.bash.annotations.openWorldHint, true);
  assert.equal(by.read_file.annotations.openWorldHint, false);

  // The bash description explains the marker; no tool states the mode.
  assert.match(by.bash.description, /\[sandbox: file access denied under <mode> mode\]/);
  for (const x of tools)
    assert.doesNotMatch(x.description, /under read-only mode/, x.name);

  const bash = by.bash.inputSchema.properties;
  assert.deepEqual(Object.keys(bash).sort(), [
    "command",
    "justification",
    "run_in_background",
    "sandbox_permissions",
    "timeout_ms",
    "workdir",
  ]);
  if (!NO_RUNNER) {
    assert.deepEqual(bash.sandbox_permissions.enum, [
      "workspace-write",
      "danger-full-access",
    ]);
  }
  assert.deepEqual(by.bash.inputSchema.required, ["command"]);
  // Reads are denied only by rules, which no wider mode lifts.
  assert.equal(by.read_file.inputSchema.properties.sandbox_permissions, undefined);
  assert.ok(by.write_file.inputSchema.properties.sandbox_permissions);
  assert.equal(by.bash.outputSchema.type, "object");
});

test("ping: answered", async (t) => {
  const ctx = await connect(t);
  assert.deepEqual(await ctx.client.ping(), {});
});

test("denied-write: a write in read-only shows the marker", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "read-only" });
  const { text, result } = await call(ctx, "bash", {
    command: "echo before; echo data > out.txt",
  });
  assert.equal(exists(path.join(ctx.ws, "out.txt")), false);
  assert.match(text, /^before\n/);
  const lines = text.split("\n");
  // The marker, then the hint (a session with approval `ask`).
  assert.equal(lines.at(-2), MARKER("read-only"));
  assert.equal(lines.at(-1), HINT);
  assert.match(text, /exit code: 1\n/);
  assert.equal(result.isError, false);
  assert.equal(result.structuredContent.exit_code, 1);
  assert.equal(result.structuredContent.timed_out, false);
  assert.equal(result.structuredContent.sandbox.mode, "read-only");
  assert.equal(result.structuredContent.sandbox.denied, true);
  assert.notEqual(result.structuredContent.sandbox.runner, "none");
  assert.notEqual(result.structuredContent.sandbox.enforcement, "none");

  // The file tools: the fence refuses, with the marker.
  const w = await call(ctx, "write_file", { path: "f.txt", content: "x" });
  assert.equal(w.result.isError, true);
  assert.equal(w.text.split("\n")[0], MARKER("read-only"));
  assert.equal(exists(path.join(ctx.ws, "f.txt")), false);

  // A command that writes nothing is not marked.
  const ok = await call(ctx, "bash", { command: "echo fine" });
  assert.equal(ok.text, "fine\nexit code: 0");
  assert.equal(ok.result.structuredContent.sandbox.denied, false);
});

test("escalation-accept: runs wider exactly once, the next call is narrow", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "read-only", elicit: accept });
  const first = await call(ctx, "bash", { command: "touch first.txt" });
  assert.match(first.text, /\[sandbox: file access denied under read-only mode\]/);

  const r = await call(ctx, "bash", {
    command: "touch first.txt && echo made",
    sandbox_permissions: "workspace-write",
    justification: "the task creates first.txt in the workspace",
  });
  assert.equal(ctx.asked.length, 1, "the user was asked once");
  const q = ctx.asked[0];
  assert.match(q.message, /touch first\.txt && echo made/);
  assert.ok(q.message.includes(ctx.ws), "the message shows the directory");
  assert.match(q.message, /requested mode: workspace-write/);
  assert.match(q.message, /current mode: read-only/);
  assert.match(q.message, /the task creates first\.txt in the workspace/);
  assert.equal(q.requestedSchema.type, "object");
  assert.equal(q.requestedSchema.properties.allow.type, "boolean");

  assert.equal(r.result.isError, false);
  assert.equal(r.text, "made\nexit code: 0");
  assert.equal(r.result.structuredContent.sandbox.mode, "workspace-write");
  assert.equal(r.result.structuredContent.escalated, true);
  assert.equal(exists(path.join(ctx.ws, "first.txt")), true);

  // The grant was for that one call.
  const next = await call(ctx, "bash", { command: "touch second.txt" });
  assert.equal(exists(path.join(ctx.ws, "second.txt")), false);
  assert.match(next.text, /\[sandbox: file access denied under read-only mode\]/);
  assert.equal(next.result.structuredContent.sandbox.mode, "read-only");
  assert.equal(ctx.asked.length, 1, "nobody was asked again");

  // The session log tells the story.
  const log = readFileSync(
    path.join(ctx.scratch.env.XDG_STATE_HOME, "ward/sessions", `${sessionId(ctx.scratch)}.jsonl`),
    "utf8",
  );
  const types = log.trim().split("\n").map((l) => JSON.parse(l).type);
  for (const type of [
    "escalation/request",
    "approval/asked",
    "approval/decision",
    "escalation/verdict",
  ])
    assert.ok(types.includes(type), type);
});

test("escalation-accept-file: write_file escalated once", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "read-only", elicit: accept });
  const r = await call(ctx, "write_file", {
    path: "notes.txt",
    content: "hello\n",
    sandbox_permissions: "workspace-write",
    justification: "the user asked for notes.txt",
  });
  assert.equal(r.result.isError, false);
  assert.equal(r.text, "wrote 6 bytes to notes.txt");
  assert.equal(readFileSync(path.join(ctx.ws, "notes.txt"), "utf8"), "hello\n");
  assert.match(ctx.asked[0].message, /write notes\.txt/);
  const again = await call(ctx, "write_file", { path: "notes.txt", content: "x" });
  assert.equal(again.result.isError, true);
  assert.equal(readFileSync(path.join(ctx.ws, "notes.txt"), "utf8"), "hello\n");
});

test("escalation-accept-unchecked: accepting without allow rejects", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, {
    mode: "read-only",
    elicit: async () => ({ action: "accept", content: { allow: false } }),
  });
  const r = await call(ctx, "bash", {
    command: "touch x.txt",
    sandbox_permissions: "workspace-write",
    justification: "needs x.txt",
  });
  assert.equal(r.text, 'the user rejected escalating this command to "workspace-write"');
  assert.equal(exists(path.join(ctx.ws, "x.txt")), false);
});

test("escalation-decline: nothing runs", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, {
    mode: "read-only",
    elicit: async () => ({ action: "decline" }),
  });
  const r = await call(ctx, "bash", {
    command: "touch declined.txt; echo ran > ran.txt",
    sandbox_permissions: "danger-full-access",
    justification: "needs to write",
  });
  assert.equal(ctx.asked.length, 1);
  assert.equal(r.result.isError, true);
  assert.equal(r.text, 'the user rejected escalating this command to "danger-full-access"');
  assert.equal(exists(path.join(ctx.ws, "declined.txt")), false);
  assert.equal(exists(path.join(ctx.ws, "ran.txt")), false);
});

test("escalation-cancel: nothing runs", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, {
    mode: "read-only",
    elicit: async () => ({ action: "cancel" }),
  });
  const r = await call(ctx, "bash", {
    command: "touch cancelled.txt",
    sandbox_permissions: "workspace-write",
    justification: "needs to write",
  });
  assert.equal(r.result.isError, true);
  assert.equal(
    r.text,
    'the approval request for escalating this command to "workspace-write" ' +
      "was cancelled before the user decided; nothing was run",
  );
  assert.equal(exists(path.join(ctx.ws, "cancelled.txt")), false);
});

test("escalation-unavailable: a client without elicitation is told", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "read-only" });
  const id = sessionId(ctx.scratch);
  const r = await call(ctx, "bash", {
    command: "touch unavailable.txt",
    sandbox_permissions: "workspace-write",
    justification: "needs to write",
  });
  assert.equal(r.result.isError, true);
  const lines = r.text.split("\n");
  assert.equal(
    lines[0],
    'approval for escalating this command to "workspace-write" is ' +
      "unavailable: nobody could be asked; nothing was run",
  );
  assert.match(r.text, /do not retry this command with sandbox_permissions/);
  assert.ok(
    r.text.includes(`ward session mode ${id} workspace-write`),
    "tells the person how to widen the mode",
  );
  assert.equal(exists(path.join(ctx.ws, "unavailable.txt")), false);
});

test("escalation-not-wider: refused without asking", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "workspace-write", elicit: accept });
  const r = await call(ctx, "bash", {
    command: "touch nw.txt",
    sandbox_permissions: "workspace-write",
    justification: "why not",
  });
  assert.equal(ctx.asked.length, 0);
  assert.equal(r.result.isError, true);
  assert.match(r.text, /is not wider than the mode this command already runs under/);
  assert.equal(exists(path.join(ctx.ws, "nw.txt")), false);
});

test("escalation-progress: progress while the user decides", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, {
    mode: "read-only",
    elicit: async () => {
      await sleep(300);
      return { action: "accept", content: { allow: true } };
    },
  });
  const progress = [];
  const r = await call(
    ctx,
    "bash",
    {
      command: "touch p.txt",
      sandbox_permissions: "workspace-write",
      justification: "needs p.txt",
      timeout_ms: 5000,
    },
    { onprogress: (p) => progress.push(p) },
  );
  assert.equal(r.text, "exit code: 0");
  assert.ok(progress.length >= 1, "a progress notification came");
  assert.match(progress[0].message, /approve/);
  assert.equal(exists(path.join(ctx.ws, "p.txt")), true);
});

test("concurrency: a slow command blocks neither ping nor another call", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t);
  const t0 = Date.now();
  let slowDone = 0;
  const slow = call(ctx, "bash", { command: "sleep 2; echo slow" }).then((r) => {
    slowDone = Date.now();
    return r;
  });
  await sleep(100);
  await ctx.client.ping();
  const pingAt = Date.now() - t0;
  const fast = await call(ctx, "bash", { command: "echo fast" });
  const fastAt = Date.now() - t0;
  assert.equal(fast.text, "fast\nexit code: 0");
  assert.equal(slowDone, 0, "the slow call is still running");
  assert.ok(pingAt < 1500, `ping answered after ${pingAt} ms`);
  assert.ok(fastAt < 1900, `the fast call answered after ${fastAt} ms`);
  assert.equal((await slow).text, "slow\nexit code: 0");
});

test("cancel: notifications/cancelled kills the call's process group", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "workspace-write" });
  const ac = new AbortController();
  // Two processes in the call's group, found by their unique arguments.
  const a = ["sleep", "61.2345"];
  const b = ["sleep", "62.2345"];
  const pending = call(
    ctx,
    "bash",
    { command: `${a.join(" ")} & ${b.join(" ")} & wait` },
    { signal: ac.signal },
  ).catch((e) => e);
  assert.ok(await waitFor(() => pidsOf(a).length === 1 && pidsOf(b).length === 1));
  const pids = [...pidsOf(a), ...pidsOf(b)];
  ac.abort("test cancels");
  const err = await pending;
  assert.ok(err instanceof Error, "the client gave up on the call");
  assert.ok(await waitFor(() => pids.every((p) => !alive(p))), "both died");
  // The server is still fine.
  assert.equal((await call(ctx, "bash", { command: "echo after" })).text, "after\nexit code: 0");
});

test("timeout: the process group is killed", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t);
  const t0 = Date.now();
  const r = await call(ctx, "bash", { command: "echo start; sleep 30", timeout_ms: 300 });
  assert.ok(Date.now() - t0 < 10000);
  assert.equal(r.text, "start\ntimed out after 300 ms; its process group was killed");
  assert.equal(r.result.structuredContent.timed_out, true);
});

test("session-mode: a mode switched from another terminal applies to the next call", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "read-only" });
  let listChanged = 0;
  ctx.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged++;
  });
  await ctx.client.listTools();
  const id = sessionId(ctx.scratch);
  const before = await call(ctx, "bash", { command: "touch m.txt" });
  assert.match(before.text, /under read-only mode/);

  wardCli(ctx.scratch, ["session", "mode", id, "workspace-write"]);
  const after = await call(ctx, "bash", { command: "touch m.txt && echo ok" });
  assert.equal(after.text, "ok\nexit code: 0");
  assert.equal(after.result.structuredContent.sandbox.mode, "workspace-write");
  assert.equal(exists(path.join(ctx.ws, "m.txt")), true);

  // Nothing is wider than danger-full-access: the escalation fields go,
  // and the client is told to list the tools again.
  wardCli(ctx.scratch, ["session", "mode", id, "danger-full-access"]);
  await call(ctx, "bash", { command: "true" });
  assert.ok(await waitFor(() => listChanged > 0), "tools/list_changed");
  const { tools } = await ctx.client.listTools();
  const bash = tools.find((x) => x.name === "bash");
  assert.equal(bash.inputSchema.properties.sandbox_permissions, undefined);
});

test("background: output, the denial shown when read, kill", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "read-only" });
  const started = await call(ctx, "bash", {
    command: "echo start; touch bg.txt; s=$?; echo end; exit $s",
    run_in_background: true,
  });
  const id = started.result.structuredContent.task_id;
  assert.match(started.text, new RegExp(`^started background task ${id} \\(pid \\d+\\)`));
  assert.equal(started.result.structuredContent.running, true);

  const out = await call(ctx, "task_output", { task_id: id, wait_ms: 10000 });
  const lines = out.text.split("\n");
  assert.equal(lines[0], "start");
  assert.ok(lines.includes("end"));
  assert.ok(lines.includes("exit code: 1"));
  assert.equal(lines.at(-2), MARKER("read-only"));
  assert.equal(lines.at(-1), HINT);
  assert.equal(out.result.structuredContent.running, false);
  assert.equal(out.result.structuredContent.sandbox.denied, true);
  assert.equal(exists(path.join(ctx.ws, "bg.txt")), false);

  // Each read returns only what is new.
  const again = await call(ctx, "task_output", { task_id: id });
  assert.doesNotMatch(again.text, /start/);

  const sleeper = await call(ctx, "bash", {
    command: "echo sleeping; sleep 60",
    run_in_background: true,
  });
  const sid = sleeper.result.structuredContent.task_id;
  const pid = sleeper.result.structuredContent.pid;
  const running = await call(ctx, "task_output", { task_id: sid, wait_ms: 200 });
  assert.match(running.text, new RegExp(`task ${sid} is still running$`));
  const killed = await call(ctx, "task_kill", { task_id: sid });
  assert.match(killed.text, /killed by signal (15|9)$/);
  assert.ok(await waitFor(() => !alive(pid)));
  const gone = await call(ctx, "task_output", { task_id: sid });
  assert.equal(gone.result.isError, true);
});

test("files: write, read, edit, list through the fence", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "workspace-write" });
  let r = await call(ctx, "write_file", { path: "dir/a.txt", content: "one\ntwo\nthree\n" });
  assert.equal(r.text, "wrote 14 bytes to dir/a.txt");
  r = await call(ctx, "read_file", { path: "dir/a.txt" });
  assert.equal(r.text, "one\ntwo\nthree\n");
  r = await call(ctx, "read_file", { path: "dir/a.txt", offset: 1, limit: 1 });
  assert.equal(r.text, "two\n[… the file continues: read on with offset 2]");
  r = await call(ctx, "edit_file", { path: "dir/a.txt", old_text: "two", new_text: "2" });
  assert.equal(r.text, "replaced 1 occurrence in dir/a.txt");
  assert.equal(readFileSync(path.join(ctx.ws, "dir/a.txt"), "utf8"), "one\n2\nthree\n");
  r = await call(ctx, "list_directory", { path: "dir" });
  assert.equal(r.text, "a.txt (12 bytes)");
  r = await call(ctx, "list_directory", {});
  assert.equal(r.text, "dir/");
  // Outside every writable root: refused by the fence.
  r = await call(ctx, "write_file", { path: "/etc/ward-mcp-test", content: "x" });
  assert.equal(r.result.isError, true);
  assert.equal(r.text.split("\n")[0], MARKER("workspace-write"));
  r = await call(ctx, "read_file", { path: "missing.txt" });
  assert.equal(r.result.isError, true);
});

test("bad-input: isError results, not protocol errors", async (t) => {
  const ctx = await connect(t);
  for (const [name, args, re] of [
    ["bash", {}, /"command" is required/],
    ["bash", { command: 5 }, /"command" must be a string/],
    ["bash", { command: "true", timeout_ms: -1 }, /"timeout_ms" must be between/],
    ["bash", { command: "true", bogus: 1 }, /unknown argument "bogus"/],
    ["bash", { command: "true", workdir: "/" }, /outside the workspace/],
    ["bash", { command: "true", sandbox_permissions: "everything", justification: "x" }, /must be workspace-write or danger-full-access/],
    ["bash", { command: "true", sandbox_permissions: "workspace-write" }, /"justification" is required/],
    ["task_output", { task_id: "t99" }, /no background task "t99"/],
    ["read_file", { path: 7 }, /"path" must be a string/],
  ]) {
    const r = await call(ctx, name, args);
    assert.equal(r.result.isError, true, JSON.stringify(args));
    assert.match(r.text, re);
  }
  await assert.rejects(
    ctx.client.callTool({ name: "no_such_tool", arguments: {} }),
    /Unknown tool/,
  );
});

test("logging: logging/setLevel is honoured", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { elicit: async () => ({ action: "decline" }) });
  const logs = [];
  ctx.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params);
  });
  await ctx.client.setLoggingLevel("notice");
  await call(ctx, "bash", {
    command: "true",
    sandbox_permissions: "workspace-write",
    justification: "log test",
  });
  assert.ok(await waitFor(() => logs.some((l) => /answer: rejected/.test(l.data))));
  assert.ok(logs.every((l) => l.logger === "ward"));
});

test("eof: end of input stops running commands and exits 0", { skip: NO_RUNNER }, async () => {
  const s = scratch();
  try {
    const child = spawn(WARD, ["mcp", "--workspace", s.ws, "--mode", "workspace-write"], {
      env: s.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const send = (m) => child.stdin.write(JSON.stringify(m) + "\n");
    send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const fg = ["sleep", "63.2345"];
    const bg = ["sleep", "64.2345"];
    send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bash", arguments: { command: fg.join(" ") } } });
    send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "bash", arguments: { command: bg.join(" "), run_in_background: true } } });
    assert.ok(await waitFor(() => pidsOf(fg).length === 1 && pidsOf(bg).length === 1));
    const pids = [...pidsOf(fg), ...pidsOf(bg)];
    const t0 = Date.now();
    const exited = new Promise((r) => child.on("exit", (code, sig) => r({ code, sig })));
    child.stdin.end();
    const { code, sig } = await exited;
    assert.equal(code, 0, `exit ${code} ${sig}`);
    assert.ok(Date.now() - t0 < 5000, "exited promptly");
    for (const pid of pids) assert.equal(alive(pid), false);
    // Only JSON-RPC on stdout.
    for (const line of out.trim().split("\n")) assert.equal(JSON.parse(line).jsonrpc, "2.0");
    const id = sessionId(s);
    const log = readFileSync(path.join(s.env.XDG_STATE_HOME, "ward/sessions", `${id}.jsonl`), "utf8");
    const events = log.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(events.at(-1).type, "mcp/end");
    // Both calls' ends are recorded.
    assert.equal(events.filter((e) => e.type === "call/result").length, 2);
  } finally {
    s.cleanup();
  }
});

test("resume: --session serves an existing session", { skip: NO_RUNNER }, async (t) => {
  const s = scratch();
  t.after(() => s.cleanup());
  const id = wardCli(s, ["session", "new", "--cwd", s.ws, "--mode", "workspace-write"]).trim();
  writeFileSync(path.join(s.ws, "seed.txt"), "seed\n");
  const client = new Client({ name: "resume", version: "1" });
  await client.connect(
    new StdioClientTransport({ command: WARD, args: ["mcp", "--session", id], env: s.env, stderr: "pipe" }),
  );
  t.after(() => client.close());
  const r = await client.callTool({
    name: "bash",
    arguments: { command: "cat seed.txt && touch resumed.txt" },
  });
  assert.equal(r.content[0].text, "seed\nexit code: 0");
  assert.equal(exists(path.join(s.ws, "resumed.txt")), true);
  assert.equal(sessionId(s), id, "no new session was made");
  const log = readFileSync(path.join(s.env.XDG_STATE_HOME, "ward/sessions", `${id}.jsonl`), "utf8");
  assert.match(log, /"type":"call\/start"/);
});
