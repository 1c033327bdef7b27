// Shared set-up for the `ward acp` tests: a fresh workspace and state
// directory per run (under /var/tmp: /tmp is itself a writable root under
// workspace-write, so a workspace there could not tell them apart), the
// editor side as the official SDK's ClientSideConnection speaking to
// `ward acp -- node agent.mjs` (the scripted agent, AgentSideConnection),
// and small helpers. ACP_RUNNER (bwrap, landlock; empty: auto) picks the
// runner, ACP_AS=nobody runs ward as the unprivileged user 65534, and
// ACP_WRAP runs it under a wrapper (the container lane's nouserns, which
// denies user namespaces the way container runtimes do).
import { execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";

import { ClientSideConnection, ndJsonStream } from "@agentclientprotocol/sdk";

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, "../..");
export const WARD =
  process.env.WARD ||
  path.join(process.env.WARD_BUILD || path.join(ROOT, "build"), "bin/ward");
export const AGENT = path.join(here, "agent.mjs");
export const RUNNER = process.env.ACP_RUNNER || "";
export const AS_NOBODY = process.env.ACP_AS === "nobody";
export const WRAP = process.env.ACP_WRAP || "";
// The scenarios every variant (runner × user) runs; the others run in the
// first variant only (ACP_FULL=1).
export const FULL = process.env.ACP_FULL === "1";

export const MARKER = (mode) =>
  `[sandbox: file access denied under ${mode} mode]`;
export const ASK_HINT = (what) =>
  `ward asks the user whether this exact ${what} may run once under the ` +
  "narrowest wider mode that suffices; the answer follows";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A scratch area: BASE/ws (the workspace), BASE/state, BASE/config; owned
