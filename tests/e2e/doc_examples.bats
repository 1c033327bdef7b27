#!/usr/bin/env bats
# shellcheck shell=bats
#
# The examples of README.md, ward(1), docs/MCP.md and docs/ACP.md's editor
# configuration are executed, taken
# from the files themselves (tests/e2e/doc_examples.py extracts them):
# an example that stops being true fails here. (docs/CONFIG.md and
# ward-config(5): config_examples.bats; ward-mcp(1)'s example: mcp.bats.)
#
#   - a transcript ("$ command" lines, then what it prints) runs in one
#     bash in a terminal (tests/e2e/doc_transcript.py: a [y/N] prompt is
#     answered y); what it prints must be what the example shows, after
#     the example's /home/u and /src/app become the test's directories;
#   - an output or JSON example is reproduced and compared;
#   - the last test fails when a block is neither run here nor named as
#     not runnable (a diagram, a file tree, `make check` itself).
#
# The account is a stock one: HOME set, no XDG_* variable, no user file.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
WARD=${WARD:-$BUILD/bin/ward}
EXTRACT="/usr/bin/python3 $BATS_TEST_DIRNAME/doc_examples.py"
TRANSCRIPT="/usr/bin/python3 $BATS_TEST_DIRNAME/doc_transcript.py"

setup() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	BASE=$(mktemp -d /var/tmp/ward-docs.XXXXXX)
	export HOME=$BASE/home
	SRC=$HOME/src
	APP=$SRC/app
	mkdir -p "$APP" "$BASE/bin"
	unset XDG_CONFIG_HOME XDG_CACHE_HOME XDG_DATA_HOME XDG_STATE_HOME \
		XDG_RUNTIME_DIR TMPDIR
	# Not inside `make check`'s make: its flags change what make prints.
	unset MAKEFLAGS MFLAGS MAKELEVEL MAKE_TERMOUT MAKE_TERMERR
	export PATH=$(dirname "$WARD"):$BASE/bin:$PATH
	RUNNER=$("$WARD" probe --json 2>/dev/null | jq -r '.chosen // "none"')
	# A project with tests that write (their cache), and a default target.
	printf 'all:\n\t@echo built\ntest:\n\t@touch .test-cache && echo tests pass\n' \
		>"$SRC/Makefile"
	cp "$SRC/Makefile" "$APP/Makefile"
	cd "$SRC" || return 1
}

teardown() {
	cd / && rm -rf "${BASE:-/nonexistent}"
}

fail() {
	printf 'FAIL: %s\n' "$*"
	return 1
}

require_runner() {
	[ "$RUNNER" != none ] || skip "no runner can confine on this machine (ward probe)"
}

# block FILE TEXT: the one example of FILE that contains TEXT (^TEXT:
# that starts with it).
block() {
	local all n
	all=$($EXTRACT "$ROOT/$1" | jq -c --arg t "$2" \
		'[.[] | select(if ($t | startswith("^")) then (.text | startswith($t[1:])) else (.text | contains($t)) end)]')
	n=$(jq length <<<"$all")
	[ "$n" -eq 1 ] || fail "$1: $n examples contain '$2' (expected 1)" >&2 ||
		return 1
	jq -r '.[0].text' <<<"$all"
}

# transcript FILE TEXT [DIR]: run the example of FILE containing TEXT in
# DIR (default: the current directory).
transcript() {
	local text
	text=$(block "$1" "$2") || return 1
	(cd "${3:-.}" && $TRANSCRIPT --runner "$RUNNER" --sub "/home/u=$HOME" \
		--sub "/src/app=$APP" <<<"$text")
}

# --- README.md ---------------------------------------------------------------

@test "README.md: the first steps run as shown" {
	require_runner
	run transcript README.md 'ward run -- touch notes.txt'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$SRC/notes.txt")" = hi ]
}

