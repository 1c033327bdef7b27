#!/usr/bin/env bats
# shellcheck shell=bats
#
# `ward mcp`: the MCP server over stdio.
#
# Two kinds of tests:
#   - raw JSON-RPC written with printf into `ward mcp`: framing, every
#     JSON-RPC error code, oversized lines, version negotiation, the end of
#     input, the command line;
#   - real, independent MCP clients installed from npm (pinned in
#     tests/mcp/package-lock.json; `npm ci` runs here when
#     tests/mcp/node_modules is missing): the official TypeScript SDK
#     (tests/mcp/sdk.test.mjs) and the MCP Inspector CLI
#     (tests/mcp/inspector.test.mjs), one bats test per scenario.
#
# Each test has its own state directory (XDG_STATE_HOME) and workspace
# under /var/tmp (not /tmp: /tmp is a writable root of workspace-write).

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
WARD=${WARD:-$BUILD/bin/ward}
MCP_DIR=$ROOT/tests/mcp

load node_runs

setup_file() {
	# The npm clients, installed once per run (network: the npm registry).
	if command -v node >/dev/null && command -v npm >/dev/null &&
		[ ! -d "$MCP_DIR/node_modules/@modelcontextprotocol/sdk" ]; then
		(cd "$MCP_DIR" && npm ci --no-audit --no-fund) \
			>"$BATS_FILE_TMPDIR/npm-ci.log" 2>&1 || true
	fi
	# One node process per client test file, started here and run beside
	# the raw tests (a node start and the SDK's import cost ~1 s each, 37
	# times over otherwise); each "mcp sdk:" / "mcp inspector:" test then
	# reads its scenario's result (node_test). make check-slow
	# (WARD_SLOW=1) runs its few scenarios one by one instead.
	if [ -z "${WARD_SLOW:-}" ] && [ -x "$WARD" ] &&
		command -v node >/dev/null &&
		[ -d "$MCP_DIR/node_modules/@modelcontextprotocol/sdk" ]; then
		node_chain sdk.test.mjs
		node_chain inspector.test.mjs
	fi
}

# node_run FILE: tests/mcp/FILE's one node run (its TAP on stdout).
node_run() {
	WARD=$WARD timeout -k 5 600 node --test --test-reporter=tap \
		"$MCP_DIR/$1"
}

teardown_file() {
	node_chains_stop
}

setup() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	BASE=$(mktemp -d /var/tmp/ward-mcp-e2e.XXXXXX)
	WS=$BASE/ws
	mkdir -p "$WS" "$BASE/config"
	export XDG_STATE_HOME=$BASE/state
	export XDG_CONFIG_HOME=$BASE/config
	unset TMPDIR
	IN=$BASE/in
	OUT=$BASE/out
	ERR=$BASE/err
}

teardown() {
	rm -rf "${BASE:-/nonexistent}"
}

require_runner() {
	"$WARD" probe --json 2>/dev/null | jq -e '[.chain[] | .usable] | any' \
		>/dev/null || skip "no runner can confine on this machine (ward probe)"
}

INIT='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bats","version":"0"}}}'

# mcp_raw [WARD MCP ARGS...]: feed $IN to `ward mcp --workspace $WS`;
# sets $status, $output (stdout) and $stderr. Every stdout line must be a
# JSON-RPC message.
mcp_raw() {
	status=0
	timeout -k 5 30 "$WARD" mcp --workspace "$WS" "$@" <"$IN" >"$OUT" \
		2>"$ERR" || status=$?
	output=$(cat "$OUT")
	stderr=$(cat "$ERR")
	printf '# stdout: %s\n# stderr: %s\n' "$output" "$stderr" | head -n 40
	if [ -s "$OUT" ]; then
		jq -e -s 'all(.jsonrpc == "2.0")' "$OUT" >/dev/null ||
			fail "stdout holds something other than JSON-RPC"
	fi
}

# The response with id $1 (a JSON value), compact.
resp() {
	jq -c --argjson id "$1" 'select(.id == $id)' "$OUT"
}

