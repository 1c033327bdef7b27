// `ward mcp` driven by the official TypeScript SDK client
// (@modelcontextprotocol/sdk: Client + StdioClientTransport), an
// independent implementation of the protocol. Every scenario checks the
// exact model-facing text and what is on disk afterwards (did anything
// run?).
//
// Run: node --test tests/mcp/sdk.test.mjs   (tests/e2e/mcp.bats does)
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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
  defer,
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
  const ctx = await connect(t, { mode: "read-only", elicit: accept });
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
    "network_permissions",
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
  const ctx = await connect(t, { mode: "read-only", elicit: accept });
  const { text, result } = await call(ctx, "bash", {
    command: "echo before; echo data > out.txt",
  });
  assert.equal(exists(path.join(ctx.ws, "out.txt")), false);
  assert.match(text, /^before\n/);
  const lines = text.split("\n");
  // The marker, what was refused, then the hint (a session with approval
  // `ask`, a client that can ask its user).
  assert.equal(lines.at(-3), MARKER("read-only"));
  assert.match(lines.at(-2), /^\[sandbox: (write|create) of \/.*\/out\.txt refused: not writable under read-only mode \(session [0-9a-f]{16}\); inferred from the error output\]$/);
  assert.equal(lines.at(-1), HINT);
  assert.equal(result.structuredContent.denials.length, 1);
  assert.equal(result.structuredContent.denials[0].path, path.join(ctx.ws, "out.txt"));
  assert.equal(result.structuredContent.denials[0].how, "derived");
  assert.equal(result.structuredContent.denials[0].cause, "mode");
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