@test "README.md: the access rules example runs (with a stand-in pip)" {
	require_runner
	mkdir -p "$HOME/.cache/pip" "$HOME/.ssh"
	echo key >"$HOME/.ssh/id_rsa"
	echo cert >"$SRC/server.pem"
	# pip as the example runs it: it writes its cache, and may not read
	# ~/.ssh nor write a *.pem.
	cat >"$BASE/bin/pip" <<-EOF
		#!/bin/sh
		touch "$HOME/.cache/pip/wheel" || exit 1
		cat "$HOME/.ssh/id_rsa" 2>/dev/null && exit 1
		echo changed 2>/dev/null >"$SRC/server.pem" && exit 1
		echo "pip \$*"
	EOF
	chmod +x "$BASE/bin/pip"
	run transcript README.md "--access 'rw ~/.cache/pip'"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -e "$HOME/.cache/pip/wheel" ]
	[ "$(cat "$SRC/server.pem")" = cert ]
}

@test "README.md: the file operations run as shown" {
	require_runner
	mkdir -p "$HOME/.ssh"
	echo key >"$HOME/.ssh/id_rsa"
	run transcript README.md 'ward fs write --mode workspace-write notes.txt'
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(cat "$SRC/notes.txt")" = bye ]
}

@test "README.md: the session example runs, the escalation approved at the terminal" {
	require_runner
	command -v make >/dev/null || skip "make is not installed"
	run transcript README.md 'id=$(ward session new --mode read-only)'
	echo "$output"
	[ "$status" -eq 0 ]
	# The approved run wrote the cache; prune left the new session.
	[ -e "$SRC/.test-cache" ]
	run -0 "$WARD" session list --json
	[ "$(jq length <<<"$output")" -eq 1 ]
}

# mcp_servers FILE: the "mcpServers" entry of FILE's example, run as a
# client would (the example's /path/to/project is ours), answers.
mcp_servers() {
	local json cmd
	json=$(block "$1" '"mcpServers"') || return 1
	mapfile -t cmd < <(jq -r '.mcpServers.ward | .command, .args[]' <<<"$json" |
		sed "s|^/path/to/project$|$APP|")
	[ "${cmd[0]}" = ward ] || fail "the example does not run ward: ${cmd[*]}"
	printf '%s\n' "$INIT" >"$BASE/in"
	run -0 --separate-stderr timeout 30 "${cmd[@]}" <"$BASE/in"
	[[ "$stderr" == *"ward mcp: session "*", workspace $APP, mode workspace-write"* ]]
	jq -e '.result.serverInfo.name' <<<"$output" >/dev/null
}

@test "README.md: the mcpServers entry starts the server" {
	mcp_servers README.md
}

# agent_servers FILE: the "agent_servers" entry of FILE's example, run as
# an editor would, with the scripted test agent in place of the real one
# (tests/acp/agent.mjs): ward's flags are the example's, and a new
# session gets the Permissions selector.
agent_servers() {
	local json cmd=() a
	command -v node >/dev/null || skip "node is not installed (Debian: apt-get install nodejs npm)"
	[ -d "$ROOT/tests/acp/node_modules/@agentclientprotocol/sdk" ] ||
		skip "the ACP SDK is not installed (npm ci --prefix tests/acp)"
	json=$(block "$1" '"agent_servers"') || return 1
	while IFS= read -r a; do
		[ "$a" = -- ] && break
		cmd+=("$a")
	done < <(jq -r '.agent_servers[] | .command, .args[]' <<<"$json")
	[ "${cmd[0]}" = ward ] || fail "the example does not run ward: ${cmd[*]}"
	printf '%s\n' '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}' \
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/new\",\"params\":{\"cwd\":\"$APP\",\"mcpServers\":[]}}" \
		>"$BASE/in"
	# The editor's end of input comes once session/new is answered.
	run -0 --separate-stderr timeout 60 python3 -c '
import subprocess, sys
p = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
p.stdin.write(open(sys.argv[1], "rb").read()); p.stdin.flush()
for line in p.stdout:
    sys.stdout.write(line.decode())
    if b"\"id\":1," in line: break
p.stdin.close(); sys.stdout.write(p.stdout.read().decode()); sys.exit(p.wait())
' "$BASE/in" "${cmd[@]}" -- node "$ROOT/tests/acp/agent.mjs"
	jq -e 'select(.id == 1) | .result.configOptions[] |
		select(.id == "ward_permissions" and .currentValue == "workspace-write")' \
		<<<"$output" >/dev/null || fail "no Permissions selector: $output $stderr"
}

