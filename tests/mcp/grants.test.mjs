// A grant is one object for one call's lifetime: the MCP side of
// tests/e2e/redteam_grants.bats, with the official SDK client answering
// the elicitations. Run from tests/e2e/mcp_grants.bats, once per runner
// (GRANTS_RUNNER: bwrap or landlock) and user (GRANTS_AS: root or nobody;
// as nobody the server runs under setpriv and owns its scratch area).
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { WARD, call, defer, scratch, sleep } from "./helpers.mjs";

const RUNNER = process.env.GRANTS_RUNNER || "bwrap";
const AS = process.env.GRANTS_AS || "root";
const NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"];
const SCOPE = "this call only; every process it starts ends with it";

// A scratch area (ws, state, config) with an outside directory beside the
// workspace, owned by the user the server runs as.
function area(t) {
  const s = scratch();
  s.out = path.join(s.base, "out");
  mkdirSync(s.out);
  // A home of the user's own (nobody cannot enter root's).
  s.env.HOME = s.base;
  defer(t, () => s.cleanup());
  return s;
}

function own(s) {
  if (AS === "nobody") execFileSync("chown", ["-R", "65534:65534", s.base]);
}

// ward mcp on @s as the test's user; @decide(message) answers each
// elicitation (true: allow), and every message is kept in ctx.asked.
async function serve(t, s, mode, decide, env = {}) {
  own(s);
  const args = ["mcp", "--workspace", s.ws, "--mode", mode, "--runner", RUNNER];
  const transport = new StdioClientTransport({
    command: AS === "nobody" ? "setpriv" : WARD,
    args: AS === "nobody" ? [...NOBODY, WARD, ...args] : args,
    env: { ...s.env, ...env },
    cwd: s.ws,
    stderr: "pipe",
  });
  // Read what the server logs (a full pipe would stop it).
  transport.stderr?.on("data", () => {});
  const client = new Client(
    { name: "ward-grants-test", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } } },
  );
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return decide(req.params.message)
      ? { action: "accept", content: { allow: true } }
      : { action: "decline" };
  });
  await client.connect(transport);
  defer(t, async () => {
    await client.close().catch(() => {});
  });
  return { client, asked, ws: s.ws, pid: transport.pid };
}

const always = () => true;

// The Makefile of call 1: `make test` starts a relay in four shapes (a
// background loop, a setsid'd one, a double fork, a nohup'd daemon), each
// running `sh .relay SHAPE` every 0.1 s for at most 20 s.
function makefile() {
  const loop = (s) =>
    `sh -c 'touch alive.${s}; for i in $$(seq 200); do [ -f .relay ] && sh .relay ${s}; sleep 0.1; done'`;
  return [
    "test:",
    `\t@(${loop("bg")}) &`,
    `\t@setsid -f ${loop("setsid")}`,
    `\t@(${loop("fork")} &)`,
    `\t@nohup ${loop("nohup")} >/dev/null 2>&1 &`,
    "\t@echo tested",
    "",
  ].join("\n");
}

// Calls 1 and 3 are confined; call 2, approved once under
// danger-full-access, runs `make test` in the foreground or as a
// background task. Nothing of call 2 may run after it: no RELAY_RAN.*.
async function relay(t, background) {
  const s = area(t);
  const ctx = await serve(t, s, "workspace-write", always);
  const w = await call(ctx, "write_file", { path: "Makefile", content: makefile() });
  assert.equal(w.result.isError, false, w.text);
  const wait =
    'make -s test && for i in $(seq 100); do [ "$(ls alive.* | wc -l)" -ge 4 ] && break; sleep 0.1; done; ls alive.*';
  const r = await call(ctx, "bash", {
    command: wait,
    sandbox_permissions: "danger-full-access",
    justification: "run the tests",
    run_in_background: background,
  });
  assert.equal(r.result.isError, false, r.text);
  if (background) {
    const id = r.result.structuredContent.task_id;
    let out;
    for (let i = 0; i < 30; i++) {
      out = await call(ctx, "task_output", { task_id: id, wait_ms: 1000 });
      if (!out.result.structuredContent.running) break;
    }
    assert.equal(out.result.structuredContent.running, false, out.text);
  }
  assert.equal(ctx.asked.length, 1);
  for (const shape of ["bg", "setsid", "fork", "nohup"])
    assert.ok(existsSync(path.join(s.ws, `alive.${shape}`)), `the ${shape} relay never ran`);
  const c3 = await call(ctx, "bash", {
    command: `printf 'id -u > ${s.out}/RELAY_RAN.$1\\n' > .relay`,
  });
  assert.equal(c3.result.isError, false, c3.text);
  await sleep(2000); // twenty relay ticks: a survivor would have run it
  assert.deepEqual(readdirSync(s.out), [], "the approved call left a relay running");
  assert.ok(ctx.asked[0].includes(SCOPE), "the question does not say what the grant covers");
}

