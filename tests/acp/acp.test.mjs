// `ward acp` driven by the official ACP TypeScript SDK on both sides: the
// editor is a ClientSideConnection (helpers.mjs), the agent a scripted
// AgentSideConnection (agent.mjs) that creates terminals and reads and
// writes files through ward. One node:test per scenario; tests/e2e/
// acp.bats runs this file once per variant (ACP_RUNNER × ACP_AS) and
// reports each scenario as a bats test. The scenarios marked core run in
// every variant, the rest in the first one (ACP_FULL=1).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import test, { before } from "node:test";

import {
  AS_NOBODY,
  ASK_HINT,
  FULL,
  MARKER,
  RUNNER,
  WRAP,
  acpArgs,
  connect,
  events,
  running,
  run,
  runnerUsable,
  scratch,
  sessionFiles,
  tag,
  until,
  variantProblem,
  wardCli,
  wardCommand,
  wardId,
  wardOption,
} from "./helpers.mjs";

const allow = () => ({ outcome: { outcome: "selected", optionId: "allow-once" } });
const reject = () => ({ outcome: { outcome: "selected", optionId: "reject-once" } });
const cancel = () => ({ outcome: { outcome: "cancelled" } });
const NEVER = "approval: never\n";

let problem = variantProblem();
before(() => {
  if (problem) return;
  const s = scratch();
  try {
    if (!runnerUsable(s))
      problem = "the runner cannot confine on this machine (ward probe)";
  } finally {
    s.cleanup();
  }
});

// A scenario: every variant runs the core ones, the first all of them.
function scenario(id, core, fn) {
  if (!core && !FULL) return;
  test(id, async (t) => {
    if (problem) {
      t.skip(problem);
      return;
    }
    await fn(t);
  });
}

const results = (list) => list.map((e) => e.type);

scenario("terminal: exit status, both streams, the call recorded", true,
  async (t) => {
    const ctx = await connect(t, { mode: "read-only" });
    const [r, who, line] = await run(ctx, [{
      op: "terminal",
      command: "sh",
      args: ["-c", "echo out; sleep 0.2; echo err >&2; exit 3"],
    }, { op: "terminal", command: "id", args: ["-u"] },
    // Without args, a shell command line (as editors run it).
    { op: "terminal", command: "echo a | tr a b" }]);
    assert.equal(line.output.output, "b\n");
    // The variant is the one asked for: the user, the runner.
    assert.equal(who.output.output, AS_NOBODY ? "65534\n" : "0\n");
    assert.deepEqual(r.exit, { exitCode: 3, signal: null });
    assert.equal(r.output.output, "out\nerr\n");
    assert.equal(r.output.truncated, false);
    assert.deepEqual(r.output.exitStatus, { exitCode: 3, signal: null });
    assert.equal(r.released, true);
    assert.match(r.after_release.message, /no terminal/);
    // ward served it (the editor offers no terminal at all), and the
    // session's log has the call, its mode and how it ended.
    const ev = events(ctx.scratch, ctx.sessionId);
    const start = ev.find((e) => e.type === "call/start" && e.tool === "terminal");
    assert.deepEqual(start.argv, ["sh", "-c", "echo out; sleep 0.2; echo err >&2; exit 3"]);
    assert.equal(start.mode, "read-only");
    const end = ev.find((e) => e.type === "call/result" && e.call === start.call);
    assert.equal(end.exit_code, 3);
    assert.equal(end.ran, true);
    assert.equal(end.runner, RUNNER || (WRAP ? "landlock" : end.runner));
    assert.notEqual(end.runner, "none");
  });