test("escalation-unavailable: a client without elicitation is offered no escalation, and told how a person widens the mode", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "read-only" });
  const id = sessionId(ctx.scratch);
  // No sandbox_permissions/justification fields, no mention of them.
  const { tools } = await ctx.client.listTools();
  for (const x of tools) {
    assert.equal(x.inputSchema.properties.sandbox_permissions, undefined, x.name);
    assert.equal(x.inputSchema.properties.justification, undefined, x.name);
    assert.doesNotMatch(x.description, /sandbox_permissions/, x.name);
  }
  // The denial carries no retry hint, but the advice for a person.
  const r = await call(ctx, "bash", { command: "touch unavailable.txt" });
  assert.equal(r.result.isError, false);
  assert.doesNotMatch(r.text, /sandbox_permissions/);
  assert.doesNotMatch(r.text, /retry/);
  const lines = r.text.split("\n");
  assert.ok(lines.includes(MARKER("read-only")));
  assert.equal(
    lines.at(-1),
    `a person can allow this by widening the session's mode: ward session mode ${id} workspace-write`,
  );
  // The advice works: the person runs it, the same command succeeds.
  wardCli(ctx.scratch, ["session", "mode", id, "workspace-write"]);
  const again = await call(ctx, "bash", { command: "touch unavailable.txt && echo ok" });
  assert.equal(again.text, "ok\nexit code: 0");
  // The fields are unknown arguments here.
  const bad = await call(ctx, "bash", {
    command: "true",
    sandbox_permissions: "danger-full-access",
    justification: "x",
  });
  assert.equal(bad.result.isError, true);
  assert.match(bad.text, /unknown argument "sandbox_permissions" \(bash takes: command, workdir, timeout_ms, run_in_background\)/);
  // A file tool's denial: likewise.
  wardCli(ctx.scratch, ["session", "mode", id, "read-only"]);
  const w = await call(ctx, "write_file", { path: "w.txt", content: "x" });
  assert.equal(w.result.isError, true);
  assert.doesNotMatch(w.text, /sandbox_permissions|retry/);
  assert.match(w.text, new RegExp(`ward session mode ${id} workspace-write$`));
  assert.equal(w.result.structuredContent.denials[0].how, "exact");
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
  const ctx = await connect(t, { mode: "read-only", elicit: accept });
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
  const ctx = await connect(t, { mode: "read-only", elicit: accept });
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
  assert.equal(lines.at(-3), MARKER("read-only"));
  assert.match(lines.at(-2), /bg\.txt refused: not writable under read-only mode/);
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
  // Line numbers by default, as cat -n writes them; the bare text on
  // request.
  r = await call(ctx, "read_file", { path: "dir/a.txt" });
  assert.equal(r.text, "     1\tone\n     2\ttwo\n     3\tthree\n");
  r = await call(ctx, "read_file", { path: "dir/a.txt", line_numbers: false });
  assert.equal(r.text, "one\ntwo\nthree\n");
  r = await call(ctx, "read_file", { path: "dir/a.txt", offset: 1, limit: 1 });
  assert.equal(
    r.text,
    "     2\ttwo\n[truncated: the file continues after line 2; read on with offset 2, or pick a part with offset/limit]",
  );
  assert.equal(r.result.structuredContent.next_offset, 2);
  r = await call(ctx, "edit_file", { path: "dir/a.txt", old_text: "two", new_text: "2" });
  assert.equal(r.text, "replaced 1 occurrence in dir/a.txt");
  assert.equal(readFileSync(path.join(ctx.ws, "dir/a.txt"), "utf8"), "one\n2\nthree\n");
  // The names models know from other agents' edit tools.
  r = await call(ctx, "edit_file", { path: "dir/a.txt", old_string: "2", new_string: "two" });
  assert.equal(r.text, "replaced 1 occurrence in dir/a.txt");
  writeFileSync(path.join(ctx.ws, "dir/b.txt"), "x y x\n");
  r = await call(ctx, "edit_file", { path: "dir/b.txt", old_string: "x", new_string: "z", replace_all: true });
  assert.equal(r.text, "replaced 2 occurrences in dir/b.txt");
  assert.equal(readFileSync(path.join(ctx.ws, "dir/b.txt"), "utf8"), "z y z\n");
  r = await call(ctx, "edit_file", { path: "dir/b.txt", old_text: "z", old_string: "z", new_text: "q" });
  assert.equal(r.result.isError, true);
  assert.match(r.text, /"old_text" and "old_string" are the same argument: give one/);
  r = await call(ctx, "edit_file", { path: "dir/b.txt", new_text: "q" });
  assert.equal(r.result.isError, true);
  assert.match(r.text, /missing "old_text" \(or "old_string"\)/);
  assert.equal(readFileSync(path.join(ctx.ws, "dir/b.txt"), "utf8"), "z y z\n");
  rmSync(path.join(ctx.ws, "dir/b.txt"));
  assert.equal(readFileSync(path.join(ctx.ws, "dir/a.txt"), "utf8"), "one\ntwo\nthree\n");
  r = await call(ctx, "edit_file", { path: "dir/a.txt", old_text: "two", new_text: "2" });
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
  const ctx = await connect(t, { elicit: accept });
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
  assert.ok(logs.some((l) => /asking the user to allow workspace-write once/.test(l.data)));
  // A network escalation is logged as what it asks for, not as a mode.
  await call(ctx, "bash", {
    command: "true",
    network_permissions: "registry.example",
    justification: "log test",
  });
  assert.ok(
    await waitFor(() =>
      logs.some((l) =>
        /asking the user to allow network access to registry\.example once/.test(l.data),
      ),
    ),
    JSON.stringify(logs),
  );
  assert.ok(!logs.some((l) => /allow read-only once/.test(l.data)), JSON.stringify(logs));
  assert.ok(logs.every((l) => l.logger === "ward"));
});

// A raw client (the SDK's transport cannot close stdin and keep reading).
function rawServer(s, extra = []) {
  const child = spawn(WARD, ["mcp", "--workspace", s.ws, "--mode", "workspace-write", ...extra], {
    env: s.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const st = { out: "", err: "" };
  child.stdout.on("data", (d) => (st.out += d));
  child.stderr.on("data", (d) => (st.err += d));
  const send = (m) => child.stdin.write(JSON.stringify(m) + "\n");
  send({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } } });
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const exited = new Promise((r) => child.on("exit", (code, sig) => r({ code, sig })));
  const answers = () =>
    Object.fromEntries(
      st.out.trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)).filter((m) => m.id !== undefined).map((m) => [m.id, m]),
    );
  return { child, st, send, exited, answers };
}