test("relay: an approved call's processes end with it (foreground)", (t) => relay(t, false));
test("relay: an approved call's processes end with it (background task)", (t) => relay(t, true));

// Hundreds of write_file notes.txt approved under danger-full-access —
// each only when the question shows notes.txt itself — while another
// process swaps it with a symlink to a file outside: nothing lands there.
test("swap: an approved write_file never follows a link swapped in after the question", async (t) => {
  const s = area(t);
  const tries = Number(process.env.GRANTS_SWAP_TRIES || 300);
  const victim = path.join(s.out, "victim");
  const notes = path.join(s.ws, "notes.txt");
  writeFileSync(notes, "real\n");
  const shown = `(-> ${notes})`;
  const ctx = await serve(t, s, "read-only", (m) => m.includes(shown));
  const swapper = spawn(
    AS === "nobody" ? "setpriv" : "/usr/bin/python3",
    [
      ...(AS === "nobody" ? [...NOBODY, "/usr/bin/python3"] : []),
      "-c",
      `
import ctypes, os, sys, time
ws, victim = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
notes, alt = (ws + "/notes.txt").encode(), (ws + "/.swap").encode()
os.symlink(victim, alt)
end = time.monotonic() + 300
while time.monotonic() < end:
    for _ in range(1000):
        libc.renameat2(-100, notes, -100, alt, 2)
    if not os.path.islink(alt) and not os.path.islink(notes):
        os.unlink(alt)
        os.symlink(victim, alt)
`,
      s.ws,
      victim,
    ],
    { stdio: "ignore" },
  );
  const stopped = new Promise((r) => swapper.on("exit", r));
  const stop = async () => {
    if (swapper.exitCode === null && swapper.signalCode === null) {
      swapper.kill("SIGKILL");
      await stopped;
    }
  };
  defer(t, stop);
  let allowed = 0;
  let met = 0;
  let written = 0;
  for (let i = 0; i < tries; i++) {
    const before = ctx.asked.length;
    const r = await call(ctx, "write_file", {
      path: "notes.txt",
      content: "approved\n",
      sandbox_permissions: "danger-full-access",
      justification: "update the notes",
    });
    assert.equal(ctx.asked.length, before + 1, "the write was not asked");
    if (!ctx.asked[before].includes(shown)) continue;
    allowed++;
    if (/as the approval showed: nothing was done/.test(r.text)) met++;
    else if (!r.result.isError) written++;
  }
  // Gone before the workspace it renames in is removed.
  await stop();
  console.log(`# ${tries} tries: ${allowed} approved, ${written} written, ${met} met the link and were refused`);
  assert.ok(!existsSync(victim), `an approved write landed outside: ${existsSync(victim) && readFileSync(victim, "utf8")}`);
  assert.ok(allowed > 0, "no write was approved: the test proves nothing");
  assert.ok(met > 0, "no approved write met the swapped link: the test proves nothing");
});

// The question: a 420 KB justification is cut and says so, a typed \x0a
// is not an escaped newline, the command is right before the question.
test("prompt: a 420 KB justification is cut, the command comes last", async (t) => {
  const s = area(t);
  const ctx = await serve(t, s, "read-only", () => false);
  const r = await call(ctx, "bash", {
    command: "make test",
    sandbox_permissions: "danger-full-access",
    justification: "typed \\x0a here " + "j".repeat(420000),
  });
  assert.equal(r.result.isError, true);
  const m = ctx.asked[0];
  assert.ok(m.length < 4000, `the message is ${m.length} bytes long`);
  assert.match(m, /\[… \d+ more bytes not shown\]/);
  assert.ok(m.includes("typed \\\\x0a here"), "a typed backslash is not escaped");
  assert.ok(m.includes(`grant: ${SCOPE}\ncommand: bash -c 'make test'\nAllow this command to run once under danger-full-access?`));
});