fail() {
	printf 'FAIL: %s\n' "$*"
	return 1
}

# The JSON-RPC error code answered to id $1.
code_of() {
	jq -r --argjson id "$1" 'select(.id == $id) | .error.code' "$OUT"
}

# --- the command line -----------------------------------------------------

@test "mcp cli: --help, a bad option, an unknown session" {
	run "$WARD" mcp --help
	[ "$status" -eq 0 ]
	[[ "$output" == *'"mcpServers"'* ]]
	[[ "$output" == *"ward-mcp(1)"* ]]
	run "$WARD" mcp --bogus
	[ "$status" -eq 2 ]
	run "$WARD" mcp --session does-not-exist </dev/null
	[ "$status" -eq 2 ]
	run "$WARD" mcp --session abc --workspace "$WS" </dev/null
	[ "$status" -eq 2 ]
	run "$WARD" mcp --mode everything </dev/null
	[ "$status" -eq 2 ]
	"$WARD" help | grep -q '^  mcp '
}

# The sessions in the test's store (none: no directory or an empty one).
session_count() {
	local d=$XDG_STATE_HOME/ward/sessions
	[ -d "$d" ] || { echo 0; return; }
	find "$d" -name '*.jsonl' | wc -l
}

@test "mcp cli: a / or \$HOME workspace under workspace-write is refused unless confirmed, naming --workspace" {
	local home=$BASE/home
	mkdir -p "$home/proj"
	# The current directory as the workspace: /, $HOME, an ancestor.
	for dir in / "$home" "$BASE"; do
		(cd "$dir" && HOME=$home "$WARD" mcp --mode workspace-write \
			</dev/null >"$OUT" 2>"$ERR") && st=0 || st=$?
		[ "$st" -eq 2 ] || fail "in $dir: exit $st"
		grep -q -- "--workspace" "$ERR" || fail "in $dir: $(cat "$ERR")"
		grep -q "refusing to make $dir the workspace" "$ERR" ||
			fail "in $dir: $(cat "$ERR")"
	done
	# ward.yml's mode counts like --mode.
	mkdir -p "$BASE/config/ward"
	printf 'mode: workspace-write\n' >"$BASE/config/ward/config.yml"
	(cd "$home" && HOME=$home "$WARD" mcp </dev/null >"$OUT" 2>"$ERR") &&
		fail "ward.yml's workspace-write in \$HOME was served"
	rm "$BASE/config/ward/config.yml"
	# Nothing was left behind by the refused starts.
	[ "$(session_count)" -eq 0 ]
	# Named explicitly it is refused as well (the text ward run gives),
	# unless confirmed.
	for dir in "$home" /; do
		(cd / && HOME=$home "$WARD" mcp --mode workspace-write --workspace "$dir" \
			</dev/null >"$OUT" 2>"$ERR") && st=0 || st=$?
		[ "$st" -eq 2 ] || fail "--workspace $dir: exit $st"
		grep -q -- "--allow-home-workspace" "$ERR" || fail "--workspace $dir: $(cat "$ERR")"
	done
	[ "$(session_count)" -eq 0 ]
	# A project directory, a confirmed wide workspace, or read-only: served.
	(cd "$home/proj" && HOME=$home "$WARD" mcp --mode workspace-write </dev/null)
	(cd / && HOME=$home "$WARD" mcp --mode workspace-write --allow-home-workspace --workspace "$home" </dev/null)
	(cd / && HOME=$home "$WARD" mcp --mode workspace-write --allow-home-workspace --workspace / </dev/null)
	(cd "$home" && HOME=$home "$WARD" mcp </dev/null)
	[ "$(session_count)" -eq 4 ]
}

@test "mcp cli: a start that fails on the configuration leaves no session" {
	mkdir -p "$BASE/config/ward" "$WS/.ward"
	printf 'mode: sideways\n' >"$BASE/config/ward/config.yml"
	run -125 --separate-stderr "$WARD" mcp --workspace "$WS" </dev/null
	rm "$BASE/config/ward/config.yml"
	printf 'colour: blue\n' >"$WS/.ward/config.yml"
	run -125 --separate-stderr "$WARD" mcp --workspace "$WS" </dev/null
	run -2 --separate-stderr "$WARD" mcp --workspace "$BASE/missing" </dev/null
	[ "$(session_count)" -eq 0 ]
}