scenario("denied-write: a write denied under read-only carries the marker, and never asks nobody",
  true, async (t) => {
    const ctx = await connect(t, { mode: "read-only", config: NEVER });
    const file = path.join(ctx.ws, "denied.txt");
    const [w, term, own] = await run(ctx, [
      { op: "write", path: file, content: "x" },
      { op: "terminal", command: "sh", args: ["-c", "echo x > denied2.txt"] },
      { op: "read", path: file },
    ]);
    assert.ok(w.error.message.startsWith(MARKER("read-only")), w.error.message);
    assert.match(w.error.message, /write of .*denied\.txt refused: not writable under read-only mode/);
    // Nobody can be asked under `never`: the advice names the session.
    assert.ok(w.error.message.includes(
      `ward session mode ${wardId(ctx.sessionId)} workspace-write`), w.error.message);
    assert.equal(w.error.data.sandbox.denied, true);
    assert.equal(w.error.data.sandbox.mode, "read-only");
    assert.ok(term.output.output.includes(MARKER("read-only")), term.output.output);
    assert.notEqual(term.exit.exitCode, 0);
    assert.equal(own.error.code, -32002); // nothing was written
    assert.equal(existsSync(file), false);
    assert.equal(existsSync(path.join(ctx.ws, "denied2.txt")), false);
    assert.equal(ctx.asked.length, 0);
    const ev = events(ctx.scratch, ctx.sessionId);
    assert.ok(!results(ev).includes("approval/asked"));
    assert.ok(ev.some((e) => e.type === "call/result" && e.denied &&
      e.text.startsWith(MARKER("read-only"))));
  });

scenario("escalation-approve: a denied write and a denied command, allowed once through session/request_permission",
  true, async (t) => {
    const ctx = await connect(t, { mode: "read-only", permission: allow });
    const file = path.join(ctx.ws, "ok.txt");
    const [w, term, after] = await run(ctx, [
      { op: "write", path: file, content: "approved\n" },
      { op: "terminal", command: "sh", args: ["-c", "echo run >> runs.txt; echo done"] },
      { op: "write", path: path.join(ctx.ws, "next.txt"), content: "x" },
    ]);
    assert.deepEqual(w, {});
    assert.equal(readFileSync(file, "utf8"), "approved\n");
    // The command ran twice: denied under read-only, then once more under
    // workspace-write after the approval; the output says so.
    const out = term.output.output;
    assert.ok(out.includes(MARKER("read-only")), out);
    assert.ok(out.includes(ASK_HINT("command")), out);
    assert.ok(out.includes("[sandbox: the user allowed this command once " +
      "under workspace-write; it ran again, and its output follows]"), out);
    assert.deepEqual(term.exit, { exitCode: 0, signal: null });
    assert.equal(readFileSync(path.join(ctx.ws, "runs.txt"), "utf8"), "run\n");
    // Once: the next write is back to read-only, and asked again.
    assert.deepEqual(after, {});
    assert.equal(ctx.asked.length, 3);
    const q = ctx.asked[0];
    assert.equal(q.sessionId, ctx.sessionId);
    assert.deepEqual(q.options.map((o) => o.kind), ["allow_once", "reject_once"]);
    assert.equal(q.toolCall.kind, "edit");
    const text = q.toolCall.content[0].content.text;
    assert.match(text, /operation: write .*ok\.txt \(-> .*\/ok\.txt\)/);
    assert.match(text, /current mode: read-only\nrequested mode: workspace-write/);
    assert.equal(ctx.asked[1].toolCall.kind, "execute");
    assert.match(ctx.asked[1].toolCall.content[0].content.text,
      /command: sh -c 'echo run >> runs.txt; echo done'/);
    const ev = events(ctx.scratch, ctx.sessionId);
    const decisions = ev.filter((e) => e.type === "approval/decision");
    assert.deepEqual(decisions.map((e) => e.outcome),
      ["allowed-once", "allowed-once", "allowed-once"]);
    assert.ok(ev.some((e) => e.type === "call/result" && e.mode === "workspace-write" &&
      e.ran && !e.denied));
    // The session's own mode never changed.
    assert.equal(wardCli(ctx.scratch, ["session", "mode", wardId(ctx.sessionId)]).trim(),
      "read-only");
  });