@test "README.md: the agent_servers entry starts ward acp" {
	agent_servers README.md
}

@test "docs/ACP.md: the agent_servers entry starts ward acp" {
	agent_servers docs/ACP.md
}

@test "README.md: the Inspector command line runs" {
	require_runner
	command -v npx >/dev/null || skip "node is not installed (Debian: apt-get install nodejs npm)"
	[ -d "$ROOT/tests/mcp/node_modules/@modelcontextprotocol/inspector" ] ||
		skip "the npm clients are not installed (npm ci in tests/mcp)"
	local cmd
	cmd=$(block README.md 'npx @modelcontextprotocol/inspector') || return 1
	cmd=${cmd//$'\\\n'/ }
	# The pinned copy, found where npx looks first.
	ln -s "$ROOT/tests/mcp/node_modules" "$SRC/node_modules"
	run -0 --separate-stderr timeout 120 bash -c "$cmd"
	echo "$output"
	# `make test` ran, and its write was denied (the default: read-only).
	jq -e '.content[0].text | test("\\[sandbox: file access denied under read-only mode\\]")' \
		<<<"$output" >/dev/null
	[ ! -e "$SRC/.test-cache" ]
}

@test "README.md: the C example compiles against libward and runs" {
	require_runner
	[ -f "$BUILD/lib/libward.a" ] || skip "libward is not built (run make)"
	command -v cc >/dev/null || skip "no C compiler"
	local c
	c=$(block README.md 'ward_call_new(&call, &o)') || return 1
	# The fragment is a body: its includes go first, the rest into main().
	{
		echo '#include <stdio.h>'
		grep '^#include' <<<"$c"
		echo 'int main(void) {'
		grep -v '^#include' <<<"$c"
		echo 'return 0; }'
	} >"$BASE/example.c"
	# shellcheck disable=SC2086 # the sanitizer lane's flags, split
	run -0 cc -std=c11 -Wall -Werror -I"$ROOT/include" -o "$BASE/example" \
		${WARD_SAN_CFLAGS:-} "$BASE/example.c" "$BUILD/lib/libward.a" \
		$(pkg-config --libs jansson yaml-0.1 libevent_core libevent_extra libevent_pthreads) \
		-lpthread
	# make test under read-only: the write of its cache is denied. (Not
	# the flags of a `make check` around us: make -w would print
	# "Entering directory".)
	run -0 --separate-stderr env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		"$BASE/example"
	[ "$output" = "exit 2, denied 1" ] || fail "printed: $output"
}

# --- ward(1) -----------------------------------------------------------------

@test "ward(1): the EXAMPLES run as shown" {
	require_runner
	local t
	for t in '$ ward probe' "sh -c 'echo hi > note.txt'" \
		'--timeout 10m -- make -j8' "ward run --json -c 'ls; echo done >&2'"; do
		run transcript man/ward.1 "$t" "$APP"
		echo "$output"
		[ "$status" -eq 0 ] || fail "the example with: $t"
	done
}

@test "ward(1): the denial report lines are what ward prints" {
	require_runner
	local text want
	text=$(block man/ward.1 'refused by rule "-- .env"') || return 1
	mkdir -p "$APP/.ward"
	printf '# the project file\naccess:\n  - "-- .env"\n' >"$APP/.ward/config.yml"
	echo secret >"$APP/.env"
	cd "$APP"
	run -1 --separate-stderr "$WARD" run --mode read-only -- sh -c 'echo > f; cat .env'
	while IFS= read -r want; do
		[ -n "$want" ] || continue
		want=${want//\/src\/app/$APP}
		grep -qxF -- "$want" <<<"$output$stderr" ||
			fail "ward did not print: $want
got: $output $stderr"
	done <<<"$text"
}

@test "ward(1): the --json result and error have the keys shown" {
	require_runner
	local text want got
	text=$(block man/ward.1 '"stdout_truncated_bytes": 0') || return 1
	run -0 --separate-stderr env -i PATH="$PATH" HOME="$HOME" GITHUB_TOKEN=x \
		"$WARD" run --json -- true
	want=$(jq -c '[keys, (.sandbox | keys), .env_dropped]' <<<"$text")
	got=$(jq -c '[keys, (.sandbox | keys), .env_dropped]' <<<"$output")
	[ "$want" = "$got" ] || fail "ward run --json: $got, the example: $want"
	text=$(block man/ward.1 '{"error": "CODE"') || return 1
	[[ "$text" == *'"message":'* ]]
	run -2 --separate-stderr "$WARD" run --json --mode sideways -- true
	[ "$(jq -c 'keys' <<<"$output")" = '["error","message"]' ]
}

# --- docs/MCP.md -------------------------------------------------------------

INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"docs","version":"0"}}}'
INIT_ELICIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"docs","version":"0"}}}'