@test "mcp cli: the startup line names the runner the plan uses, and the mode" {
	require_runner
	run -0 --separate-stderr "$WARD" mcp --workspace "$WS" </dev/null
	[[ "$stderr" =~ "ward mcp: session "[0-9a-f]{16}", workspace $WS, mode read-only, runner "(bwrap|landlock)", enforcement full" ]]
	run -0 --separate-stderr "$WARD" mcp --workspace "$WS" --mode danger-full-access </dev/null
	[[ "$stderr" == *"mode danger-full-access, runner none (danger-full-access: commands run unconfined)"* ]]
	run -0 --separate-stderr "$WARD" mcp --workspace "$WS" -r landlock </dev/null
	[[ "$stderr" == *", runner landlock, enforcement "* ]]
	# The runner named is the one a call gets, also when the chain's first
	# candidate is not usable for this workspace (bwrap is refused when
	# the workspace holds its binary: /).
	local ws named used
	for ws in "$WS" /; do
		printf '%s\n' "$INIT" \
			'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo hi"}}}' >"$IN"
		status=0
		timeout -k 5 30 "$WARD" mcp --workspace "$ws" <"$IN" >"$OUT" 2>"$ERR" || status=$?
		[ "$status" -eq 0 ]
		named=$(sed -n 's/^ward mcp: session .*, runner \([a-z]*\), enforcement .*/\1/p' "$ERR")
		used=$(jq -r 'select(.id == 1) | .result.structuredContent.sandbox.runner' "$OUT")
		echo "# workspace $ws: startup line names '$named', the call used '$used'"
		[ -n "$named" ] && [ "$named" = "$used" ]
	done
}

@test "mcp raw: logs on stderr, nothing but MCP on stdout, exit 0 at end of input" {
	printf '%s\n' "$INIT" >"$IN"
	mcp_raw
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$OUT")" -eq 1 ]
	[[ "$stderr" == *"ward mcp: session "* ]]
	# The session records the client and the end.
	id=$("$WARD" session list --json | jq -r '.[0].id')
	"$WARD" session log "$id" --json | jq -s -e \
		'(map(.type) | index("mcp/initialize")) and (.[-1].type == "mcp/end")'
}

@test "mcp raw: initialize answers the client's revision when known, else the latest" {
	for pair in 2025-11-25:2025-11-25 2025-06-18:2025-06-18 \
		2025-03-26:2025-03-26 2024-11-05:2025-11-25 1999-01-01:2025-11-25; do
		asked=${pair%%:*} want=${pair#*:}
		printf '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{}}}\n' \
			"$asked" >"$IN"
		mcp_raw
		got=$(jq -r '.result.protocolVersion' "$OUT")
		[ "$got" = "$want" ] || fail "asked $asked, got $got, want $want"
		jq -e '.result.capabilities.tools and .result.capabilities.logging and
			.result.serverInfo.name == "ward"' "$OUT" >/dev/null
	done
}

@test "mcp raw: malformed JSON gets -32700 and the next message is still read" {
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":' 'garbage' \
		'{"jsonrpc":"2.0","id":2,"method":"ping"}' >"$IN"
	mcp_raw
	[ "$status" -eq 0 ]
	[ "$(jq -s '[.[] | select(.id == null and .error.code == -32700)] | length' "$OUT")" -eq 2 ]
	[ "$(resp 2)" = '{"jsonrpc":"2.0","id":2,"result":{}}' ]
}

@test "mcp raw: a parse error whose text cuts a UTF-8 character is still answered" {
	# jansson quotes the bytes near the error: here half of U+03CC.
	printf '"\\\xcf\x8c\n{"jsonrpc":"2.0","id":1,"method":"ping"}\n' >"$IN"
	mcp_raw
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$OUT")" -eq 2 ]
	[ "$(jq -s '[.[] | select(.id == null and .error.code == -32700)] | length' "$OUT")" -eq 1 ]
	[ "$(resp 1)" = '{"jsonrpc":"2.0","id":1,"result":{}}' ]
	[[ "$stderr" != *"out of memory"* ]]
}