scenario("kill-release: a long terminal killed, then released; nothing is left running",
  true, async (t) => {
    const ctx = await connect(t, { mode: "read-only" });
    const tg = tag();
    const [r] = await run(ctx, [{
      // Killed once it runs (a kill during the sandbox's start is
      // another case: the command never started).
      op: "terminal", command: "sh", args: ["-c", `echo started; exec sleep ${tg}`],
      peek_until: "started", kill_after_ms: 200,
    }]);
    assert.equal(r.peek.exitStatus ?? null, null); // running when peeked
    assert.equal(r.killed, true);
    assert.deepEqual(r.exit, { exitCode: null, signal: "SIGTERM" });
    assert.deepEqual(r.output.exitStatus, r.exit);
    assert.equal(r.released, true);
    assert.match(r.after_release.message, /no terminal/);
    assert.ok(await until(() => !running(tg)), "the sleep still runs");
    const ev = events(ctx.scratch, ctx.sessionId);
    assert.ok(ev.some((e) => e.type === "call/result" && e.signal === 15));
  });

// --- the rest: the first variant ------------------------------------------

scenario("pass-through: everything else passes unchanged both ways", false,
  async (t) => {
    const ctx = await connect(t, { mode: "workspace-write" });
    // initialize: the agent's answer as it sent it, _meta included; the
    // agent was told the client offers fs and terminal.
    assert.deepEqual(ctx.init._meta, { echo: { probe: "initialize-meta" } });
    assert.equal(ctx.init.agentInfo.name, "ward-test-agent");
    const [caps, ext, perm] = await run(ctx, [
      { op: "caps" },
      { op: "ext", method: "_test/from_agent", params: { x: 1, _meta: { m: 2 } } },
      { op: "permission", title: "the agent's own question" },
      { op: "ext_notify", method: "_test/note", params: { n: 3 } },
    ]);
    assert.deepEqual(caps.clientCapabilities.fs, { readTextFile: true, writeTextFile: true });
    assert.equal(caps.clientCapabilities.terminal, true);
    assert.deepEqual(ctx.extCalls, [{ method: "_test/from_agent", params: { x: 1, _meta: { m: 2 } } }]);
    assert.deepEqual(ext, { answered: "_test/from_agent", params: { x: 1, _meta: { m: 2 } } });
    // The agent's own permission request reached the editor as it was.
    assert.equal(ctx.asked.length, 1);
    assert.equal(ctx.asked[0].toolCall.toolCallId, "agent-call-1");
    assert.deepEqual(perm, { outcome: { outcome: "cancelled" } });
    assert.ok(await until(() => ctx.notes.length === 1));
    assert.deepEqual(ctx.notes[0], { method: "_test/note", params: { n: 3 } });
    // The editor's unknown method and notification reach the agent.
    const back = await ctx.conn.extMethod("_test/from_editor", { y: [1, 2] });
    assert.deepEqual(back, { method: "_test/from_editor", params: { y: [1, 2] } });
    await ctx.conn.extNotification("_test/notify_back", { z: true });
    assert.ok(await until(() => ctx.notes.length === 2));
    assert.deepEqual(ctx.notes[1], { method: "_test/echo", params: { z: true } });
    // The session's own notifications pass too.
    assert.ok(ctx.updates.some((u) => u.update.sessionUpdate === "agent_message_chunk"));
    // A request the agent answers with an error passes that error.
    await assert.rejects(
      ctx.conn.setSessionConfigOption({ sessionId: ctx.sessionId, configId: "nope", value: "x" }),
      (e) => e.code === -32602);
  });

