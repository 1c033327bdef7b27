// A scripted ACP agent for the `ward acp` tests, built with the official
// SDK's AgentSideConnection. Each prompt's text is a JSON array of steps
// (a terminal to run, a file to read or write, a raw line to send, an
// exit...); the agent runs them in order and answers the prompt with
// their results in the response's _meta.results, so the editor side of a
// test sees exactly what the agent saw through ward.
//
// It also publishes a config option of its own ("model", so the tests can
// see ward's selector added after it, and the agent's own set_config_option
// and config_option_update pass through), echoes extension methods and
// _meta, and records what it was told in initialize.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";

import {
  AgentSideConnection,
  RequestError,
  ndJsonStream,
} from "@agentclientprotocol/sdk";

const sessions = new Map();
let clientCapabilities = null;
let conn;

const modelOption = (value) => ({
  id: "model",
  name: "Model",
  category: "model",
  type: "select",
  currentValue: value,
  options: [
    { value: "fast", name: "Fast" },
    { value: "smart", name: "Smart" },
  ],
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// What a failed request looks like in a step's result.
const failure = (e) => ({
  error: { code: e.code, message: e.message, data: e.data ?? null },
});

async function terminal(sessionId, s) {
  const t = await conn.createTerminal({
    sessionId,
    command: s.command,
    args: s.args ?? [],
    env: s.env,
    cwd: s.cwd,
    outputByteLimit: s.outputByteLimit,
  });
  const r = { id: t.id };
  if (s.embed) {
    // Shown in a tool call, as agents do for live output.
    await conn.sessionUpdate({
      sessionId,
      update: {
        sessionUpdate: "tool_call",
        toolCallId: s.embed,
        title: "run it",
        kind: "execute",
        status: "in_progress",
        content: [{ type: "terminal", terminalId: t.id }],
      },
    });
  }
  if (s.peek_after_ms !== undefined) {
    await sleep(s.peek_after_ms);
    r.peek = await t.currentOutput();
  }
  if (s.peek_until !== undefined) {
    // Until the command has written it (it runs, then): at most 60 s.
    for (let i = 0; i < 600; i++) {
      r.peek = await t.currentOutput();
      if (r.peek.output.includes(s.peek_until) || r.peek.exitStatus) break;
      await sleep(100);
    }
  }
  if (s.kill_after_ms !== undefined) {
    await sleep(s.kill_after_ms);
    await t.kill();
    r.killed = true;
  }
  if (s.no_wait) return r;
  r.exit = await t.waitForExit();
  r.output = await t.currentOutput();
  if (s.release !== false) {
    await t.release();
    r.released = true;
    // Released: the id is no longer valid.
    try {
      await t.currentOutput();
      r.after_release = "answered";
    } catch (e) {
      r.after_release = failure(e).error;
    }
  }
  return r;
}

async function step(sessionId, s) {
  try {
    switch (s.op) {
      case "caps":
        return { clientCapabilities };
      case "terminal":
        return await terminal(sessionId, s);
      case "read":
        return await conn.readTextFile({
          sessionId,
          path: s.path,
          line: s.line,
          limit: s.limit,
        });
      case "write":
        return await conn.writeTextFile({
          sessionId,
          path: s.path,
          content: s.content,
        });
      case "permission":
        // The agent's own question: ward passes it through.
        return await conn.requestPermission({
          sessionId,
          toolCall: { toolCallId: "agent-call-1", title: s.title },
          options: [
            { optionId: "yes", name: "Yes", kind: "allow_once" },
            { optionId: "no", name: "No", kind: "reject_once" },
          ],
        });
      case "own_write":
        // The agent's own write, not asked of the client: only its
        // ceiling (--agent-mode) stands in the way.
        try {
          writeFileSync(s.path, s.content ?? "");
          return { wrote: true };
        } catch (e) {
          return { wrote: false, code: e.code };
        }
      case "ext":
        return await conn.extMethod(s.method, s.params ?? {});
      case "ext_notify":
        await conn.extNotification(s.method, s.params ?? {});
        return {};
      case "update_options": {
        const st = sessions.get(sessionId);
        st.model = s.model;
        await conn.sessionUpdate({
          sessionId,
          update: {
            sessionUpdate: "config_option_update",
            configOptions: [modelOption(st.model)],
          },
        });
        return {};
      }
      case "raw":
        // Bytes that are no ACP message, between two messages.
        process.stdout.write(s.line + "\n");
        await sleep(s.wait_ms ?? 200);
        return {};
      case "sleep":
        await sleep(s.ms);
        return {};
      case "exit":
        process.exit(s.code ?? 0);
        break;
      default:
        return { error: { message: `unknown step ${s.op}` } };
    }
  } catch (e) {
    return failure(e);
  }
}

class TestAgent {
  async initialize(params) {
    clientCapabilities = params.clientCapabilities;
    return {
      protocolVersion: 1,
      agentCapabilities: { loadSession: true },
      agentInfo: { name: "ward-test-agent", version: "1.0.0" },
      authMethods: [],
      _meta: { echo: params._meta ?? null },
    };
  }

  async newSession(params) {
    const sessionId = process.env.ACP_TEST_SESSION_ID || `sess-${randomUUID()}`;
    sessions.set(sessionId, { cwd: params.cwd, model: "fast" });
    return {
      sessionId,
      configOptions: [modelOption("fast")],
      _meta: { cwd: params.cwd },
    };
  }

  async loadSession(params) {
    if (!sessions.has(params.sessionId))
      sessions.set(params.sessionId, { cwd: params.cwd, model: "smart" });
    return { configOptions: [modelOption(sessions.get(params.sessionId).model)] };
  }

  async setSessionConfigOption(params) {
    const st = sessions.get(params.sessionId);
    if (!st || params.configId !== "model")
      throw RequestError.invalidParams({ configId: params.configId });
    st.model = params.value;
    return { configOptions: [modelOption(st.model)] };
  }

  async authenticate() {
    return {};
  }

  async prompt(params) {
    const steps = JSON.parse(params.prompt[0].text);
    const results = [];
    for (const s of steps) results.push(await step(params.sessionId, s));
    await conn.sessionUpdate({
      sessionId: params.sessionId,
      update: {
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: "done" },
      },
    });
    return { stopReason: "end_turn", _meta: { results } };
  }

  async cancel() {}

  async extMethod(method, params) {
    return { method, params };
  }

  async extNotification(method, params) {
    if (method === "_test/notify_back")
      await conn.extNotification("_test/echo", params);
  }
}

const stream = ndJsonStream(
  Writable.toWeb(process.stdout),
  Readable.toWeb(process.stdin),
);
conn = new AgentSideConnection(() => new TestAgent(), stream);