@test "mcp raw: invalid requests get -32600 (with the id when it is usable)" {
	printf '%s\n' '[]' '[{"jsonrpc":"2.0","id":1,"method":"ping"}]' '5' \
		'"text"' '{"id":2,"method":"ping"}' \
		'{"jsonrpc":"1.0","id":3,"method":"ping"}' \
		'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}' \
		'{"jsonrpc":"2.0","id":4,"method":7}' '{"jsonrpc":"2.0","id":5}' \
		'{"jsonrpc":"2.0","id":6,"method":"ping","params":"x"}' \
		'{"jsonrpc":"2.0","id":1.5,"method":"ping"}' >"$IN"
	mcp_raw
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$OUT")" -eq 11 ]
	[ "$(jq -s '[.[] | select(.error.code == -32600)] | length' "$OUT")" -eq 11 ]
	for id in 2 3 4 5 6; do
		[ "$(code_of "$id")" = -32600 ] || fail "id $id"
	done
	[ "$(jq -s '[.[] | select(.id == null)] | length' "$OUT")" -eq 6 ]
}

@test "mcp raw: unknown methods get -32601; notifications are never answered" {
	printf '%s\n' '{"jsonrpc":"2.0","id":"a","method":"resources/list"}' \
		'{"jsonrpc":"2.0","method":"notifications/whatever"}' \
		'{"jsonrpc":"2.0","method":"no/such/method"}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}' \
		'{"jsonrpc":"2.0","id":"b","method":"ping"}' >"$IN"
	mcp_raw
	[ "$(wc -l <"$OUT")" -eq 2 ]
	[ "$(code_of '"a"')" = -32601 ]
	[ "$(resp '"b"')" = '{"jsonrpc":"2.0","id":"b","result":{}}' ]
}

@test "mcp raw: invalid params get -32602" {
	printf '%s\n' \
		'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' \
		'{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":5}}' \
		'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}' \
		'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}' \
		'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"bash","arguments":[1]}}' \
		'{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"loud"}}' \
		'{"jsonrpc":"2.0","id":7,"method":"tools/list","params":[1]}' \
		'{"jsonrpc":"2.0","id":8,"method":"logging/setLevel","params":{"level":"info"}}' >"$IN"
	mcp_raw
	for id in 1 2 3 4 5 6 7; do
		[ "$(code_of "$id")" = -32602 ] || fail "id $id: $(resp "$id")"
	done
	[[ "$(resp 4)" == *"Unknown tool: nope"* ]]
	[ "$(resp 8)" = '{"jsonrpc":"2.0","id":8,"result":{}}' ]
}

@test "mcp raw: an oversized line gets an error and is skipped, the next one is read" {
	{
		printf '{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
		head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' a
		printf '"}}\n'
		printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"ping"}'
		# And one that never ends.
		head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' b
	} >"$IN"
	mcp_raw
	[ "$status" -eq 0 ]
	[ "$(wc -l <"$OUT")" -eq 3 ]
	[ "$(jq -s '[.[] | select(.id == null and .error.code == -32600)] | length' "$OUT")" -eq 2 ]
	[[ "$output" == *"longer than 4194304 bytes"* ]]
	[ "$(resp 2)" = '{"jsonrpc":"2.0","id":2,"result":{}}' ]
	[ "$(code_of 1)" = "" ]
}

@test "mcp raw: CRLF line ends, blank lines, a last line without a newline" {
	printf '\n   \r\n{"jsonrpc":"2.0","id":1,"method":"ping"}\r\n\n{"jsonrpc":"2.0","id":2,"method":"ping"}' >"$IN"
	mcp_raw
	[ "$(wc -l <"$OUT")" -eq 2 ]
	[ "$(resp 1)" = '{"jsonrpc":"2.0","id":1,"result":{}}' ]
	[ "$(resp 2)" = '{"jsonrpc":"2.0","id":2,"result":{}}' ]
}