# mcp_call INIT TOOL ARGS: one tool call through `ward mcp` in $APP
# (read-only); the answer's result in $BASE/result, the session in $ID.
mcp_call() {
	printf '%s\n' "$1" \
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}" \
		>"$BASE/in"
	timeout -k 5 60 "$WARD" mcp --workspace "$APP" <"$BASE/in" >"$BASE/out" 2>"$BASE/err"
	jq -c 'select(.id == 1) | .result' "$BASE/out" >"$BASE/result"
	ID=$(sed -n 's/^ward mcp: session \([0-9a-f]*\),.*/\1/p' "$BASE/err")
	[ -n "$ID" ] && [ -s "$BASE/result" ]
}

# Every client's setup, read as that client reads it (JSON, TOML, the
# claude CLI's arguments), then started (tests/e2e/mcp_clients.py).
@test "docs/MCP.md: each client's setup (Claude Code, Claude Desktop, VS Code, Cursor, Codex, Zed, npx) parses as the client reads it and starts the server" {
	run -0 /usr/bin/python3 "$BATS_TEST_DIRNAME/mcp_clients.py" \
		"$ROOT/docs/MCP.md" "$APP"
	echo "$output"
	[ "$(grep -c '^ok: ' <<<"$output")" -ge 7 ]
}

@test "docs/MCP.md: a lookup refused with the network off ends as shown" {
	require_runner
	local text want
	text=$(block docs/MCP.md 'curl: (6) Could not resolve host') || return 1
	mcp_call "$INIT_ELICIT" bash '{"command":"curl -sS -m 10 http://registry.example.invalid/"}'
	want=$(tail -n 2 <<<"$text")
	[ "$(jq -r '.content[0].text | split("\n") | .[-2:] | join("\n")' "$BASE/result" |
		sed 's/read-only mode/workspace-write mode/')" = "$want" ] ||
		fail "$(jq -r '.content[0].text' "$BASE/result")"
	[ "$(jq -r '.structuredContent.network.off_denied' "$BASE/result")" = true ]
}

