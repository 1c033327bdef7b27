// `npx -y ward-sandbox mcp`, as a client configuration starts it, driven
// by the official SDK client (@modelcontextprotocol/sdk): the packed npm
// tarballs (make npm) come from a throwaway registry on 127.0.0.1
// (tests/e2e/npm_registry.py, started by tests/e2e/npm.bats), into an
// empty npm cache, so nothing is fetched from anywhere else.
//
// Run by tests/e2e/npm.bats with WARD_NPM_REGISTRY (the registry's URL),
// WARD_NPM_CACHE (an empty directory) and WARD_NPM_TARBALLS (the two
// tarballs, for the `npx --package FILE` form) set.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

import { MARKER, call, exists, scratch } from "./helpers.mjs";

const REGISTRY = process.env.WARD_NPM_REGISTRY;
const CACHE = process.env.WARD_NPM_CACHE;
const TARBALLS = (process.env.WARD_NPM_TARBALLS || "").split(" ").filter(Boolean);
const SKIP = !REGISTRY || !CACHE ? "run by tests/e2e/npm.bats" : false;

// Start `npx ARGS…` as the server and connect the SDK client to it.
async function connectNpx(t, s, args) {
  const transport = new StdioClientTransport({
    command: "npx",
    args,
    cwd: s.ws,
    env: {
      ...s.env,
      npm_config_registry: REGISTRY,
      npm_config_cache: CACHE,
      npm_config_update_notifier: "false",
      npm_config_audit: "false",
      npm_config_fund: "false",
    },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "ward-npx-test", version: "1.0.0" });
  t.after(async () => {
    await client.close().catch(() => {});
    s.cleanup();
  });
  // npx installs first: allow for it on a loaded machine.
  await client.connect(transport, { timeout: 120000 });
  return { client, stderr: () => stderr };
}

async function exercise(ctx, s) {
  const info = ctx.client.getServerVersion();
  assert.equal(info.name, "ward");
  const { tools } = await ctx.client.listTools();
  const names = tools.map((x) => x.name);
  for (const name of ["bash", "read_file", "write_file", "edit_file"]) {
    assert.ok(names.includes(name), `${name} in ${names}`);
  }
  // A command runs, confined: launcher and bridge were found beside ward.
  let r = await call(ctx, "bash", { command: "echo hello-from-npx" });
  assert.match(r.text, /hello-from-npx/, ctx.stderr());
  // Read-only by default: the write is denied by the kernel, with the
  // marker, and nothing reached the disk.
  r = await call(ctx, "bash", { command: "echo x > made-by-npx" });
  assert.ok(r.text.includes(MARKER("read-only")), r.text);
  assert.equal(exists(path.join(s.ws, "made-by-npx")), false);
  // The file tools work through the fence.
  writeFileSync(path.join(s.ws, "notes.txt"), "one\ntwo\n");
  r = await call(ctx, "read_file", { path: "notes.txt" });
  assert.match(r.text, /two/);
}

test("npx -y ward-sandbox mcp: the SDK client drives the packed package", { skip: SKIP }, async (t) => {
  const s = scratch();
  const ctx = await connectNpx(t, s, ["-y", "ward-sandbox", "mcp", "--workspace", s.ws]);
  await exercise(ctx, s);
});

test("npx --package TARBALL: the packed tarballs themselves, offline", { skip: SKIP || TARBALLS.length < 2 }, async (t) => {
  const s = scratch();
  const args = ["--offline", "-y"];
  for (const f of TARBALLS) args.push("--package", f);
  args.push("--", "ward", "mcp", "--workspace", s.ws);
  const ctx = await connectNpx(t, s, args);
  await exercise(ctx, s);
});
