#!/usr/bin/env python3
"""Drive `ward mcp` for tests/e2e/redteam_box.bats.

    mcp_box.py HOW COMMAND -- WARD_MCP_ARGV...

HOW: plain (a bash call), timeout1 (bash with timeout_ms 1), kill-at-once
(a background bash, then task_kill at once), abandon (a background bash,
then the server is SIGKILLed once the file $BOX_READY exists, if set). Prints each tool result's text; exits 0
when the server answered (or was killed, for abandon).
"""
import json
import os
import re
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcp_tool  # noqa: E402 (the client both drivers share)


def main():
    how, command = sys.argv[1], sys.argv[2]
    argv = sys.argv[sys.argv.index("--") + 1:]
    srv, rpc = mcp_tool.client(argv)

    def call(method, params, notify=False):
        m = rpc(method, params, notify)
        if m is None and not notify:
            raise SystemExit("the server closed its output")
        return m

    def text(m):
        res = m.get("result") or {}
        return "".join(c.get("text", "") for c in res.get("content", []))

    call("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "box", "version": "0"}})
    call("notifications/initialized", {}, notify=True)
    args = {"command": command}
    if how == "timeout1":
        args["timeout_ms"] = 1
    if how in ("kill-at-once", "abandon"):
        args["run_in_background"] = True
    m = call("tools/call", {"name": "bash", "arguments": args})
    print(text(m))
    if how == "kill-at-once":
        sc = (m.get("result") or {}).get("structuredContent") or {}
        tid = sc.get("task_id")
        if not tid:
            found = re.search(r"task[_ ]id[\"': ]+([A-Za-z0-9_-]+)", text(m))
            tid = found.group(1) if found else None
        if not tid:
            raise SystemExit("no task id in: " + json.dumps(m))
        print(text(call("tools/call", {"name": "task_kill",
                                       "arguments": {"task_id": tid}})))
    if how == "abandon":
        ready = os.environ.get("BOX_READY")
        for _ in range(200):
            if not ready or os.path.exists(ready):
                break
            time.sleep(0.05)
        os.kill(srv.pid, signal.SIGKILL)
        srv.wait()
        return 0
    srv.stdin.close()
    srv.wait(timeout=60)
    return 0


sys.exit(main())
