#!/usr/bin/env python3
"""Check docs/MCP.md's client setups the way each client reads them.

Usage: mcp_clients.py DOC WORKSPACE

For every "### <client>" subsection of "## Set it up in your client", its
fenced blocks are read as that client reads its configuration:

  Claude Code     `claude mcp add [OPTIONS] NAME -- COMMAND ARG...`
  Claude Desktop  JSON, mcpServers.NAME.{command,args}
  VS Code         JSON, servers.NAME.{type: stdio, command, args}
  Cursor          JSON, mcpServers.NAME.{command,args}
  Codex           TOML (tomllib), [mcp_servers.NAME] command, args
  Zed             JSON, context_servers.NAME.{command,args}
  npx             a shell line or JSON whose command is npx -y ward-sandbox

Each server's command line is then started as the client would start it
(in WORKSPACE for the clients that start servers in the project;
/path/to/project and ${workspaceFolder} become WORKSPACE), and must answer
initialize naming WORKSPACE on its start-up line. `ward` is whatever `ward`
PATH finds (the build under test); the npx form's package is not fetched:
its `ward-sandbox` is the same ward, so its arguments are run with it.
Prints one line per setup; exits 1 on the first that fails.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib

INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25",
                              "capabilities": {},
                              "clientInfo": {"name": "docs", "version": "0"}}})

EXPECTED = ["Claude Code", "Claude Desktop", "VS Code", "Cursor", "Codex",
            "Zed", "Without installing ward: npx"]


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def sections(doc):
    """{subsection title: [(lang, text)]} of the client setups."""
    out, title, inside, lang, body = {}, None, False, None, []
    for line in open(doc, encoding="utf-8").read().splitlines():
        if line.startswith("## "):
            inside = line == "## Set it up in your client"
            title = None
            continue
        if not inside:
            continue
        if line.startswith("### "):
            title = line[4:].strip()
            out[title] = []
            continue
        m = re.match(r"^```(\S*)\s*$", line)
        if m and lang is None:
            lang, body = m.group(1), []
        elif m and lang is not None:
            if title:
                out[title].append((lang, "\n".join(body) + "\n"))
            lang = None
        elif lang is not None:
            body.append(line)
    return out


def claude_mcp_add(text):
    """COMMAND ARG... of `claude mcp add` (its options before the name)."""
    for line in text.splitlines():
        argv = shlex.split(line)
        if argv[:3] != ["claude", "mcp", "add"]:
            continue
        if "--" not in argv:
            fail("claude mcp add without '--' before the server's command")
        i = argv.index("--")
        opts = argv[3:i]
        names = [a for a in opts if not a.startswith("-")]
        if len(names) != 1 or names[0] != "ward":
            fail(f"claude mcp add: expected the name ward, got {opts}")
        return argv[i + 1:]
    fail("no `claude mcp add` line")


def server(obj, key, stdio_type=False):
    try:
        s = obj[key]["ward"]
    except (KeyError, TypeError):
        fail(f"no {key}.ward")
    if stdio_type and s.get("type", "stdio") != "stdio":
        fail(f"{key}.ward.type is {s.get('type')!r}, not stdio")
    cmd, args = s.get("command"), s.get("args", [])
    if not isinstance(cmd, str) or not isinstance(args, list) or \
            not all(isinstance(a, str) for a in args):
        fail(f"{key}.ward: command must be a string and args strings")
    return [cmd] + args


def argvs(title, blocks):
    """The command lines the subsection's blocks configure."""
    out = []
    for lang, text in blocks:
        if title == "Claude Code":
            out.append(claude_mcp_add(text))
        elif title == "VS Code":
            out.append(server(json.loads(text), "servers", True))
        elif title in ("Claude Desktop", "Cursor"):
            out.append(server(json.loads(text), "mcpServers"))
        elif title == "Codex":
            conf = tomllib.loads(text)
            s = conf.get("mcp_servers", {}).get("ward")
            if not s:
                fail("no [mcp_servers.ward]")
            if not isinstance(s.get("tool_timeout_sec", 1), (int, float)):
                fail("tool_timeout_sec is not a number")
            out.append([s["command"]] + list(s.get("args", [])))
        elif title == "Zed":
            out.append(server(json.loads(text), "context_servers"))
        elif lang == "json":
            out.append(server(json.loads(text), "mcpServers"))
        else:
            out.append(shlex.split(text.strip()))
    if not out:
        fail(f"{title}: no setup")
    return out


def start(title, argv, ws):
    if argv[0] == "npx":
        if argv[1:3] != ["-y", "ward-sandbox"]:
            fail(f"{title}: npx runs {argv[1:3]}, not -y ward-sandbox")
        argv = ["ward"] + argv[3:]
    if argv[0] != "ward" or argv[1:2] != ["mcp"]:
        fail(f"{title}: the command is not ward mcp: {argv}")
    argv = [a.replace("/path/to/project", ws)
             .replace("${workspaceFolder}", ws) for a in argv]
    p = subprocess.run(argv, input=INIT + "\n", capture_output=True,
                       text=True, cwd=ws, timeout=60)
    answers = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    if not any(a.get("id") == 0 and
               a.get("result", {}).get("serverInfo", {}).get("name") == "ward"
               for a in answers):
        fail(f"{title}: {argv} did not answer initialize: {p.stderr}")
    if f"workspace {ws}," not in p.stderr:
        fail(f"{title}: the server does not serve {ws}: {p.stderr}")
    print(f"ok: {title}: {shlex.join(argv)}")


def main():
    doc, ws = sys.argv[1], os.path.realpath(sys.argv[2])
    got = sections(doc)
    for title in EXPECTED:
        if title not in got:
            fail(f"no setup for {title}")
    for title in EXPECTED:
        for argv in argvs(title, got[title]):
            start(title, argv, ws)


if __name__ == "__main__":
    main()