scenario("selector: published after the agent's options, switched (both knob events), refreshed in full",
  false, async (t) => {
    const ctx = await connect(t, { mode: "read-only" });
    const opts = ctx.session.configOptions;
    assert.deepEqual(opts.map((o) => o.id), ["model", "ward_permissions"]);
    const w = wardOption(opts);
    assert.equal(w.category, "mode");
    assert.equal(w.type, "select");
    assert.equal(w.currentValue, "read-only");
    const presets = JSON.parse(wardCli(ctx.scratch, ["session", "presets", "--json"]));
    assert.deepEqual(w.options.map((o) => o.value), presets.map((p) => p.name));
    assert.ok(w.description.includes(wardId(ctx.sessionId)));
    const before = events(ctx.scratch, ctx.sessionId).length;
    const r = await ctx.conn.setSessionConfigOption({
      sessionId: ctx.sessionId, configId: "ward_permissions", value: "danger-full-access",
    });
    // The complete list: the agent's option (as it last said) and ward's.
    assert.deepEqual(r.configOptions.map((o) => o.id), ["model", "ward_permissions"]);
    assert.equal(r.configOptions[0].currentValue, "fast");
    assert.equal(wardOption(r.configOptions).currentValue, "danger-full-access");
    const knobs = events(ctx.scratch, ctx.sessionId).slice(before);
    assert.deepEqual(knobs.map((e) => [e.type, e.mode ?? e.policy]),
      [["sandbox/mode", "danger-full-access"], ["approval/policy", "never"]]);
    // The agent's own option: forwarded, answered with ward's added.
    const m = await ctx.conn.setSessionConfigOption({
      sessionId: ctx.sessionId, configId: "model", value: "smart",
    });
    assert.deepEqual(m.configOptions.map((o) => [o.id, o.currentValue]),
      [["model", "smart"], ["ward_permissions", "danger-full-access"]]);
    // The agent's own config_option_update gets ward's option added.
    await run(ctx, [{ op: "update_options", model: "fast" }]);
    const u = ctx.updates.filter((n) => n.update.sessionUpdate === "config_option_update");
    assert.equal(u.length, 1);
    assert.deepEqual(u[0].update.configOptions.map((o) => [o.id, o.currentValue]),
      [["model", "fast"], ["ward_permissions", "danger-full-access"]]);
  });

scenario("selector-elsewhere: a change from ward session is sent; custom reported, never set; unknown presets rejected",
  false, async (t) => {
    const ctx = await connect(t, { mode: "read-only" });
    const wid = wardId(ctx.sessionId);
    // workspace-write with approval never matches no preset: custom.
    wardCli(ctx.scratch, ["session", "approval", wid, "never"]);
    wardCli(ctx.scratch, ["session", "mode", wid, "workspace-write"]);
    const got = await until(() => ctx.updates.some((n) =>
      n.update.sessionUpdate === "config_option_update" &&
      wardOption(n.update.configOptions).currentValue === "custom"));
    assert.ok(got, "no config_option_update reported custom");
    const u = ctx.updates.filter((n) => n.update.sessionUpdate === "config_option_update");
    const last = u[u.length - 1].update.configOptions;
    assert.deepEqual(last.map((o) => o.id), ["model", "ward_permissions"]);
    const w = wardOption(last);
    assert.ok(w.options.some((o) => o.value === "custom"));
    const count = events(ctx.scratch, ctx.sessionId).length;
    await assert.rejects(
      ctx.conn.setSessionConfigOption({ sessionId: ctx.sessionId, configId: "ward_permissions", value: "custom" }),
      (e) => e.code === -32602 && e.message.includes(
        "'custom' cannot be set: it names any combination that matches no preset (valid: read-only, workspace-write, danger-full-access)"));
    await assert.rejects(
      ctx.conn.setSessionConfigOption({ sessionId: ctx.sessionId, configId: "ward_permissions", value: "everything" }),
      (e) => e.code === -32602 && e.message.includes(
        "unknown preset 'everything' (valid: read-only, workspace-write, danger-full-access)"));
    assert.equal(events(ctx.scratch, ctx.sessionId).length, count, "a refused value wrote nothing");
    // Switched away from custom: both knobs, the full list again.
    const r = await ctx.conn.setSessionConfigOption({
      sessionId: ctx.sessionId, configId: "ward_permissions", value: "read-only",
    });
    assert.equal(wardOption(r.configOptions).currentValue, "read-only");
    assert.ok(!wardOption(r.configOptions).options.some((o) => o.value === "custom"));
    assert.equal(wardCli(ctx.scratch, ["session", "preset", wid]).trim(), "read-only");
  });