function sessionEvents(s) {
  const id = sessionId(s);
  return readFileSync(path.join(s.env.XDG_STATE_HOME, "ward/sessions", `${id}.jsonl`), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

test("eof: end of input lets the calls in progress finish and answers them", { skip: NO_RUNNER }, async () => {
  const s = scratch();
  try {
    const srv = rawServer(s);
    srv.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bash", arguments: { command: "sleep 1; echo done > done.txt; echo done" } } });
    srv.child.stdin.end();
    const { code } = await srv.exited;
    assert.equal(code, 0);
    const a = srv.answers();
    assert.equal(a[2].result.content[0].text, "done\nexit code: 0");
    assert.equal(exists(path.join(s.ws, "done.txt")), true);
    for (const line of srv.st.out.trim().split("\n")) assert.equal(JSON.parse(line).jsonrpc, "2.0");
    const events = sessionEvents(s);
    assert.equal(events.at(-1).type, "mcp/end");
    const result = events.find((e) => e.type === "call/result");
    assert.equal(result.exit_code, 0);
    assert.equal(result.error, undefined);
  } finally {
    s.cleanup();
  }
});

test("eof-bound: calls still running at --drain-timeout are stopped, answered as stopped by the shutdown", { skip: NO_RUNNER }, async () => {
  const s = scratch();
  try {
    const srv = rawServer(s, ["--drain-timeout", "1"]);
    const fg = ["sleep", "63.2345"];
    const bg = ["sleep", "64.2345"];
    srv.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bash", arguments: { command: `echo begun; ${fg.join(" ")}` } } });
    srv.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "bash", arguments: { command: bg.join(" "), run_in_background: true } } });
    assert.ok(await waitFor(() => pidsOf(fg).length === 1 && pidsOf(bg).length === 1));
    const pids = [...pidsOf(fg), ...pidsOf(bg)];
    const t0 = Date.now();
    srv.child.stdin.end();
    const { code, sig } = await srv.exited;
    assert.equal(code, 0, `exit ${code} ${sig}`);
    assert.ok(Date.now() - t0 < 10000, "exited within the bound");
    for (const pid of pids) assert.equal(alive(pid), false);
    // The answer says the server shut down, never that the sandbox is
    // unavailable.
    const text = srv.answers()[2].result.content[0].text;
    assert.match(text, /^begun\n/);
    assert.match(text, /\[stopped: the server shut down before this command finished/);
    assert.doesNotMatch(text, /unavailable/);
    assert.match(srv.st.err, /1 call still running after end of input; stopping it/);
    const events = sessionEvents(s);
    assert.equal(events.at(-1).type, "mcp/end");
    const results = events.filter((e) => e.type === "call/result");
    assert.equal(results.length, 2);
    for (const r of results) assert.equal(r.error, "stopped-shutdown");
  } finally {
    s.cleanup();
  }
});

test("eof-stopped-early: a call stopped before its command started says so", { skip: NO_RUNNER }, async () => {
  const s = scratch();
  try {
    // --drain-timeout 0: stopped at once, possibly before bwrap started
    // the command; either way the answer names the shutdown.
    const srv = rawServer(s, ["--drain-timeout", "0"]);
    srv.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bash", arguments: { command: "sleep 65.2345" } } });
    srv.child.stdin.end();
    const { code } = await srv.exited;
    assert.equal(code, 0);
    const a = srv.answers()[2];
    const text = a ? a.result.content[0].text : "";
    assert.match(text, /stopped: the server shut down before this command (finished|started)/);
    assert.doesNotMatch(text, /unavailable/);
    const r = sessionEvents(s).find((e) => e.type === "call/result");
    assert.equal(r.error, "stopped-shutdown");
  } finally {
    s.cleanup();
  }
});

