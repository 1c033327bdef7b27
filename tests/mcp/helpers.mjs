// Shared set-up for the `ward mcp` tests: a fresh workspace and state
// directory per server (under /var/tmp: /tmp is itself a writable root
// under workspace-write, so a workspace there could not tell them apart),
// a connected SDK client, and small helpers.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
} from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, "../..");
// The build under test: $WARD, else $WARD_BUILD/bin/ward (make check-asan),
// else build/bin/ward.
export const WARD =
  process.env.WARD ||
  path.join(process.env.WARD_BUILD || path.join(ROOT, "build"), "bin/ward");

export const MARKER = (mode) =>
  `[sandbox: file access denied under ${mode} mode]`;
export const HINT =
  "retry this exact command once with sandbox_permissions (the narrowest " +
  "wider mode that suffices) + justification; the approval prompt asks the user";

// Run @fn when the test @t ends. node:test runs a test's after hooks in
// the order they were added and stops at the first that throws, so a
// scratch area removed before its server was closed (or while a helper
// still wrote in it) failed, left the server running and the test file
// waiting for it for ever. Deferred steps run last in, first out — the
// reverse of how they were set up — and all of them, even when one
// throws (the first error is the test's).
const deferred = new WeakMap();
export function defer(t, fn) {
  let steps = deferred.get(t);
  if (!steps) {
    steps = [];
    deferred.set(t, steps);
    t.after(async () => {
      let first;
      while (steps.length) {
        try {
          await steps.pop()();
        } catch (e) {
          first ??= e;
        }
      }
      if (first) throw first;
    });
  }
  steps.push(fn);
}

// A scratch area: BASE/ws (the workspace), BASE/state, BASE/config.
export function scratch() {
  const base = mkdtempSync("/var/tmp/ward-mcp-test.");
  const ws = path.join(base, "ws");
  mkdirSync(ws);
  mkdirSync(path.join(base, "config"));
  const env = {
    XDG_STATE_HOME: path.join(base, "state"),
    // No user file of the person running the tests.
    XDG_CONFIG_HOME: path.join(base, "config"),
    PATH: process.env.PATH,
    HOME: process.env.HOME,
  };
  return {
    base,
    ws,
    env,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

// Run the real `ward` CLI with the scratch area's environment.
export function wardCli(s, args) {
  return execFileSync(WARD, args, {
    env: s.env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

// The id of the (only) session in the scratch area's store.
export function sessionId(s) {
  const list = JSON.parse(wardCli(s, ["session", "list", "--json"]));
  if (list.length !== 1) throw new Error(`expected 1 session, got ${list.length}`);
  return list[0].id;
}

/*
 * Start `ward mcp` on a fresh workspace and connect an SDK client.
 * opts.mode: the session's mode; opts.elicit: an elicitation handler (the
 * client then declares form elicitation); opts.elicitCapability: declare
 * the capability without a handler.
 */
export async function connect(t, opts = {}) {
  const s = opts.scratch || scratch();
  const args = ["mcp", "--workspace", s.ws];
  if (opts.mode) args.push("--mode", opts.mode);
  const transport = new StdioClientTransport({
    command: WARD,
    args,
    env: s.env,
    cwd: s.ws,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const capabilities = {};
  if (opts.elicit) capabilities.elicitation = { form: {} };
  const client = new Client(
    { name: "ward-mcp-test", version: "1.0.0" },
    { capabilities },
  );
  const asked = [];
  if (opts.elicit) {
    client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
      asked.push(req.params);
      return opts.elicit(req.params, extra);
    });
  }
  await client.connect(transport);
  const ctx = {
    client,
    transport,
    scratch: s,
    ws: s.ws,
    asked,
    stderr: () => stderr,
    pid: transport.pid,
  };
  defer(t, async () => {
    await client.close().catch(() => {});
    if (!opts.scratch) s.cleanup();
  });
  return ctx;
}

// Call a tool; returns { text, result }.
export async function call(ctx, name, args, options) {
  const result = await ctx.client.callTool(
    { name, arguments: args },
    undefined,
    options,
  );
  const text = result.content
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
  return { text, result };
}

export const exists = (p) => existsSync(p);

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Whether a process is alive (and not a zombie).
export function alive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

// Host pids of the processes whose command line is exactly @argv (a
// sandbox may give the command its own pid namespace, so `$$` inside it
// would not name the host process).
export function pidsOf(argv) {
  const want = argv.join("\0") + "\0";
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8") === want)
        pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids.filter(alive);
}

export async function waitFor(pred, ms = 5000, step = 25) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred()) return true;
    await sleep(step);
  }
  return pred();
}
