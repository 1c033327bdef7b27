# shellcheck shell=bash
# What the persistence suites share (redteam_persist.bats,
# redteam_repos.bats, redteam_guard.bats): each test has its own
# workspace, HOME (so ward's state directory, its guard state and its
# quarantine are throwaway) and marker file; the user of the test (root,
# or nobody after `become nobody`) owns them and runs its own git, after
# the call, unconfined.

setup() {
	e2e_setup
	rt_home rt
	RT_PWN=/var/tmp/ward-rt-pwned-$E2E_TAG
}

teardown() {
	e2e_teardown
	rm -rf "$RT_HOME" "$RT_STATE"
	rm -f "$RT_PWN" "$RT_PWN".*
}

require_runner() {
	require_runner_usable "$1"
	command -v git >/dev/null || skip "git not installed"
}

# Run a command as the test's user (root, or nobody after become).
as_user() {
	"${E2E_AS[@]}" env HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" "$@"
}

# A committed repository in $WS, made by the test's user.
make_repo() {
	as_user git -C "$WS" init -q . &&
		as_user git -C "$WS" config user.email rt@example.invalid &&
		as_user git -C "$WS" config user.name rt &&
		as_user sh -c "echo a > '$WS/a'" &&
		as_user git -C "$WS" add a &&
		as_user git -C "$WS" commit -qm init
}

# What the user does after the call: git, unconfined, as the user.
users_git() {
	as_user git -C "$WS" status >/dev/null 2>&1 || true
	as_user git -C "$WS" commit -q --allow-empty -m x >/dev/null 2>&1 || true
}

assert_not_pwned() {
	[ ! -e "$RT_PWN" ] || fail "the user's git ran code the command planted"
}

# Nothing was moved aside inside the workspace (git could find it there).
assert_no_quarantine_in_ws() {
	local left
	left=$(find "$WS" -name '*quarantine*' 2>/dev/null | head -n 3)
	[ -z "$left" ] || fail "quarantined inside the workspace: $left"
}


# The JSON object {"command": $1}.
json_command() {
	"$PY" -c 'import json, sys; print(json.dumps({"command": sys.argv[1]}))' "$1"
}

# mcp_tool VARIANT TOOL JSON [WARD_MCP_FLAG...]: one tool call of a
# `ward mcp --workspace $WS --mode workspace-write` server, as the test's
# user. Sets $status (0, 1: isError, 2: no answer), $output (the result's
# text) and $stderr (the text again, then the server's stderr and the
# structured content: what a client and its model see).
mcp_tool() {
	local v=$1 tool=$2 args=$3
	shift 3
	local -a flags
	read -r -a flags <<<"$(runner_flags "$v")"
	E2E_LAST_CMD="ward mcp --workspace $WS ${flags[*]} $*: $tool $args"
	if timeout -k 5 "$E2E_TIMEOUT" "${E2E_AS[@]}" env HOME="$HOME" \
		XDG_STATE_HOME="$XDG_STATE_HOME" "$PY" \
		"$E2E_ROOT/tests/e2e/mcp_tool.py" "$tool" "$args" -- \
		"$WARD" mcp --workspace "$WS" --mode workspace-write \
		"${flags[@]}" "$@" >"$E2E_CAP/stdout" 2>"$E2E_CAP/stderr"; then
		status=0
	else
		status=$?
	fi
	output=$(cat "$E2E_CAP/stdout")
	stderr="$output
$(cat "$E2E_CAP/stderr")"
	ward_dump
}

# confined FRONT VARIANT COMMAND: the shell string COMMAND under
# workspace-write through `ward run` (FRONT run) or one `bash` call of
# `ward mcp` (FRONT mcp); $status, $output and $stderr as they come.
confined() {
	local front=$1 v=$2 cmd=$3
	if [ "$front" = run ]; then
		ward_run "$v" workspace-write -c "$cmd"
	else
		mcp_tool "$v" bash "$(json_command "$cmd")"
	fi
}

# The quarantine holds an entry that was at PATH (a file below it: PATH/…).
in_quarantine() {
	[ -n "$(find "$XDG_STATE_HOME/ward/quarantine" -path "*/files$1*" 2>/dev/null | head -n 1)" ]
}