// --- progress: long commands and waits outlive the client's timeout ----------

const SLOW = process.env.WARD_SLOW === "1"
  ? false
  : "a 70 s test: run it with make check-slow (WARD_SLOW=1)";

/*
 * bash running @seconds with the client's request timeout @timeoutMs:
 * with an onprogress handler the SDK sends a progressToken, and with
 * resetTimeoutOnProgress each notifications/progress restarts the timeout.
 */
async function longBash(ctx, seconds, timeoutMs, withProgress) {
  const progress = [];
  const options = { timeout: timeoutMs };
  if (withProgress) {
    options.onprogress = (p) => progress.push(p);
    options.resetTimeoutOnProgress = true;
  }
  const r = await call(
    ctx,
    "bash",
    { command: `for i in $(seq ${seconds}); do echo tick $i; sleep 1; done; echo done`, timeout_ms: (seconds + 60) * 1000 },
    options,
  );
  return { r, progress };
}

function checkProgress(progress, minCount) {
  assert.ok(progress.length >= minCount, `${progress.length} progress notifications`);
  for (let i = 1; i < progress.length; i++)
    assert.ok(progress[i].progress > progress[i - 1].progress, "progress increases");
  for (const p of progress)
    assert.match(p.message, /^running for \d+ s; \d+ bytes of output so far$/);
  const bytes = progress.map((p) => Number(/; (\d+) bytes/.exec(p.message)[1]));
  assert.ok(bytes.at(-1) > bytes[0], "the output count grows");
}

test("progress: a command longer than the client's timeout succeeds with resetTimeoutOnProgress", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t);
  // Without progress the client gives up after its timeout (the test can
  // fail: this is what happened to every long command).
  await assert.rejects(longBash(ctx, 7, 3000, false), /timed out|Request timed out/i);
  // With it, a 7 s command outlives a 3 s timeout.
  const { r, progress } = await longBash(ctx, 7, 3000, true);
  assert.match(r.text, /tick 7\ndone\nexit code: 0$/);
  checkProgress(progress, 2);
});

test("progress-task: a task_output wait longer than the client's timeout succeeds", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t);
  const started = await call(ctx, "bash", {
    command: "for i in $(seq 7); do echo tick $i; sleep 1; done; echo done",
    run_in_background: true,
  });
  const id = started.result.structuredContent.task_id;
  const progress = [];
  const out = await call(ctx, "task_output", { task_id: id, wait_ms: 60000 }, {
    timeout: 3000,
    onprogress: (p) => progress.push(p),
    resetTimeoutOnProgress: true,
  });
  assert.match(out.text, /done\nexit code: 0$/);
  assert.equal(out.result.structuredContent.running, false);
  checkProgress(progress, 2);
});

test("progress-slow: a 70 s command and a 70 s task_output wait pass the SDK's 60 s default", { skip: NO_RUNNER || SLOW }, async (t) => {
  const ctx = await connect(t);
  // The SDK's default request timeout (60 s), reset by progress.
  const { r, progress } = await longBash(ctx, 70, undefined, true);
  assert.match(r.text, /tick 70\ndone\nexit code: 0$/);
  checkProgress(progress, 30);
  const started = await call(ctx, "bash", {
    command: "for i in $(seq 70); do echo tick $i; sleep 1; done; echo done",
    run_in_background: true,
  });
  const id = started.result.structuredContent.task_id;
  const wp = [];
  const out = await call(ctx, "task_output", { task_id: id, wait_ms: 80000 }, {
    onprogress: (p) => wp.push(p),
    resetTimeoutOnProgress: true,
  });
  assert.match(out.text, /done\nexit code: 0$/);
  checkProgress(wp, 30);
});