scenario("load: session/load of a known id folds its log; another cwd is refused", false,
  async (t) => {
    const s = scratch();
    t.after(() => s.cleanup());
    const a = await connect(t, { scratch: s, mode: "read-only" });
    await a.conn.setSessionConfigOption({
      sessionId: a.sessionId, configId: "ward_permissions", value: "workspace-write",
    });
    a.proc.stdin.end();
    assert.equal((await a.exited).code, 0);
    // A new ward acp (a new agent process): the same ward session, its
    // knobs folded from its log, whatever --mode says for new ones.
    const b = await connect(t, { scratch: s, mode: "read-only", newSession: false });
    const loaded = await b.conn.loadSession({ sessionId: a.sessionId, cwd: s.ws, mcpServers: [] });
    assert.equal(wardOption(loaded.configOptions).currentValue, "workspace-write");
    assert.deepEqual(loaded.configOptions.map((o) => o.id), ["model", "ward_permissions"]);
    b.sessionId = a.sessionId;
    const [w] = await run(b, [{ op: "write", path: path.join(s.ws, "l.txt"), content: "x" }]);
    assert.deepEqual(w, {});
    assert.deepEqual(sessionFiles(s), [`${wardId(a.sessionId)}.jsonl`]);
    const ev = events(s, a.sessionId).filter((e) => e.type === "acp/session");
    assert.deepEqual(ev.map((e) => e.loaded), [false, true]);
    await assert.rejects(
      b.conn.loadSession({ sessionId: a.sessionId, cwd: "/var/tmp", mcpServers: [] }),
      (e) => e.code === -32602 && /works in .* not in \/var\/tmp/.test(e.message));
  });

scenario("new-reuse: an agent answering session/new with a known session's id does not get its sandbox",
  false, async (t) => {
    const s = scratch();
    t.after(() => s.cleanup());
    const env = { ACP_TEST_SESSION_ID: "fixed-session-id" };
    const a = await connect(t, { scratch: s, mode: "read-only", env });
    // A person widened it.
    await a.conn.setSessionConfigOption({
      sessionId: a.sessionId, configId: "ward_permissions", value: "danger-full-access",
    });
    a.proc.stdin.end();
    await a.exited;
    const b = await connect(t, { scratch: s, mode: "read-only", env, newSession: false });
    await assert.rejects(b.conn.newSession({ cwd: s.ws, mcpServers: [] }),
      (e) => /answered session\/new with the id of a session that already exists/.test(e.message));
    // Nothing was bound: the agent's terminal for that id is refused.
    b.sessionId = "fixed-session-id";
    const [r] = await run(b, [{ op: "terminal", command: "true" }]);
    assert.match(r.error.message, /unknown session fixed-session-id/);
    // A load, which the editor asks for, is what reopens it.
    const l = await b.conn.loadSession({ sessionId: "fixed-session-id", cwd: s.ws, mcpServers: [] });
    assert.equal(wardOption(l.configOptions).currentValue, "danger-full-access");
  });

scenario("embed: a terminal embedded in a tool call is shown as its output, and its final output follows",
  false, async (t) => {
    const ctx = await connect(t, { mode: "read-only" });
    const [r] = await run(ctx, [{
      op: "terminal", command: "sh", args: ["-c", "echo first; sleep 0.5; echo last"],
      embed: "call-7",
    }]);
    assert.deepEqual(r.exit, { exitCode: 0, signal: null });
    const calls = ctx.updates.filter((n) => n.update.toolCallId === "call-7");
    assert.ok(calls.length >= 2, JSON.stringify(calls));
    // The editor never gets a terminal it does not know.
    for (const c of calls)
      for (const item of c.update.content)
        assert.equal(item.type, "content", JSON.stringify(item));
    assert.equal(calls[0].update.sessionUpdate, "tool_call");
    const last = calls[calls.length - 1].update;
    assert.equal(last.sessionUpdate, "tool_call_update");
    assert.equal(last.content[0].content.text, "first\nlast\n");
  });