// by nobody when ward runs as nobody.
export function scratch(opts = {}) {
  const base = mkdtempSync("/var/tmp/ward-acp-test.");
  const ws = path.join(base, "ws");
  mkdirSync(ws);
  mkdirSync(path.join(base, "config", "ward"), { recursive: true });
  mkdirSync(path.join(base, "home"));
  if (opts.config)
    writeFileSync(path.join(base, "config", "ward", "config.yml"), opts.config);
  const env = {
    XDG_STATE_HOME: path.join(base, "state"),
    // No user file of the person running the tests.
    XDG_CONFIG_HOME: path.join(base, "config"),
    PATH: process.env.PATH,
    HOME: path.join(base, "home"),
  };
  if (AS_NOBODY) {
    for (const p of [base, ws, path.join(base, "config"),
      path.join(base, "config", "ward"), path.join(base, "home")])
      chownSync(p, 65534, 65534);
    if (opts.config)
      chownSync(path.join(base, "config", "ward", "config.yml"), 65534, 65534);
  }
  return {
    base,
    ws,
    env,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

// The command that starts `ward ARGS...` (as nobody, under the wrapper,
// when asked).
export function wardCommand(args) {
  let argv = [WARD, ...args];
  if (AS_NOBODY)
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
      ...argv];
  if (WRAP) argv = [WRAP, ...argv];
  return { cmd: argv[0], args: argv.slice(1) };
}

// Why this variant cannot run here, or null.
export function variantProblem() {
  if (AS_NOBODY && process.getuid() !== 0)
    return "needs root to switch to nobody";
  if (WRAP && process.getuid() !== 0)
    return "the container wrapper needs root (it drops what a container lacks)";
  if (WRAP && !existsSync(WRAP))
    return `${WRAP} is not built (make check builds it)`;
  return null;
}

// Run the real `ward` CLI with the scratch area's environment.
export function wardCli(s, args) {
  const c = wardCommand(args);
  return execFileSync(c.cmd, c.args, {
    env: s.env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

// The ward session id `ward acp` derives from an ACP session id.
export function wardId(acpId) {
  return "acp-" + createHash("sha256").update(acpId).digest("hex").slice(0, 32);
}

// The events of a ward session's log (the header excluded).
export function events(s, acpId) {
  const file = path.join(s.env.XDG_STATE_HOME, "ward", "sessions",
    `${wardId(acpId)}.jsonl`);
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l)
    .map((l) => JSON.parse(l))
    .slice(1);
}

export function sessionFiles(s) {
  const d = path.join(s.env.XDG_STATE_HOME, "ward", "sessions");
  return existsSync(d) ? readdirSync(d).filter((n) => n.endsWith(".jsonl")) : [];
}

// `ward acp` arguments for a test: the runner, then @extra.
export function acpArgs(extra = []) {
  const a = ["acp"];
  if (RUNNER) a.push("--runner", RUNNER);
  return [...a, ...extra, "--", process.execPath, AGENT];
}

/*
 * Start `ward acp` and connect an SDK client. opts.mode: --mode;
 * opts.args: more ward flags; opts.permission: how the editor answers
 * session/request_permission (default: cancelled); opts.config: a user
 * ward.yml; opts.newSession: false to skip session/new; opts.env: more
 * environment (for the agent).
 */
export async function connect(t, opts = {}) {
  const s = opts.scratch || scratch(opts);
  const extra = [...(opts.mode ? ["--mode", opts.mode] : []),
    ...(opts.args || [])];
  const c = wardCommand(acpArgs(extra));
  const proc = spawn(c.cmd, c.args, {
    env: { ...s.env, ...(opts.env || {}) },
    cwd: s.ws,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr.on("data", (d) => (stderr += d));
  const exited = new Promise((resolve) =>
    proc.on("exit", (code, signal) => resolve({ code, signal })),
  );
  const ctx = {
    scratch: s,
    ws: s.ws,
    proc,
    exited,
    updates: [],
    asked: [],
    notes: [],
    extCalls: [],
    stderr: () => stderr,
  };
  const client = {
    async requestPermission(p) {
      ctx.asked.push(p);
      if (opts.permission) return opts.permission(p, ctx);
      return { outcome: { outcome: "cancelled" } };
    },
    async sessionUpdate(n) {
      ctx.updates.push(n);
    },
    async extMethod(method, params) {
      ctx.extCalls.push({ method, params });
      return { answered: method, params };
    },
    async extNotification(method, params) {
      ctx.notes.push({ method, params });
    },
  };
  ctx.conn = new ClientSideConnection(
    () => client,
    ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)),
  );
  t.after(async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 10000);
      await exited;
      clearTimeout(timer);
    }
    if (!opts.scratch) s.cleanup();
  });
  ctx.init = await ctx.conn.initialize({
    protocolVersion: 1,
    clientCapabilities: {
      fs: { readTextFile: false, writeTextFile: false },
      terminal: false,
    },
    clientInfo: { name: "ward-acp-test", version: "1.0.0" },
    _meta: { probe: "initialize-meta" },
  });
  if (opts.newSession !== false) {
    ctx.session = await ctx.conn.newSession({ cwd: s.ws, mcpServers: [] });
    ctx.sessionId = ctx.session.sessionId;
  }
  return ctx;
}

// Run @steps in the agent (one prompt); their results.
export async function run(ctx, steps) {
  const r = await ctx.conn.prompt({
    sessionId: ctx.sessionId,
    prompt: [{ type: "text", text: JSON.stringify(steps) }],
  });
  return r._meta.results;
}

// ward's Permissions option of a configOptions list.
export const wardOption = (list) =>
  (list || []).find((o) => o.id === "ward_permissions");

// Whether a process whose command line holds @tag is still alive.
export function running(tag) {
  for (const pid of readdirSync("/proc")) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (cmd.includes(tag) && !/^\d+ \(.*\) Z/.test(stat)) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

// Wait (bounded) until @pred() holds; whether it did.
export async function until(pred, ms = 10000) {
  for (let waited = 0; waited < ms; waited += 50) {
    if (await pred()) return true;
    await sleep(50);
  }
  return pred();
}

// A tag no other process carries: "1000.<pid><n>" (a sleep duration).
let seq = 0;
export const tag = () => `1000.${process.pid}${++seq}`;

// Whether a runner can confine here (ward probe).
export function runnerUsable(s) {
  const out = JSON.parse(wardCli(s, ["probe", "--json"]));
  return out.chain.some((c) =>
    (!RUNNER || c.runner === RUNNER) && c.usable);
}