test("progress-clamp: a foreground call without progress ends before the client's 60 s and says to go to the background", { skip: NO_RUNNER || SLOW }, async (t) => {
  const ctx = await connect(t);
  // No onprogress: no progress token; the SDK's own 60 s default applies.
  const t0 = Date.now();
  const { text, result } = await call(ctx, "bash", { command: "echo started; sleep 90; echo done" });
  assert.ok(Date.now() - t0 < 60000, "the result came after the client's timeout");
  assert.equal(result.structuredContent.timed_out, true);
  assert.match(text, /^started\n/);
  assert.match(
    text,
    /\n\[stopped at ward's 55 s default for a client without progress reports \(clients commonly stop waiting after 60 s\): run a command that takes longer with run_in_background, then read it with task_output\]$/,
  );
});

// --- what the model is told about ward and the network -----------------------

test("instructions: what ward is, the markers, the retry, the network knob, the background", async (t) => {
  for (const elicit of [accept, undefined]) {
    const ctx = await connect(t, { elicit });
    const ins = ctx.client.getInstructions();
    assert.ok(ins, "initialize returned no instructions");
    assert.match(ins, /sandbox the kernel enforces/);
    assert.match(ins, /\[sandbox: file access denied under <mode> mode\]/);
    assert.match(ins, /\[sandbox: network access denied: the network is off under <mode> mode\]/);
    assert.match(ins, /run_in_background/);
    // Never the mode in force (it made models refuse work up front).
    assert.doesNotMatch(ins, /under (read-only|workspace-write|danger-full-access) mode/);
    if (elicit) assert.match(ins, /network_permissions/);
    else assert.match(ins, /cannot be widened from here/);
    const { tools } = await ctx.client.listTools();
    const bash = tools.find((x) => x.name === "bash");
    assert.match(bash.description, /\[sandbox: network access denied: the network is off under <mode> mode\]/);
    assert.match(bash.description, elicit ? /network_permissions/ : /cannot be widened from here/);
    assert.match(bash.description, /run_in_background/);
    assert.match(bash.inputSchema.properties.timeout_ms.description, /55000/);
  }
});

test("network-off: a refused lookup names the network, and the retry with network_permissions", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t, { mode: "workspace-write", elicit: accept });
  const { text, result } = await call(ctx, "bash", {
    command: "curl -sS -m 10 http://registry.example.invalid/ || python3 -c 'import socket; socket.getaddrinfo(\"registry.example.invalid\", 80)'",
  });
  const lines = text.split("\n");
  assert.equal(lines.at(-2), "[sandbox: network access denied: the network is off under workspace-write mode]");
  assert.equal(
    lines.at(-1),
    'retry this exact command once with network_permissions (the host, or "on") + justification; the approval prompt asks the user',
  );
  assert.equal(result.structuredContent.network.off_denied, true);
  assert.equal(result.structuredContent.sandbox.denied, false);
  // Not a file denial, and nothing when the command did not fail.
  assert.doesNotMatch(text, /file access denied/);
  const ok = await call(ctx, "bash", { command: "curl -sS -m 10 http://registry.example.invalid/; true" });
  assert.doesNotMatch(ok.text, /network access denied/);
  // Without an approval service: how a person can allow it.
  const plain = await connect(t, { mode: "workspace-write" });
  const r2 = await call(plain, "bash", { command: "curl -sS -m 10 http://registry.example.invalid/" });
  const l2 = r2.text.split("\n");
  assert.equal(l2.at(-2), "[sandbox: network access denied: the network is off under workspace-write mode]");
  assert.match(l2.at(-1), /^network_permissions cannot be asked for here; a person can allow it: ward session network [0-9a-f]{16} on, or ward mcp --allow-domain HOST$/);
});

// --- bounded file output -----------------------------------------------------