scenario("output-limit: outputByteLimit keeps the end, at a character boundary", false,
  async (t) => {
    const ctx = await connect(t, { mode: "read-only" });
    const [small, big, none] = await run(ctx, [
      { op: "terminal", command: "sh", args: ["-c", "printf 'é%.0s' $(seq 5000); echo END"], outputByteLimit: 101 },
      { op: "terminal", command: "sh", args: ["-c", "head -c 3000000 /dev/zero | tr '\\0' x; echo TAIL"], outputByteLimit: 1000 },
      { op: "terminal", command: "sh", args: ["-c", "echo short"] },
    ]);
    const o = small.output.output;
    assert.equal(small.output.truncated, true);
    assert.ok(Buffer.byteLength(o) <= 101, `${Buffer.byteLength(o)} bytes`);
    assert.ok(o.endsWith("éEND\n"), o);
    assert.ok(!o.includes("\ufffd"), "a character was cut");
    assert.ok(Buffer.byteLength(o) >= 99);
    const b = big.output.output;
    assert.equal(big.output.truncated, true);
    assert.ok(Buffer.byteLength(b) <= 1000 && b.endsWith("xTAIL\n"), b.slice(-40));
    assert.deepEqual(none.output, { output: "short\n", truncated: false,
      exitStatus: { exitCode: 0, signal: null } });
  });

scenario("network-escalation: a host the proxy refused, allowed once for that host", false,
  async (t) => {
    const ctx = await connect(t, {
      mode: "read-only", args: ["--allow-domain", "allowed.test"], permission: allow,
    });
    const [r] = await run(ctx, [
      { op: "terminal", command: "curl -sS -m 5 http://blocked.test/; true" },
    ]);
    const out = r.output.output;
    assert.ok(out.includes("[sandbox: network access to blocked.test denied]"), out);
    assert.ok(out.includes("[sandbox: the user allowed this command once with " +
      "network access to blocked.test; it ran again, and its output follows]"), out);
    assert.equal(ctx.asked.length, 1);
    assert.match(ctx.asked[0].toolCall.content[0].content.text,
      /requested: network access to blocked\.test/);
    const ev = events(ctx.scratch, ctx.sessionId);
    assert.ok(ev.some((e) => e.type === "network/connection" && e.host === "blocked.test" &&
      e.verdict === "denied"));
    assert.ok(ev.some((e) => e.type === "approval/decision" && e.outcome === "allowed-once"));
  });

scenario("escalation-reject: rejected, nothing runs wider; the rejection text and record", false,
  async (t) => {
    const ctx = await connect(t, { mode: "read-only", permission: reject });
    const file = path.join(ctx.ws, "no.txt");
    const [w, term] = await run(ctx, [
      { op: "write", path: file, content: "x" },
      { op: "terminal", command: "sh", args: ["-c", "echo x > no2.txt"] },
    ]);
    assert.ok(w.error.message.startsWith(MARKER("read-only")));
    assert.ok(w.error.message.includes(ASK_HINT("operation")), w.error.message);
    assert.ok(w.error.message.endsWith(
      'the user rejected escalating this operation to "workspace-write"'), w.error.message);
    assert.ok(term.output.output.includes(
      'the user rejected escalating this command to "workspace-write"'), term.output.output);
    assert.notEqual(term.exit.exitCode, 0);
    assert.equal(existsSync(file), false);
    assert.equal(existsSync(path.join(ctx.ws, "no2.txt")), false);
    const ev = events(ctx.scratch, ctx.sessionId);
    assert.deepEqual(ev.filter((e) => e.type === "approval/decision").map((e) => e.outcome),
      ["rejected", "rejected"]);
    assert.ok(ev.some((e) => e.type === "call/result" && e.error === "escalation-rejected"));
  });

scenario("escalation-cancel: cancelled by the editor, or withdrawn by a kill; each its own text", false,
  async (t) => {
    const ctx = await connect(t, { mode: "read-only", permission: cancel });
    const [w] = await run(ctx, [{ op: "write", path: path.join(ctx.ws, "c.txt"), content: "x" }]);
    assert.ok(w.error.message.endsWith(
      'the approval request for escalating this operation to "workspace-write" ' +
      "was cancelled before the user decided; nothing was run"), w.error.message);
    // A question nobody answers, withdrawn when the terminal is killed.
    const slow = await connect(t, { mode: "read-only", permission: () => new Promise(() => {}) });
    const [k] = await run(slow, [{
      op: "terminal", command: "sh", args: ["-c", "echo x > k.txt"], kill_after_ms: 1500,
    }]);
    assert.equal(slow.asked.length, 1);
    assert.ok(k.output.output.includes("was cancelled before the user decided"), k.output.output);
    const ev = events(slow.scratch, slow.sessionId);
    assert.deepEqual(ev.filter((e) => e.type === "approval/decision").map((e) => e.outcome),
      ["cancelled"]);
    assert.equal(existsSync(path.join(slow.ws, "k.txt")), false);
  });