@test "docs/MCP.md: a denied command's text and structuredContent are as shown" {
	require_runner
	local text json want
	text=$(block docs/MCP.md "touch: cannot touch 'out.txt'") || return 1
	json=$(block docs/MCP.md '"denials": [{"path": "/src/app/out.txt"') || return 1
	mcp_call "$INIT_ELICIT" bash '{"command":"touch out.txt"}'
	want=${text//\/src\/app/$APP}
	want=${want//3b5a7dbac490a8c3/$ID}
	[ "$RUNNER" = landlock ] && want=${want//Read-only file system/Permission denied}
	[ "$(jq -r '.content[0].text' "$BASE/result")" = "${want%$'\n'}" ] ||
		fail "the text: $(jq -r '.content[0].text' "$BASE/result")"
	want=$(jq -c --arg r "$RUNNER" '.sandbox.runner = $r' <<<"${json//\/src\/app/$APP}" |
		sed "s/3b5a7dbac490a8c3/$ID/")
	[ "$(jq -c '.structuredContent' "$BASE/result")" = "$want" ] ||
		fail "structuredContent: $(jq -c '.structuredContent' "$BASE/result")"
}

@test "docs/MCP.md: a client without elicitation gets the advice shown, and the advice works" {
	require_runner
	local text cmd
	text=$(block docs/MCP.md 'a person can allow this by widening') || return 1
	mcp_call "$INIT" bash '{"command":"touch out.txt"}'
	[ "$(jq -r '.content[0].text | split("\n") | last' "$BASE/result")" = \
		"${text//3b5a7dbac490a8c3/$ID}" ] || fail "$(cat "$BASE/result")"
	# The person's command, as the docs show it, then the same call runs.
	cmd=$(block docs/MCP.md '^ward session mode 3b5a7dbac490a8c3 workspace-write') || return 1
	run -0 bash -c "${cmd//3b5a7dbac490a8c3/$ID}"
	run -0 "$WARD" session show "$ID" --json
	[ "$(jq -r .mode <<<"$output")" = workspace-write ]
}

@test "docs/MCP.md: the truncated line of a 5 MB read_file is as shown" {
	local text
	text=$(block docs/MCP.md '[truncated: ') || return 1
	/usr/bin/python3 -c 'import sys; sys.stdout.write(("y" * 99 + "\n") * 50000)' \
		>"$APP/big.txt"
	mcp_call "$INIT" read_file '{"path":"big.txt"}'
	[ "$(jq -r '.content[0].text | split("\n") | last' "$BASE/result")" = "${text%$'\n'}" ] ||
		fail "$(jq -r '.content[0].text | split("\n") | last' "$BASE/result")"
}

@test "docs/MCP.md: the way to run one SDK scenario works" {
	require_runner
	command -v node >/dev/null || skip "node is not installed (Debian: apt-get install nodejs npm)"
	[ -d "$ROOT/tests/mcp/node_modules/@modelcontextprotocol/sdk" ] ||
		skip "the npm clients are not installed (npm ci in tests/mcp)"
	local cmd
	cmd=$(block docs/MCP.md 'node --test') || return 1
	# npm ci is what mcp.bats's setup does; the node line runs here.
	cmd=$(grep '^node ' <<<"$cmd")
	cd "$ROOT"
	run -0 timeout 120 env WARD="$WARD" bash -c "$cmd"
	[[ "$output" == *"# pass 1"* && "$output" == *"# fail 0"* ]]
}

# --- nothing left out --------------------------------------------------------

# covered FILE PATTERN...: every example of FILE contains one PATTERN
# (run above, or named here as not runnable).
covered() {
	local file=$1 n i text p hit
	shift
	n=$($EXTRACT "$ROOT/$file" | jq length)
	for i in $(seq 0 $((n - 1))); do
		text=$($EXTRACT "$ROOT/$file" | jq -r ".[$i].text")
		hit=0
		for p in "$@"; do
			[[ "$text" == *"$p"* ]] && hit=1
		done
		[ "$hit" -eq 1 ] || fail "$file: an example nobody runs: $(head -n 2 <<<"$text")"
	done
}

@test "every example of README.md, ward(1) and docs/MCP.md is run by this test or named" {
	covered README.md 'ward run -- touch notes.txt' "--access 'rw ~/.cache/pip'" \
		'ward fs write --mode workspace-write' 'ward session new --mode read-only' \
		'"mcpServers"' 'npx @modelcontextprotocol/inspector' \
		'"agent_servers"' \
		'ward_call_new(&call, &o)' \
		'make demo' `# make check itself: not run from inside it` \
		'npx -y ward-sandbox mcp --workspace .' `# tests/e2e/npm.bats` \
		'include/ward/   libward' # the tree, not an example
	covered man/ward.1 '$ ward probe' "sh -c 'echo hi > note.txt'" \
		'--timeout 10m -- make -j8' "ward run --json -c 'ls; echo done >&2'" \
		'refused by rule "-- .env"' '"stdout_truncated_bytes": 0' \
		'{"error": "CODE"'
	covered docs/MCP.md '"mcpServers"' "touch: cannot touch 'out.txt'" \
		'claude mcp add' '"servers"' '[mcp_servers.ward]' \
		'"context_servers"' 'npx -y ward-sandbox mcp' \
		'curl: (6) Could not resolve host' \
		"[stopped at ward's 55 s default" `# 55 s: sdk.test.mjs progress-clamp (check-slow)` \
		'"denials": [{"path": "/src/app/out.txt"' \
		'a person can allow this by widening' \
		'ward session mode 3b5a7dbac490a8c3 workspace-write' \
		'[truncated: ' 'node --test' \
		'model ──tools/call bash' # the approval flow, a diagram
}