test("bounded-files: read_file and list_directory stop at 64 KiB and say how to go on", async (t) => {
  const ctx = await connect(t, { mode: "workspace-write" });
  // A 5 MB file of 100-byte lines.
  const line = "x".repeat(99) + "\n";
  writeFileSync(path.join(ctx.ws, "big.txt"), line.repeat(50000));
  // With the line numbers (the default) the bound holds too.
  let r = await call(ctx, "read_file", { path: "big.txt" });
  assert.ok(r.text.length <= 64 * 1024 + 200, `${r.text.length} characters`);
  assert.equal(r.text.split("\n")[0], "     1\t" + "x".repeat(99));
  const numbered = r.result.structuredContent.next_offset;
  assert.equal(r.text.split("\n").at(-2), `${String(numbered).padStart(6)}\t${"x".repeat(99)}`);
  r = await call(ctx, "read_file", { path: "big.txt", line_numbers: false });
  assert.ok(r.text.length <= 64 * 1024 + 200, `${r.text.length} characters`);
  const last = r.text.split("\n").at(-1);
  const m = /^\[truncated: (\d+) more lines \((\d+) bytes\) not shown; read on with offset (\d+), or pick a part with offset\/limit\]$/.exec(last);
  assert.ok(m, last);
  const shown = Number(m[3]);
  assert.equal(Number(m[1]) + shown, 50000);
  assert.equal(Number(m[2]), (50000 - shown) * 100);
  assert.equal(r.result.structuredContent.truncated, true);
  assert.equal(r.result.structuredContent.next_offset, shown);
  // Reading on from the offset given continues where it stopped.
  r = await call(ctx, "read_file", { path: "big.txt", offset: shown, limit: 3, line_numbers: false });
  assert.equal(r.text.split("\n").slice(0, 3).join("\n"), [line, line, line].join("").trimEnd());
  // An offset past the end says so instead of answering nothing.
  r = await call(ctx, "read_file", { path: "big.txt", offset: 60000, line_numbers: false });
  assert.equal(r.text, "[nothing at offset 60000: the file ends before line 60001]");
  assert.equal(r.result.structuredContent.lines, 0);
  // One line longer than the bound (a minified file): its start, what is
  // left of it, and the next line's offset (never "1 more line").
  writeFileSync(path.join(ctx.ws, "min.js"), "a".repeat(200000) + "\nnext\n");
  r = await call(ctx, "read_file", { path: "min.js", line_numbers: false });
  assert.equal(r.text.split("\n")[0], "a".repeat(65536));
  assert.equal(
    r.text.split("\n")[1],
    "[truncated: line 1 is longer than 64 KiB: its first 65536 bytes are shown, " +
      "134464 more bytes of it are not (look at them with bash, e.g. cut -c or fold); " +
      "read on from the next line with offset 1]",
  );
  assert.equal(r.result.structuredContent.truncated, true);
  assert.equal(r.result.structuredContent.next_offset, 1);
  r = await call(ctx, "read_file", { path: "min.js", offset: 1, line_numbers: false });
  assert.equal(r.text, "next\n");
  writeFileSync(path.join(ctx.ws, "min.js"), "a".repeat(200000));
  r = await call(ctx, "read_file", { path: "min.js", line_numbers: false });
  assert.match(r.text, /\n\[truncated: line 1 is longer than 64 KiB: its first 65536 bytes are shown, 134464 more bytes of it are not .*; it is the file's last line\]$/);
  assert.equal(r.result.structuredContent.next_offset, undefined);
  // A single line larger than the fence holds (10 MiB): bash, not offsets.
  writeFileSync(path.join(ctx.ws, "huge.js"), "b".repeat(11 * 1024 * 1024));
  r = await call(ctx, "read_file", { path: "huge.js", line_numbers: false });
  assert.equal(r.result.isError, true);
  assert.equal(
    r.text,
    "huge.js: line 1 alone is larger than read_file can hold (10 MiB); look at it with bash (e.g. head -c or cut -c)",
  );
  // After a short line, that short line and where to go on.
  writeFileSync(path.join(ctx.ws, "huge.js"), "short\n" + "b".repeat(11 * 1024 * 1024));
  r = await call(ctx, "read_file", { path: "huge.js", line_numbers: false });
  assert.match(r.text, /^short\n\[truncated: the file continues after line 1; read on with offset 1/);
  // A small file is returned whole, without a truncated line.
  writeFileSync(path.join(ctx.ws, "small.txt"), "a\nb\n");
  r = await call(ctx, "read_file", { path: "small.txt", line_numbers: false });
  assert.equal(r.text, "a\nb\n");
  assert.equal(r.result.structuredContent.truncated, false);

  // A directory tree of 3000 entries, listed recursively.
  for (let d = 0; d < 30; d++) {
    const dir = path.join(ctx.ws, "tree", `d${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 99; f++) writeFileSync(path.join(dir, `file-${f}`), "");
  }
  r = await call(ctx, "list_directory", { path: "tree", recursive: true });
  assert.ok(r.text.length <= 64 * 1024, `${r.text.length} characters`);
  assert.equal(r.result.structuredContent.entries, 1000);
  assert.equal(r.result.structuredContent.more_entries, 2000);
  assert.match(r.text.split("\n").at(-1), /^\[truncated: 2000 more entries not shown; list a subdirectory, or use depth\/limit\]$/);
  r = await call(ctx, "list_directory", { path: "tree", recursive: true, depth: 1 });
  assert.equal(r.result.structuredContent.entries, 30);
  assert.equal(r.result.structuredContent.truncated, false);
  r = await call(ctx, "list_directory", { path: "tree", recursive: true, limit: 10 });
  assert.equal(r.result.structuredContent.entries, 10);
  assert.match(r.text, /\[truncated: 2990 more entries/);
});

test("task-omitted: task_output says when it dropped the middle of the output", { skip: NO_RUNNER }, async (t) => {
  const ctx = await connect(t);
  const started = await call(ctx, "bash", {
    command: "echo FIRST; head -c 300000 /dev/zero | tr '\\0' a; echo; echo LAST",
    run_in_background: true,
  });
  const id = started.result.structuredContent.task_id;
  const out = await call(ctx, "task_output", { task_id: id, wait_ms: 20000 });
  assert.match(out.text, /^FIRST\n/);
  const m = /\[… (\d+) bytes omitted …\]/.exec(out.text);
  assert.ok(m, "the omission is said");
  assert.ok(Number(m[1]) > 200000);
  assert.match(out.text, /LAST\nexit code: 0$/);
  assert.ok(out.text.length < 70000);
});

test("not-text: read_file of a binary file names what exists in MCP", async (t) => {
  const ctx = await connect(t);
  writeFileSync(path.join(ctx.ws, "bin"), Buffer.from([0, 1, 2, 0xff]));
  const r = await call(ctx, "read_file", { path: "bin" });
  assert.equal(r.result.isError, true);
  assert.match(r.text, /read_file returns text only; look at it with bash/);
  assert.doesNotMatch(r.text, /as bytes/);
});

test("env: a secret in the server's environment does not reach a command", { skip: NO_RUNNER }, async (t) => {
  const s = scratch();
  defer(t, () => s.cleanup());
  s.env.GITHUB_TOKEN = "ghp_secret";
  s.env.AWS_SECRET_ACCESS_KEY = "aws";
  s.env.PLAIN_VAR = "kept";
  const ctx = await connect(t, { scratch: s });
  const r = await call(ctx, "bash", {
    command: 'echo "${GITHUB_TOKEN:-gone} ${AWS_SECRET_ACCESS_KEY:-gone} $PLAIN_VAR"',
  });
  assert.equal(r.text, "gone gone kept\nexit code: 0");
});

test("resume: --session serves an existing session", { skip: NO_RUNNER }, async (t) => {
  const s = scratch();
  defer(t, () => s.cleanup());
  const id = wardCli(s, ["session", "new", "--cwd", s.ws, "--mode", "workspace-write"]).trim();
  writeFileSync(path.join(s.ws, "seed.txt"), "seed\n");
  const client = new Client({ name: "resume", version: "1" });
  await client.connect(
    new StdioClientTransport({ command: WARD, args: ["mcp", "--session", id], env: s.env, stderr: "pipe" }),
  );
  defer(t, () => client.close());
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
