#!/usr/bin/env bats
# shellcheck shell=bats
#
# `ward acp`: the ACP proxy between an editor and an agent, driven by the
# official ACP TypeScript SDK (@agentclientprotocol/sdk, pinned in
# tests/acp/package-lock.json; `npm ci` runs here when tests/acp/
# node_modules is missing) on both sides: the editor is a
# ClientSideConnection, the agent a scripted AgentSideConnection
# (tests/acp/agent.mjs) that creates terminals and reads and writes files.
#
# tests/acp/acp.test.mjs runs once per variant, started here and run
# beside the other tests: bwrap as root (every scenario), then Landlock as
# root, bwrap and Landlock as the unprivileged user nobody, and Landlock
# with user namespaces denied as container runtimes deny them (the core
# scenarios each); each bats test below reads one scenario's result.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
WARD=${WARD:-$BUILD/bin/ward}
ACP_DIR=$ROOT/tests/acp

load node_runs

# node_run VARIANT: acp.test.mjs for one variant (its TAP on stdout).
node_run() {
	local v=$1
	local -a env
	case $v in
	bwrap-root) env=(ACP_RUNNER=bwrap ACP_FULL=1) ;;
	landlock-root) env=(ACP_RUNNER=landlock) ;;
	bwrap-nobody) env=(ACP_RUNNER=bwrap ACP_AS=nobody) ;;
	landlock-nobody) env=(ACP_RUNNER=landlock ACP_AS=nobody) ;;
	container) env=(ACP_WRAP="$BUILD/tests/nouserns") ;;
	esac
	env WARD="$WARD" "${env[@]}" timeout -k 5 900 node --test \
		--test-reporter=tap "$ACP_DIR/acp.test.mjs"
}

setup_file() {
	# The SDK, installed once per run (network: the npm registry).
	if command -v node >/dev/null && command -v npm >/dev/null &&
		[ ! -d "$ACP_DIR/node_modules/@agentclientprotocol/sdk" ]; then
		(cd "$ACP_DIR" && npm ci --no-audit --no-fund) \
			>"$BATS_FILE_TMPDIR/npm-ci.log" 2>&1 || true
	fi
	[ -x "$WARD" ] && command -v node >/dev/null &&
		[ -d "$ACP_DIR/node_modules/@agentclientprotocol/sdk" ] || return 0
	# Two at a time: the full variant, and the others one after another.
	node_chain bwrap-root
	node_chain landlock-root bwrap-nobody landlock-nobody container
}

teardown_file() {
	node_chains_stop
}

fail() {
	printf 'FAIL: %s\n' "$*"
	return 1
}

# acp_test VARIANT ID: scenario ID of VARIANT's run (bounded: 1200 s).
acp_test() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	command -v node >/dev/null ||
		skip "node is not installed (Debian: apt-get install nodejs npm)"
	[ -d "$ACP_DIR/node_modules/@agentclientprotocol/sdk" ] ||
		fail "the ACP SDK is not installed: 'npm ci' in tests/acp failed (see $BATS_FILE_TMPDIR/npm-ci.log)"
	node_scenario "$1" "$2" 1200
}

@test "acp cli: --help shows an editor's configuration; ward help lists acp" {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	run -0 "$WARD" acp --help
	[[ "$output" == *'"agent_servers"'* ]]
	[[ "$output" == *"ward-acp(1)"* ]]
	"$WARD" help | grep -q '^  acp '
	run -2 "$WARD" acp --bogus
	run -2 "$WARD" acp --agent-grace forever -- true
}

# Every variant: the core scenarios.
@test "acp (bwrap, root): a terminal's exit status, output and record" { acp_test bwrap-root terminal; }
@test "acp (bwrap, root): a write denied under read-only carries the marker; never asks nobody" { acp_test bwrap-root denied-write; }
@test "acp (bwrap, root): an escalation approved through session/request_permission, once" { acp_test bwrap-root escalation-approve; }
@test "acp (bwrap, root): a long terminal killed and released" { acp_test bwrap-root kill-release; }
@test "acp (landlock, root): a terminal's exit status, output and record" { acp_test landlock-root terminal; }
@test "acp (landlock, root): a write denied under read-only carries the marker; never asks nobody" { acp_test landlock-root denied-write; }
@test "acp (landlock, root): an escalation approved through session/request_permission, once" { acp_test landlock-root escalation-approve; }
@test "acp (landlock, root): a long terminal killed and released" { acp_test landlock-root kill-release; }
@test "acp (bwrap, nobody): a terminal's exit status, output and record" { acp_test bwrap-nobody terminal; }
@test "acp (bwrap, nobody): a write denied under read-only carries the marker; never asks nobody" { acp_test bwrap-nobody denied-write; }
@test "acp (bwrap, nobody): an escalation approved through session/request_permission, once" { acp_test bwrap-nobody escalation-approve; }
@test "acp (bwrap, nobody): a long terminal killed and released" { acp_test bwrap-nobody kill-release; }
@test "acp (landlock, nobody): a terminal's exit status, output and record" { acp_test landlock-nobody terminal; }
@test "acp (landlock, nobody): a write denied under read-only carries the marker; never asks nobody" { acp_test landlock-nobody denied-write; }
@test "acp (landlock, nobody): an escalation approved through session/request_permission, once" { acp_test landlock-nobody escalation-approve; }
@test "acp (landlock, nobody): a long terminal killed and released" { acp_test landlock-nobody kill-release; }
@test "acp (landlock, user namespaces denied): a terminal's exit status, output and record" { acp_test container terminal; }
@test "acp (landlock, user namespaces denied): a write denied under read-only carries the marker; never asks nobody" { acp_test container denied-write; }
@test "acp (landlock, user namespaces denied): an escalation approved through session/request_permission, once" { acp_test container escalation-approve; }
@test "acp (landlock, user namespaces denied): a long terminal killed and released" { acp_test container kill-release; }

# The first variant: the rest.
@test "acp: everything else passes through unchanged, both ways" { acp_test bwrap-root pass-through; }
@test "acp: the Permissions selector published, switched (both knob events), refreshed in full" { acp_test bwrap-root selector; }
@test "acp: a change from ward session is sent; custom reported, never set; unknown presets rejected" { acp_test bwrap-root selector-elsewhere; }
@test "acp: session/load of a known id folds its log" { acp_test bwrap-root load; }
@test "acp: an agent answering session/new with a known id does not get that session's sandbox" { acp_test bwrap-root new-reuse; }
@test "acp: outputByteLimit keeps the end at a character boundary" { acp_test bwrap-root output-limit; }
@test "acp: a terminal embedded in a tool call is shown as its output" { acp_test bwrap-root embed; }
@test "acp: a network escalation allowed once for the refused host" { acp_test bwrap-root network-escalation; }
@test "acp: an escalation rejected" { acp_test bwrap-root escalation-reject; }
@test "acp: an escalation cancelled, and one withdrawn by a kill" { acp_test bwrap-root escalation-cancel; }
@test "acp: the agent dying mid-call" { acp_test bwrap-root agent-dies; }
@test "acp: the editor's end of input" { acp_test bwrap-root editor-eof; }
@test "acp: malformed input from the agent" { acp_test bwrap-root malformed-agent; }
@test "acp: malformed input from the editor" { acp_test bwrap-root malformed-editor; }
@test "acp: the agent itself confined under its ceiling" { acp_test bwrap-root agent-ceiling; }
@test "acp: the command line" { acp_test bwrap-root cli; }
