#!/usr/bin/env bats
# shellcheck shell=bats
#
# `ward mcp` red team, grants (tests/mcp/grants.test.mjs, the official
# SDK client answering the elicitations): an approved danger-full-access
# call — foreground or background task — ends with every process it
# started (a relay driven by a later confined call finds nothing to run);
# hundreds of approved write_file calls with a symlink swapped in after
# the question never write outside; a 420 KB justification is cut; the
# server's /proc is never read; edit_file's replace_all is bounded; the
# secrets by value reach no command. Once per runner, as root and as the
# unprivileged user nobody (the server under setpriv). The same attacks
# through ward run and the terminal prompt: redteam_grants.bats.

bats_require_minimum_version 1.5.0

load helpers

MCP_DIR=$E2E_ROOT/tests/mcp

setup_file() {
	if command -v node >/dev/null && command -v npm >/dev/null &&
		[ ! -d "$MCP_DIR/node_modules/@modelcontextprotocol/sdk" ]; then
		npm ci --prefix "$MCP_DIR" --no-audit --no-fund \
			>"$BATS_FILE_TMPDIR/npm-ci.log" 2>&1 || true
	fi
}

setup() {
	require_built
	command -v node >/dev/null || skip "node is not installed (Debian: apt-get install nodejs npm)"
	[ -d "$MCP_DIR/node_modules/@modelcontextprotocol/sdk" ] ||
		fail "the npm clients are not installed (npm ci --prefix tests/mcp failed)"
}

# grants RUNNER USER: every scenario of grants.test.mjs.
grants() {
	local runner=$1 who=$2
	local -a as=()
	if [ "$who" = nobody ]; then
		command -v setpriv >/dev/null || skip "setpriv not installed"
		[ "$(id -u)" = 0 ] || skip "needs root to switch to nobody"
		as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	fi
	case $runner in
	bwrap)
		"${as[@]}" bwrap --ro-bind / / --unshare-user -- true 2>/dev/null ||
			skip "bwrap cannot create a sandbox here"
		;;
	landlock)
		"${as[@]}" "$LAUNCHER" --probe >/dev/null 2>&1 ||
			skip "Landlock is not usable here"
		;;
	esac
	run timeout -k 5 900 env WARD="$WARD" GRANTS_RUNNER="$runner" \
		GRANTS_AS="$who" node --test --test-reporter=tap \
		"$MCP_DIR/grants.test.mjs"
	# Each scenario's verdict, its comments and its error (with the line
	# after a "|-").
	printf '%s\n' "$output" | awk '
		/^(not )?ok|^# / { print; next }
		/^ *error:/ { print; more = /\|-$/; next }
		more { print; more = 0 }' | head -n 60 | sed 's/^/# /'
	[ "$status" -eq 0 ] || fail "node --test exited $status"
	grep -q '^# pass 7$' <<<"$output" || fail "not every scenario ran"
}

@test "mcp grants (bwrap, root): relays end, swaps never redirect, the prompt is bounded, /proc and secrets stay out" { grants bwrap root; }
@test "mcp grants (bwrap, nobody): relays end, swaps never redirect, the prompt is bounded, /proc and secrets stay out" { grants bwrap nobody; }
@test "mcp grants (landlock, root): relays end, swaps never redirect, the prompt is bounded, /proc and secrets stay out" { grants landlock root; }
@test "mcp grants (landlock, nobody): relays end, swaps never redirect, the prompt is bounded, /proc and secrets stay out" { grants landlock nobody; }