// The file tools run in the server: a process's /proc is its own.
test("proc: read_file and list_directory see nothing of the server's /proc", async (t) => {
  const s = area(t);
  symlinkSync("/proc/self/environ", path.join(s.ws, "env"));
  const ctx = await serve(t, s, "read-only", always, { WARD_GRANTS_SECRET: "s3cr3t" });
  // Text first (the environment and the command line hold NUL bytes,
  // which read_file refuses as not text anyway).
  for (const p of [
    "/proc/self/maps",
    "/proc/thread-self/status",
    `/proc/${ctx.pid}/status`,
    "/proc/self/environ",
    `/proc/${ctx.pid}/environ`,
    "/proc/self/cmdline",
    "env",
  ]) {
    const r = await call(ctx, "read_file", { path: p });
    assert.equal(r.result.isError, true, `${p}: ${r.text.slice(0, 200)}`);
    assert.ok(!r.text.includes("s3cr3t"), `${p}: the server's environment was read`);
    assert.match(r.text, /names the harness/);
  }
  const l = await call(ctx, "list_directory", { path: "/proc/self" });
  assert.equal(l.result.isError, true);
  const ok = await call(ctx, "read_file", { path: "/proc/meminfo" });
  assert.equal(ok.result.isError, false);
});

// edit_file with replace_all is bounded like a read: the server does not
// grow (it grew to 2 GiB), and nothing is written.
test("replace-all: an edit whose result would be too large is refused", async (t) => {
  const s = area(t);
  const big = path.join(s.ws, "big.txt");
  writeFileSync(big, "a".repeat(2 * 1024 * 1024));
  const ctx = await serve(t, s, "workspace-write", always);
  const r = await call(ctx, "edit_file", {
    path: "big.txt",
    old_text: "a",
    new_text: "b".repeat(200),
    replace_all: true,
  });
  assert.equal(r.result.isError, true, r.text.slice(0, 200));
  assert.match(r.text, /larger than \d+ bytes/);
  assert.equal(readFileSync(big, "utf8").length, 2 * 1024 * 1024);
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${ctx.pid}/status`, "utf8"));
  assert.ok(hwm && Number(hwm[1]) < 100 * 1024, `the server grew to ${hwm && hwm[1]} kB`);
});

// The values issue 16 found passing through reach no command.
test("env: credentials by value and the wider names reach no bash call", async (t) => {
  const s = area(t);
  const secrets = {
    DATABASE_URL: "postgres://u:PASSWORD@db.example/app",
    REDIS_URL: "redis://:hunter2xyz@cache:6379/0",
    SENTRY_DSN: "https://abc123@o1.ingest.sentry.io/1",
    SLACK_WEBHOOK_URL: "https://hooks.slack.com/services/T0/B0/xyzzyplugh",
    NPM_CONFIG__AUTH: "dXNlcjpwYXNzd29yZA==",
    DOCKER_AUTH_CONFIG: '{"auths":{}}',
    CI_JOB_JWT: "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IxMjMifQ.c2lnbmF0dXJl",
    GPG_PASSPHRASE: "correcthorsebattery",
    SESSION_COOKIE: "sid=abcdef0123",
    PRIVATE_KEY_PEM: "-----BEGIN PRIVATE KEY-----MIIEvQIBADAN",
    SERVICE_CREDS: "svc:creds",
    BASIC_AUTH: "user:basicpw",
    HELPER: "ghp_0123456789abcdefghijklmnopqrstuvwxyz",
    CLOUD: "AKIAIOSFODNN7EXAMPLE",
    TOOLING: "sk-proj-abcdefghijklmnopqrstuvwx",
  };
  const ctx = await serve(t, s, "workspace-write", always, {
    ...secrets,
    PLAIN_VAR: "kept",
    SSH_AUTH_SOCK: "/tmp/agent.sock",
    GIT_AUTHOR_NAME: "me",
  });
  const r = await call(ctx, "bash", { command: "env" });
  assert.equal(r.result.isError, false, r.text);
  for (const [k, v] of Object.entries(secrets))
    assert.ok(!r.text.includes(v), `${k} reached the command`);
  for (const kv of ["PLAIN_VAR=kept", "SSH_AUTH_SOCK=/tmp/agent.sock", "GIT_AUTHOR_NAME=me"])
    assert.ok(r.text.split("\n").includes(kv), `${kv} did not reach the command`);
});