@test "mcp raw: bad tool input is an isError result" {
	printf '%s\n' "$INIT" \
		'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":""}}}' \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_file","arguments":{}}}' \
		'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash"}}' \
		'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"bash","arguments":{"command":"true","timeout_ms":1e300}}}' \
		'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"bash","arguments":{"command":"true","timeout_ms":2.5}}}' \
		'{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"task_output","arguments":{"task_id":"t1","wait_ms":9999999999999}}}' >"$IN"
	mcp_raw
	for id in 1 2 3 4 5 6; do
		# -s: jq 1.6's -e looks only at the last input's result.
		jq -e -s --argjson id "$id" \
			'map(select(.id == $id))[0].result.isError == true' \
			"$OUT" >/dev/null || fail "id $id: $(resp "$id")"
	done
	[[ "$(resp 2)" == *'\"path\" is required'* ]]
	[[ "$(resp 4)" == *'\"timeout_ms\" must be an integer'* ]]
	[[ "$(resp 5)" == *'\"timeout_ms\" must be an integer'* ]]
	[[ "$(resp 6)" == *'\"wait_ms\" must be between 0 and 600000'* ]]
}

@test "mcp raw: the output is bounded (head and tail) with the omission noted" {
	require_runner
	printf '%s\n' "$INIT" \
		'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo FIRST; head -c 1000000 /dev/zero | tr \"\\\\0\" a; echo; echo LAST"}}}' >"$IN"
	(
		cat "$IN"
		# Input stays open until the call is answered (bounded).
		for _ in $(seq 300); do
			grep -q '"id":1,' "$OUT" 2>/dev/null && break
			sleep 0.05
		done
	) | timeout 30 "$WARD" mcp --workspace "$WS" >"$OUT" 2>"$ERR"
	text=$(jq -r 'select(.id == 1) | .result.content[0].text' "$OUT")
	[[ "$text" == FIRST* ]]
	[[ "$text" == *"bytes omitted …]"* ]]
	[[ "$text" == *$'LAST\nexit code: 0' ]]
	[ "${#text}" -lt 70000 ]
}

@test "mcp raw: end of input stops a running command at --drain-timeout, answered as stopped" {
	require_runner
	printf '%s\n' "$INIT" \
		'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 71.2345"}}}' >"$IN"
	start=$SECONDS
	mcp_raw --drain-timeout 1
	[ "$status" -eq 0 ]
	[ $((SECONDS - start)) -lt 10 ]
	! alive_cmd 'sleep 71.2345'
	[[ "$(resp 1)" == *"stopped: the server shut down before this command"* ]]
	[[ "$(resp 1)" != *unavailable* ]]
	run -2 --separate-stderr "$WARD" mcp --drain-timeout soon </dev/null
}

@test "mcp raw: the ward-mcp(1) example works as printed" {
	require_runner
	local example
	# The example, from the man page itself (roff escapes undone).
	example=$(sed -n '/^# What a client does, by hand:/,/^  ward mcp /p' \
		"$ROOT/man/ward-mcp.1" | sed -e 's/\\-/-/g' -e 's/\\\\/\\/g')
	[[ "$example" == *"printf"*"ward mcp"* ]] || fail "no example found"
	echo "# $example"
	mkdir -p "$WS/sub" && touch "$WS/sub/visible.txt"
	cd "$WS/sub"
	PATH=$(dirname "$WARD"):$PATH timeout -k 5 60 bash -c "$example" >"$OUT" 2>"$ERR"
	cat "$ERR" | sed 's/^/# /'
	jq -e -s 'all(.jsonrpc == "2.0")' "$OUT" >/dev/null
	[ "$(jq -r 'select(.id == 2) | .result.isError' "$OUT")" = false ]
	[ "$(jq -r 'select(.id == 2) | .result.content[0].text' "$OUT")" = $'visible.txt\nexit code: 0' ]
}

