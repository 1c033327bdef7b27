// What a person approving an MCP escalation is shown, and the file tools
// against symlinked rules. Run from tests/e2e/redteam_approval.bats and
// tests/e2e/redteam_fence.bats (scenario names "ID: …").
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, symlinkSync, existsSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

import { WARD, call, defer, scratch } from "./helpers.mjs";

// ward mcp with extra arguments and environment; elicitations are
// recorded and declined.
async function serve(t, s, args, env = {}) {
  const transport = new StdioClientTransport({
    command: WARD,
    args: ["mcp", "--workspace", s.ws, ...args],
    env: { ...s.env, ...env },
    cwd: s.ws,
    stderr: "pipe",
  });
  const client = new Client(
    { name: "ward-approval-test", version: "1.0.0" },
    { capabilities: { elicitation: { form: {} } } },
  );
  const asked = [];
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params);
    return { action: "decline" };
  });
  await client.connect(transport);
  defer(t, async () => {
    await client.close().catch(() => {});
  });
  return { client, asked, ws: s.ws };
}

test("approval-target: the elicitation shows where a write lands, escaped", async (t) => {
  const s = scratch();
  defer(t, () => s.cleanup());
  const target = path.join(s.base, "outside-x");
  symlinkSync(target, path.join(s.ws, "notes.txt"));
  const ctx = await serve(t, s, ["--mode", "read-only"]);
  const r = await call(ctx, "write_file", {
    path: "notes.txt",
    content: "x",
    sandbox_permissions: "workspace-write",
    // A line separator, a right-to-left override, a zero-width space
    // and tag characters that would spell "ok" invisibly.
    justification:
      "fix typo\u2028ward: approved by policy\u202e txt.exe \u200b\udb40\udc6f\udb40\udc6b",
  });
  assert.equal(r.result.isError, true);
  assert.equal(ctx.asked.length, 1);
  const m = ctx.asked[0].message;
  assert.match(m, new RegExp(`write notes\\.txt \\(-> ${target.replace(/[.]/g, "\\.")}\\)`));
  for (const raw of ["\u2028", "\u202e", "\u200b", "\udb40\udc6f"])
    assert.ok(!m.includes(raw), `the message holds U+${raw.codePointAt(0).toString(16)}`);
  for (const esc of ["\\u2028", "\\u202e", "\\u200b", "\\U000e006f", "\\U000e006b"])
    assert.ok(m.includes(esc), `the message lacks ${esc}`);
  assert.ok(!existsSync(target), "the declined write happened");
});

test("fence-symlink: read_file is denied where a symlinked rule's target is hidden", async (t) => {
  // The e2e test gives a HOME whose .ssh links to a keys directory.
  const home = process.env.RT_HOME;
  const out = process.env.RT_OUT;
  if (!home || !out) return t.skip("run from tests/e2e/redteam_fence.bats");
  const s = scratch();
  defer(t, () => s.cleanup());
  const ctx = await serve(t, s, ["--mode", "read-only", "--access", "-- ~/.ssh"], {
    HOME: home,
  });
  for (const p of [path.join(home, ".ssh/id"), path.join(out, "keys/id")]) {
    const r = await call(ctx, "read_file", { path: p });
    assert.equal(r.result.isError, true, `${p} was readable: ${r.text}`);
    assert.match(r.text, /\[sandbox: file access denied under read-only mode\]/);
  }
  assert.equal(readFileSync(path.join(out, "keys/id"), "utf8"), "id\n");
});