scenario("agent-dies: the agent exits mid-call; the editor is answered, the terminal stopped and recorded",
  false, async (t) => {
    const ctx = await connect(t, { mode: "read-only" });
    const tg = tag();
    await assert.rejects(
      run(ctx, [
        { op: "terminal", command: "sleep", args: [tg], no_wait: true },
        { op: "sleep", ms: 300 },
        { op: "exit", code: 3 },
      ]),
      (e) => /the agent exited before answering/.test(e.message));
    const st = await ctx.exited;
    assert.equal(st.code, 3, ctx.stderr());
    assert.equal(running(tg), false);
    const ev = events(ctx.scratch, ctx.sessionId);
    assert.ok(ev.some((e) => e.type === "call/result" && e.error === "stopped-shutdown"),
      JSON.stringify(ev));
    assert.ok(ev.some((e) => e.type === "acp/end" && e.reason === "the agent ended"));
  });

scenario("editor-eof: the editor's end of input ends the agent; terminals stopped and recorded",
  false, async (t) => {
    const ctx = await connect(t, { mode: "read-only" });
    const tg = tag();
    const p = run(ctx, [{ op: "terminal", command: "sleep", args: [tg] }]).catch(() => {});
    assert.ok(await until(() => running(tg)));
    ctx.proc.stdin.end();
    const st = await ctx.exited;
    assert.equal(st.code, 0, ctx.stderr());
    await p;
    assert.equal(running(tg), false);
    const ev = events(ctx.scratch, ctx.sessionId);
    assert.ok(ev.some((e) => e.type === "call/result" && e.error === "stopped-shutdown"));
    assert.ok(ev.some((e) => e.type === "acp/end" && e.reason === "end of input"));
  });

scenario("malformed-agent: bad lines from the agent get an error and never take ward down", false,
  async (t) => {
    const ctx = await connect(t, { mode: "read-only" });
    const r = await run(ctx, [
      { op: "raw", line: "{this is not json" },
      { op: "raw", line: '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}' },
      { op: "raw", line: '{"jsonrpc":"1.0","id":99,"method":"fs/read_text_file"}' },
      { op: "terminal", command: "sh", args: ["-c", "echo alive"] },
    ]);
    assert.equal(r[3].output.output, "alive\n");
    assert.match(ctx.stderr(), /the agent sent a message that is not JSON-RPC: Parse error/);
    assert.match(ctx.stderr(), /"jsonrpc" must be "2.0"/);
  });

// The editor's side without the SDK: raw lines into ward acp.
function rawEditor(t, s) {
  const c = wardCommand(acpArgs(["--mode", "read-only"]));
  const proc = spawn(c.cmd, c.args, { env: s.env, cwd: s.ws, stdio: ["pipe", "pipe", "pipe"] });
  let buf = "";
  const lines = [];
  proc.stdout.on("data", (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      lines.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
    }
  });
  const exited = new Promise((r) => proc.on("exit", (code) => r(code)));
  t.after(() => proc.kill("SIGKILL"));
  return { proc, lines, exited, send: (l) => proc.stdin.write(l + "\n") };
}