@test "mcp raw: a cancelled call is not answered and its command dies" {
	require_runner
	{
		printf '%s\n' "$INIT" \
			'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 72.2345"}}}'
		# Cancelled once it runs; then it must be gone (waited for,
		# bounded), and a ping still answered.
		for _ in $(seq 200); do
			pgrep -f 'sleep 72.2345' >/dev/null && break
			sleep 0.05
		done
		printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"test"}}'
		for _ in $(seq 100); do
			alive_cmd 'sleep 72.2345' >"$BASE/alive" || break
			sleep 0.05
		done
		printf '%s\n' '{"jsonrpc":"2.0","id":2,"method":"ping"}'
		for _ in $(seq 200); do
			grep -q '"id":2,' "$OUT" 2>/dev/null && break
			sleep 0.05
		done
	} | timeout 30 "$WARD" mcp --workspace "$WS" >"$OUT" 2>"$ERR"
	[ ! -s "$BASE/alive" ]
	[ "$(resp 1)" = "" ]
	[ "$(resp 2)" = '{"jsonrpc":"2.0","id":2,"result":{}}' ]
}

@test "mcp raw: 40 simultaneous background calls start at most 32 tasks" {
	require_runner
	{
		printf '%s\n' "$INIT"
		for i in $(seq 1 40); do
			printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 74.2345","run_in_background":true}}}\n' "$i"
		done
		# Keep input open until every call is answered (bounded).
		for _ in $(seq 600); do
			[ "$(grep -c . "$OUT" 2>/dev/null)" -ge 41 ] && break
			sleep 0.05
		done
	} | timeout -k 5 60 "$WARD" mcp --workspace "$WS" >"$OUT" 2>"$ERR"
	started=$(jq -s '[.[] | select(.result.structuredContent.task_id)] | length' "$OUT")
	refused=$(jq -s '[.[] | select(.result.isError and (.result.content[0].text | contains("background tasks are still running")))] | length' "$OUT")
	echo "# started $started, refused $refused"
	[ "$started" -eq 32 ]
	[ "$refused" -eq 8 ]
	# End of input stopped every task.
	! alive_cmd 'sleep 74.2345'
}

