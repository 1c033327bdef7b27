#!/usr/bin/env python3
"""Call one tool of `ward mcp` for the end-to-end suites.

    mcp_tool.py TOOL JSON_ARGUMENTS -- WARD_MCP_ARGV...

Starts the server, initializes, calls TOOL with the arguments (a JSON
object), prints the result's text on stdout and its structuredContent (if
any) as one JSON line on stderr, ends the server. Exit status: 0 when the
result is not an error, 1 when it is (isError), 2 when the server did not
answer (its exit status then on stderr). Every wait is bounded.
"""
import json
import subprocess
import sys


def client(argv):
    """Start `ward mcp` (@argv); return the server and a call(method,
    params, notify=False) that answers the response (None at the end of
    the server's output). Also used by mcp_box.py."""
    srv = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    nid = [0]

    def call(method, params, notify=False):
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            nid[0] += 1
            msg["id"] = nid[0]
        srv.stdin.write((json.dumps(msg) + "\n").encode())
        srv.stdin.flush()
        if notify:
            return None
        for line in srv.stdout:
            m = json.loads(line)
            if m.get("id") == nid[0]:
                return m
        return None

    return srv, call


def main():
    tool, args = sys.argv[1], json.loads(sys.argv[2])
    srv, call = client(sys.argv[sys.argv.index("--") + 1:])

    try:
        if call("initialize", {"protocolVersion": "2025-11-25",
                               "capabilities": {},
                               "clientInfo": {"name": "t", "version": "0"}
                               }) is None:
            srv.wait(timeout=60)
            print("the server ended (exit %s)" % srv.returncode,
                  file=sys.stderr)
            return 2
        call("notifications/initialized", {}, notify=True)
        m = call("tools/call", {"name": tool, "arguments": args})
    except (BrokenPipeError, ValueError):
        m = None
    if m is None:
        srv.kill()
        srv.wait(timeout=60)
        print("the server did not answer (exit %s)" % srv.returncode,
              file=sys.stderr)
        return 2
    res = m.get("result") or {}
    print("".join(c.get("text", "") for c in res.get("content", [])))
    if "structuredContent" in res:
        print(json.dumps(res["structuredContent"]), file=sys.stderr)
    srv.stdin.close()
    srv.wait(timeout=60)
    return 1 if res.get("isError") else 0


if __name__ == "__main__":
    sys.exit(main())