scenario("malformed-editor: bad lines from the editor get an error and never take ward down", false,
  async (t) => {
    const s = scratch();
    t.after(() => s.cleanup());
    const e = rawEditor(t, s);
    e.send("{not json");
    e.send("[1,2]");
    e.send('{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":"relative","mcpServers":[]}}');
    e.send('{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"the editor could not read us"}}');
    // A line far beyond the bound is refused, skipped, and what follows
    // is read.
    e.proc.stdin.write("x".repeat(33 * 1024 * 1024) + "\n");
    e.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}');
    assert.ok(await until(() => e.lines.some((l) => l.id === 1), 20000));
    const errs = e.lines.filter((l) => l.error);
    assert.equal(errs[0].error.code, -32700);
    assert.equal(errs[0].id, null);
    assert.equal(errs[1].error.code, -32600);
    const bad = e.lines.find((l) => l.id === 5);
    assert.equal(bad.error.code, -32602);
    assert.match(bad.error.message, /"cwd" must be an absolute path/);
    assert.ok(errs.some((l) => /longer than 33554432 bytes/.test(l.error.message)));
    // The null-id error was not answered (no endless exchange).
    assert.equal(errs.length, 4, JSON.stringify(errs));
    assert.equal(e.lines.find((l) => l.id === 1).result.agentInfo.name, "ward-test-agent");
    e.proc.stdin.end();
    assert.equal(await e.exited, 0);
  });

scenario("agent-ceiling: --agent-mode confines the agent itself; what it asks ward for follows the session",
  false, async (t) => {
    const s = scratch({ config: NEVER });
    t.after(() => s.cleanup());
    // The agent works in a directory of its own; the project's state/
    // is given to it (and only to it) by a rule.
    const agentWs = path.join(s.base, "agent");
    for (const d of [agentWs, path.join(s.ws, "state")]) {
      mkdirSync(d);
      if (AS_NOBODY) chownSync(d, 65534, 65534);
    }
    const ctx = await connect(t, {
      scratch: s, mode: "workspace-write",
      args: ["--agent-mode", "workspace-write", "--workspace", agentWs,
        "--agent-access", `rw ${s.ws}/state`],
    });
    const [own, mine, asked] = await run(ctx, [
      { op: "own_write", path: path.join(s.ws, "own.txt"), content: "x" },
      { op: "own_write", path: path.join(s.ws, "state", "s.txt"), content: "s" },
      { op: "write", path: path.join(s.ws, "asked.txt"), content: "y" },
    ]);
    // The agent's own writes: only where its ceiling allows.
    assert.equal(own.wrote, false);
    assert.ok(["EROFS", "EACCES", "EPERM"].includes(own.code), own.code);
    assert.equal(mine.wrote, true);
    // What it asks ward for follows the session's workspace-write.
    assert.deepEqual(asked, {});
    assert.equal(readFileSync(path.join(s.ws, "asked.txt"), "utf8"), "y");
    assert.match(ctx.stderr(), /runs confined: mode workspace-write, runner (bwrap|landlock)/);
    // The agent's rule is the agent's: a session in read-only does not
    // get it for its terminals.
    await ctx.conn.setSessionConfigOption({
      sessionId: ctx.sessionId, configId: "ward_permissions", value: "read-only",
    });
    const [term] = await run(ctx, [
      { op: "terminal", command: "sh", args: ["-c", "echo t > state/t.txt"] },
    ]);
    assert.ok(term.output.output.includes(MARKER("read-only")), term.output.output);
    assert.equal(existsSync(path.join(s.ws, "state", "t.txt")), false);
  });

scenario("cli: no agent, a bad option, an agent that is not there", false, async (t) => {
  const s = scratch();
  t.after(() => s.cleanup());
  const runWard = (args) => new Promise((resolve) => {
    const c = wardCommand(args);
    const p = spawn(c.cmd, c.args, { env: s.env, cwd: s.ws, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    p.stderr.on("data", (d) => (err += d));
    p.on("exit", (code) => resolve({ code, err }));
  });
  let r = await runWard(["acp"]);
  assert.equal(r.code, 2);
  assert.match(r.err, /no agent command given/);
  r = await runWard(["acp", "--agent-allow-domain", "api.example.com", "--", "true"]);
  assert.equal(r.code, 2);
  assert.match(r.err, /--agent-allow-domain' needs --agent-mode/);
  r = await runWard(["acp", "--agent-mode", "sideways", "--", "true"]);
  assert.equal(r.code, 2);
  // Like ward run: 127 for a command that is not there.
  r = await runWard(["acp", "--", path.join(s.ws, "no-such-agent")]);
  assert.equal(r.code, 127, r.err);
  assert.match(r.err, /no-such-agent: No such file or directory/);
});