# alive_cmd 'sleep N': the pids of the command itself (or of the shell
# running it), whose whole command line is that; not of a process that only
# carries it among its arguments (a launcher, its supervisor).
alive_cmd() {
	local re=${1//./\\.}
	pgrep -xf "([^ ]*sh -c )?$re"
}

# The runners that can confine here, from ward probe.
usable_runners() {
	"$WARD" probe --json 2>/dev/null | jq -r '.chain[] | select(.usable) | .runner'
}

# wait_until SECONDS COMMAND...: poll COMMAND until it succeeds (bounded).
wait_until() {
	local n=$(($1 * 20))
	shift
	while [ "$n" -gt 0 ]; do
		"$@" && return 0
		sleep 0.05
		n=$((n - 1))
	done
	"$@"
}

@test "mcp raw: SIGTERM, SIGINT and SIGHUP stop every command and task and record them" {
	require_runner
	local r sig n=0 pid st fg bg id
	for r in $(usable_runners); do
		for sig in TERM INT HUP; do
			n=$((n + 1))
			fg="sleep 77.$n" bg="sleep 78.$n"
			export XDG_STATE_HOME=$BASE/state-$n
			rm -f "$BASE/fifo" && mkfifo "$BASE/fifo"
			# A background job of a script ignores SIGINT: give ward
			# the default actions a terminal would.
			env --default-signal=INT,HUP "$WARD" mcp -r "$r" \
				--workspace "$WS" <"$BASE/fifo" >"$OUT" 2>"$ERR" 3>&- &
			pid=$!
			exec 4>"$BASE/fifo"
			printf '%s\n' "$INIT" \
				"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\",\"arguments\":{\"command\":\"$fg\"}}}" \
				"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"bash\",\"arguments\":{\"command\":\"$bg\",\"run_in_background\":true}}}" >&4
			wait_until 20 alive_cmd "$fg" >/dev/null
			wait_until 20 alive_cmd "$bg" >/dev/null
			wait_until 20 grep -q '"id":2' "$OUT"
			kill -"$sig" "$pid"
			wait_until 20 eval '! kill -0 $pid 2>/dev/null' ||
				{ kill -KILL "$pid"; fail "$r SIG$sig: ward did not stop"; }
			st=0 && wait "$pid" || st=$?
			exec 4>&-
			echo "# $r SIG$sig: exit $st"
			cat "$ERR" | sed 's/^/# /'
			[ "$st" -eq $((128 + $(kill -l "$sig"))) ] ||
				fail "$r SIG$sig: exit $st"
			! alive_cmd "$fg" || fail "$r SIG$sig: $fg survived"
			! alive_cmd "$bg" || fail "$r SIG$sig: $bg survived"
			id=$("$WARD" session list --json | jq -r '.[0].id')
			"$WARD" session log "$id" --json >"$BASE/log"
			[ "$(jq -s '[.[] | select(.type == "call/result")] | length' "$BASE/log")" -eq 2 ] ||
				fail "$r SIG$sig: not every call/result was recorded"
			jq -s -e --arg why "signal SIG$sig" \
				'.[-1].type == "mcp/end" and .[-1].reason == $why' \
				"$BASE/log" >/dev/null || fail "$r SIG$sig: no mcp/end"
			[[ "$(cat "$ERR")" == *"ward mcp: signal SIG$sig: stopping every command"* ]]
		done
	done
	[ "$n" -gt 0 ]
}

# --- real clients from npm ---------------------------------------------------

# node_test FILE ID [SECONDS]: the result of the scenario "ID: …" of
# tests/mcp/FILE: from the file's one node run (setup_file), waited for
# (bounded by four times SECONDS, default 120, and by that run's life),
# or, when there is none (make check-slow), from a node run of its own.
node_test() {
	local file=$1 id=$2 limit=${3:-120} out status=0
	command -v node >/dev/null || skip "node is not installed (Debian: apt-get install nodejs npm)"
	[ -d "$MCP_DIR/node_modules/@modelcontextprotocol/sdk" ] ||
		fail "the npm clients are not installed: 'npm ci' in tests/mcp failed (see its log: $BATS_FILE_TMPDIR/npm-ci.log)"
	if [ -e "$BATS_FILE_TMPDIR/$file.by" ]; then
		node_scenario "$file" "$id" $((limit * 4))
		return
	fi
	out=$(WARD=$WARD timeout -k 5 "$limit" node --test --test-reporter=tap \
		--test-name-pattern="^$id: " "$MCP_DIR/$file" 2>&1) || status=$?
	printf '%s\n' "$out" | grep -v '^ *at \|^ *\.\.\.$\|^ *---$' | head -n 60 |
		sed 's/^/# /'
	if grep -Eq "^ok [0-9]+ - $id: .*# SKIP" <<<"$out"; then
		skip "$(grep -Eo "^ok [0-9]+ - $id: .*# SKIP.*" <<<"$out" | sed 's/.*# SKIP *//')"
	fi
	[ "$status" -eq 0 ] || fail "node --test exited $status"
	grep -Eq "^ok [0-9]+ - $id: " <<<"$out" || fail "scenario '$id' failed"
}

@test "mcp sdk: tools listed with honest annotations" { node_test sdk.test.mjs tools-list; }
@test "mcp sdk: ping" { node_test sdk.test.mjs ping; }
@test "mcp sdk: a write denied in read-only shows the marker" { node_test sdk.test.mjs denied-write; }
@test "mcp sdk: an accepted escalation runs wider exactly once, the next call is narrow" { node_test sdk.test.mjs escalation-accept; }
@test "mcp sdk: an accepted escalation of write_file" { node_test sdk.test.mjs escalation-accept-file; }
@test "mcp sdk: accepted without 'allow' checked is a rejection" { node_test sdk.test.mjs escalation-accept-unchecked; }
@test "mcp sdk: a declined escalation runs nothing" { node_test sdk.test.mjs escalation-decline; }
@test "mcp sdk: a cancelled escalation runs nothing" { node_test sdk.test.mjs escalation-cancel; }
@test "mcp sdk: a client without elicitation gets the unavailable text" { node_test sdk.test.mjs escalation-unavailable; }
@test "mcp sdk: a request that is not wider asks nobody" { node_test sdk.test.mjs escalation-not-wider; }
@test "mcp sdk: progress notifications while the user decides" { node_test sdk.test.mjs escalation-progress; }
@test "mcp sdk: a slow command blocks neither ping nor another call" { node_test sdk.test.mjs concurrency; }
@test "mcp sdk: notifications/cancelled kills the call's process group" { node_test sdk.test.mjs cancel; }
@test "mcp sdk: a timeout kills the process group" { node_test sdk.test.mjs timeout; }
@test "mcp sdk: ward session mode from another terminal applies to the next call" { node_test sdk.test.mjs session-mode; }
@test "mcp sdk: background tasks: output, denial when read, kill" { node_test sdk.test.mjs background; }
@test "mcp sdk: file tools through the fence" { node_test sdk.test.mjs files; }
@test "mcp sdk: bad tool input gets isError results" { node_test sdk.test.mjs bad-input; }
@test "mcp sdk: logging/setLevel" { node_test sdk.test.mjs logging; }
@test "mcp sdk: end of input lets calls in progress finish and answers them" { node_test sdk.test.mjs eof; }
@test "mcp sdk: calls still running at --drain-timeout are stopped, answered as stopped by the shutdown" { node_test sdk.test.mjs eof-bound; }
@test "mcp sdk: a call stopped before its command started says so, not 'unavailable'" { node_test sdk.test.mjs eof-stopped-early; }
@test "mcp sdk: --session resumes a session" { node_test sdk.test.mjs resume; }
@test "mcp sdk: a command longer than the client's timeout succeeds with progress (resetTimeoutOnProgress)" { node_test sdk.test.mjs progress; }
@test "mcp sdk: a task_output wait longer than the client's timeout succeeds with progress" { node_test sdk.test.mjs progress-task; }
@test "mcp sdk: a 70 s command and task_output wait pass the SDK's 60 s default (slow)" { node_test sdk.test.mjs progress-slow 240; }
@test "mcp sdk: a foreground call without progress ends before the client's 60 s, saying to use run_in_background (slow)" { node_test sdk.test.mjs progress-clamp 240; }
@test "mcp sdk: initialize's instructions: the markers, the retry, the network, the background" { node_test sdk.test.mjs instructions; }
@test "mcp sdk: a lookup refused with the network off names the network and network_permissions" { node_test sdk.test.mjs network-off; }
@test "mcp sdk: read_file and list_directory are bounded, with a truncated line" { node_test sdk.test.mjs bounded-files; }
@test "mcp sdk: task_output says when it dropped the middle of the output" { node_test sdk.test.mjs task-omitted; }
@test "mcp sdk: read_file of a binary file names only what exists in MCP" { node_test sdk.test.mjs not-text; }
@test "mcp sdk: a secret in the server's environment does not reach a command" { node_test sdk.test.mjs env; }
@test "mcp inspector: tools/list" { node_test inspector.test.mjs inspector-list; }
@test "mcp inspector: tools/call bash" { node_test inspector.test.mjs inspector-call; }
@test "mcp inspector: tools/call bash, a write denied in read-only" { node_test inspector.test.mjs inspector-denied; }
@test "mcp inspector: tools/call write_file" { node_test inspector.test.mjs inspector-write; }
@test "mcp inspector: no escalation fields for a client that cannot elicit" { node_test inspector.test.mjs inspector-fields; }
@test "mcp inspector: read_file of a 5 MB file is bounded" { node_test inspector.test.mjs inspector-read; }
@test "mcp inspector: partial enforcement is reported with its reason" { node_test inspector.test.mjs inspector-partial; }
