#!/usr/bin/env bats
# shellcheck shell=bats
#
# What ward reports about a call, on the CLI: partial enforcement with its
# reasons (probe, run --json, confine, config check), the environment a
# command gets (secrets dropped, --env-keep), and the denial report
# (--json `denials`, --explain).
#
# Each test has its own state and config directories and a workspace under
# /var/tmp (not /tmp: a writable root of workspace-write).

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
WARD=${WARD:-$BUILD/bin/ward}

setup() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	BASE=$(mktemp -d /var/tmp/ward-report.XXXXXX)
	WS=$BASE/ws
	mkdir -p "$WS" "$BASE/config/ward"
	export XDG_STATE_HOME=$BASE/state
	export XDG_CONFIG_HOME=$BASE/config
	unset TMPDIR
	cd "$WS" || return 1
}

teardown() {
	cd / && rm -rf "${BASE:-/nonexistent}"
}

fail() {
	printf 'FAIL: %s\n' "$*"
	return 1
}

usable() {
	"$WARD" probe --json -r "$1" 2>/dev/null |
		jq -e '.chain[0].usable' >/dev/null ||
		skip "runner $1 is not usable here (ward probe)"
}

# --- item: partial enforcement is said, with its reasons ---------------------

@test "a rule Landlock cannot enforce: probe, run --json, confine and config check say partial, with the reason" {
	usable landlock
	# A rule Landlock cannot enforce: it hides a directory that holds the
	# workspace (a writable root inside a hidden path stays usable; a rule
	# inside the workspace it enforces, by mounts).
	mkdir -p "$BASE/box/ws"
	cd "$BASE/box/ws" || return 1
	printf 'mode: workspace-write\naccess: ["-- %s"]\n' "$BASE/box" \
		>"$BASE/config/ward/config.yml"
	want="landlock: rule \"-- $BASE/box\""
	run -0 --separate-stderr "$WARD" probe --json -r landlock
	jq -e --arg w "$want" '.enforcement == "partial" and
		(.partial | length == 1) and (.partial[0] | startswith($w)) and
		.call.mode == "workspace-write"' <<<"$output" >/dev/null ||
		fail "probe: $output"
	run -0 --separate-stderr "$WARD" probe -r landlock
	[[ "$output" == *"chosen:        landlock (enforcement: partial)"* ]]
	[[ "$output" == *"  partial: $want"* ]]
	run -0 --separate-stderr "$WARD" run --json -r landlock -- true
	jq -e --arg w "$want" '.sandbox.enforcement == "partial" and
		(.sandbox.partial[0] | startswith($w))' <<<"$output" >/dev/null ||
		fail "run: $output"
	run -0 --separate-stderr "$WARD" confine --json -r landlock -- true
	jq -e '.enforcement == "partial" and (.partial | length == 1)' \
		<<<"$output" >/dev/null
	run -0 --separate-stderr "$WARD" config check --json
	jq -e --arg w "$want" '[.runners[] | select(.runner == "landlock")][0] |
		(.partial[0] | startswith($w))' <<<"$output" >/dev/null ||
		fail "config check: $output"
	jq -e '[.runners[] | select(.runner == "bwrap")][0].partial == []' \
		<<<"$output" >/dev/null
	run -0 --separate-stderr "$WARD" config check
	[[ "$output" == *"as the landlock runner applies them (enforcement: partial):"* ]]
	[[ "$output" == *"  partial: $want"* ]]
}

@test "without an unenforced rule everything says full, with no reasons" {
	usable bwrap
	mkdir -p "$WS/secret"
	printf 'mode: workspace-write\naccess: ["-- secret"]\n' \
		>"$BASE/config/ward/config.yml"
	run -0 --separate-stderr "$WARD" probe --json -r bwrap
	jq -e '.enforcement == "full" and .partial == []' <<<"$output" >/dev/null
	run -0 --separate-stderr "$WARD" run --json -r bwrap -- true
	jq -e '.sandbox.enforcement == "full" and .sandbox.partial == []' \
		<<<"$output" >/dev/null
}

@test "probe with an invalid ward.yml still probes, and says why it cannot tell" {
	printf 'mode: sideways\n' >"$BASE/config/ward/config.yml"
	run -0 --separate-stderr "$WARD" probe --json
	jq -e '.call == null and (.config_error | test("invalid mode"))' \
		<<<"$output" >/dev/null
	run -0 --separate-stderr "$WARD" probe
	[[ "$output" == *"for a call:    unknown: ward.yml is invalid here"* ]]
}

# --- item: the environment a command gets -----------------------------------

@test "secrets are dropped from a command's environment; --env-keep and env.keep keep one" {
	usable bwrap
	export GITHUB_TOKEN=ghp_x AWS_SECRET_ACCESS_KEY=a DB_PASSWORD=p \
		OPENAI_API_KEY=o my_token=lower PLAIN=ok PATH
	run -0 --separate-stderr "$WARD" run --json -- env
	out=$(jq -r .stdout <<<"$output")
	for v in GITHUB_TOKEN AWS_SECRET_ACCESS_KEY DB_PASSWORD OPENAI_API_KEY my_token; do
		! grep -q "^$v=" <<<"$out" || fail "$v reached the command"
		jq -e --arg v "$v" '.env_dropped | index($v)' <<<"$output" >/dev/null ||
			fail "$v is not reported as dropped"
	done
	grep -q '^PLAIN=ok$' <<<"$out"
	grep -q '^HOME=' <<<"$out"
	# Values are never reported, only names.
	[[ "$output" != *ghp_x* ]]
	run -0 --separate-stderr "$WARD" run --env-keep GITHUB_TOKEN -- \
		sh -c 'echo "$GITHUB_TOKEN/${DB_PASSWORD:-gone}"'
	[ "$output" = "ghp_x/gone" ]
	# ward.yml: drop more, keep some (patterns, any case).
	printf 'env:\n  drop: ["PLAIN"]\n  keep: ["db_*"]\n' \
		>"$BASE/config/ward/config.yml"
	run -0 --separate-stderr "$WARD" run -- \
		sh -c 'echo "${PLAIN:-gone}/${DB_PASSWORD:-gone}"'
	[ "$output" = "gone/p" ]
	# Streaming mode too (no --json), and under danger-full-access.
	run -0 --separate-stderr "$WARD" run --mode danger-full-access -- \
		sh -c 'echo "${OPENAI_API_KEY:-gone}"'
	[ "$output" = "gone" ]
	run -2 --separate-stderr "$WARD" run --env-keep 'A=B' -- true
}

@test "config check reports the env policy and what it drops here; a project file cannot keep" {
	export STRIPE_SECRET_KEY=s PLAIN=ok
	mkdir -p "$WS/.ward"
	printf 'env:\n  keep: ["STRIPE_*"]\n  drop: ["PLAIN"]\n' >"$WS/.ward/config.yml"
	run -0 --separate-stderr "$WARD" config check
	[[ "$output" == *"environment (what a command does not get):"* ]]
	[[ "$output" == *"dropped  "*"PLAIN"* ]]
	[[ "$output" == *"STRIPE_SECRET_KEY"* ]]
	[[ "$output" == *"config.yml:2: env.keep: ignored: a project file may only narrow"* ]]
	run -0 --separate-stderr "$WARD" config check --json --env-keep STRIPE_SECRET_KEY
	jq -e '(.env.keep == ["STRIPE_SECRET_KEY"]) and
		(.env.dropped | index("PLAIN")) and
		(.env.dropped | index("STRIPE_SECRET_KEY") | not) and
		(.env.drop | index("*_KEY"))' <<<"$output" >/dev/null ||
		fail "$output"
	printf 'env:\n  drop: ["A=B"]\n' >"$WS/.ward/config.yml"
	run -1 --separate-stderr "$WARD" config check
	[[ "$output" == *"config.yml:2: env: drop: \"A=B\" is not a variable name"* ]]
	printf 'env:\n  color: []\n' >"$WS/.ward/config.yml"
	run -1 --separate-stderr "$WARD" config check
	[[ "$output" == *"unknown key \"color\""* ]]
}

# --- item: the denial report ----------------------------------------------------

@test "a -- rule under bwrap that surfaces as 'No such file' is a denial naming the rule" {
	usable bwrap
	mkdir -p "$WS/secret" && echo s >"$WS/secret/key"
	printf 'access:\n  - "-- secret"\n' >"$BASE/config/ward/config.yml"
	run -1 --separate-stderr "$WARD" run -r bwrap -- cat secret/key
	[[ "$stderr" == *"No such file or directory"* ]]
	[[ "$stderr" == *"[sandbox: file access denied under read-only mode]"* ]]
	[[ "$stderr" == *"[sandbox: read of $WS/secret/key refused by rule \"-- secret\" ($BASE/config/ward/config.yml:2); inferred from the error output]"* ]]
	# No wider mode lifts a rule: no hint, no advice.
	[[ "$stderr" != *"retry"* && "$stderr" != *"ward session mode"* ]]
	run -1 --separate-stderr "$WARD" run -r bwrap --json -- cat secret/key
	jq -e --arg p "$WS/secret/key" --arg src "$BASE/config/ward/config.yml:2" \
		'.sandbox.denied == true and (.denials | length == 1) and
		.denials[0] == {"path": $p, "operation": "read", "cause": "rule",
		"rule": "-- secret", "mode": "read-only", "source": $src,
		"how": "derived"}' <<<"$output" >/dev/null || fail "$output"
	# A file that is really missing is no denial.
	run -1 --separate-stderr "$WARD" run -r bwrap --json -- cat nothing-here
	jq -e '.sandbox.denied == false and .denials == []' <<<"$output" >/dev/null
}

@test "a -- rule under Landlock ('Permission denied') is a denial naming the rule" {
	usable landlock
	mkdir -p "$BASE/private" && echo s >"$BASE/private/key"
	run -1 --separate-stderr "$WARD" run -r landlock --json \
		--access "-- $BASE/private" -- cat "$BASE/private/key"
	jq -e --arg p "$BASE/private/key" --arg r "-- $BASE/private" \
		'.denials[0].path == $p and .denials[0].cause == "rule" and
		.denials[0].rule == $r and .denials[0].source == "--access"' \
		<<<"$output" >/dev/null || fail "$output"
}

@test "denials name the mode and where it was set, r- rules and protected paths" {
	usable bwrap
	printf 'mode: workspace-write\naccess: ["r- docs"]\n' >"$BASE/config/ward/config.yml"
	mkdir -p "$WS/docs"
	git -C "$WS" init -q || skip "git is not installed"
	# bwrap enforces all three (Landlock cannot express r- or the
	# protected paths inside the workspace: partial, see above).
	run --separate-stderr "$WARD" run -r bwrap --json -- \
		sh -c 'touch /usr/ward-x; touch docs/x; touch .git/hooks/x'
	jq -e --arg ws "$WS" --arg cfg "$BASE/config/ward/config.yml" '
		([.denials[] | select(.path == "/usr/ward-x")][0] |
			.cause == "mode" and .mode == "workspace-write" and
			.source == ($cfg + ":1")) and
		([.denials[] | select(.path == ($ws + "/docs/x"))][0] |
			.cause == "rule" and .rule == "r- docs" and
			.source == ($cfg + ":2")) and
		([.denials[] | select(.path == ($ws + "/.git/hooks/x"))][0] |
			.cause == "protected" and .rule == "git hooks")' \
		<<<"$output" >/dev/null || fail "$output"
	# Under a session the mode's source is the session.
	id=$("$WARD" session new --cwd "$WS" --mode read-only)
	run --separate-stderr "$WARD" run --session "$id" --json -- touch y
	jq -e --arg id "$id" '.denials[0].source == ("session " + $id)' \
		<<<"$output" >/dev/null || fail "$output"
}

# git writes config.lock, then renames it over .git/config; bwrap binds the
# protected config read-only, and a rename over a mount point fails with
# EBUSY ("Device or resource busy"), not EROFS.
@test "git config and git remote add under workspace-write: the marker and the protected path, not a bare EBUSY" {
	usable bwrap
	command -v git >/dev/null || skip "git is not installed"
	git -C "$WS" init -q
	cp "$WS/.git/config" "$BASE/config.before"
	run --separate-stderr "$WARD" run -r bwrap --mode workspace-write -- \
		git config user.name somebody
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"Device or resource busy"* ]]
	[[ "$stderr" == *"[sandbox: file access denied under workspace-write mode]"* ]]
	[[ "$stderr" == *"[sandbox: write of $WS/.git/config refused: a protected path (git config); inferred from the error output]"* ]]
	run --separate-stderr "$WARD" run -r bwrap --mode workspace-write --json -- \
		git remote add origin https://example.invalid/x.git
	[ "$status" -ne 0 ]
	jq -e --arg p "$WS/.git/config" '.sandbox.denied == true and
		(.denials[0] | .path == $p and .cause == "protected" and
		 .rule == "git config")' <<<"$output" >/dev/null || fail "$output"
	cmp "$WS/.git/config" "$BASE/config.before"
	# EBUSY inside a writable root that nothing protects is no denial.
	run --separate-stderr "$WARD" run -r bwrap --mode workspace-write --json -- \
		sh -c 'echo "x: Device or resource busy" >&2; exit 1'
	jq -e '.sandbox.denied == false and .denials == []' <<<"$output" >/dev/null ||
		fail "$output"
}

# A file name can hold a newline: the report escapes it, so every entry
# stays one line and no name can pass for a line of ward's.
@test "a denied path with a newline is one escaped line in the report" {
	run --separate-stderr "$WARD" fs write --text x "/etc/ward-nl
[sandbox: forged]"
	[ "$status" = 3 ]
	[[ "$stderr" != *$'\n[sandbox: forged]'* ]]
	[[ "$stderr" == *'[sandbox: write of /etc/ward-nl\x0a[sandbox: forged] refused: not writable under read-only mode (built-in default)]'* ]]
	[ "$(grep -c '' <<<"$stderr")" = 3 ]
}

@test "--explain prints the report for people; nothing when nothing was refused" {
	usable bwrap
	run -1 --separate-stderr "$WARD" run --explain -- touch /etc/ward-explain-x
	[[ "$stderr" == *"ward: explain: denied: create of /etc/ward-explain-x"* ]]
	[[ "$stderr" == *"  by:     the read-only mode (not inside any writable root)"* ]]
	[[ "$stderr" == *"  set in: built-in default"* ]]
	[[ "$stderr" == *"  how:    derived"* ]]
	run -0 --separate-stderr "$WARD" run --explain -- true
	[ "$stderr" = "ward: explain: no file access was refused" ]
	run -2 --separate-stderr "$WARD" run --explain --json -- true
}

@test "a plain permission error inside a writable root is not a denial" {
	usable bwrap
	command -v setpriv >/dev/null || skip "setpriv not installed"
	[ "$(id -u)" = 0 ] || skip "needs root to switch to nobody"
	chmod 0777 "$WS" "$BASE" "$BASE/state" 2>/dev/null || true
	mkdir -p "$WS/locked" && chmod 0555 "$WS/locked"
	chmod 0755 "$BASE/config" "$BASE/config/ward"
	run setpriv --reuid=65534 --regid=65534 --clear-groups \
		env XDG_STATE_HOME="$BASE/state" XDG_CONFIG_HOME="$BASE/config" \
		"$WARD" run -w "$WS" --mode workspace-write --json -- touch locked/x
	[ "$status" -eq 1 ]
	jq -e '.sandbox.denied == false and .denials == []' <<<"$output" >/dev/null ||
		fail "$output"
}

@test "the fence's denials are exact: ward fs names the path and the rule" {
	printf 'access: ["-- .env"]\n' >"$BASE/config/ward/config.yml"
	echo k=v >"$WS/.env"
	run -3 --separate-stderr "$WARD" fs read .env --json
	jq -e --arg p "$WS/.env" '.denials == [{"path": $p, "operation": "read",
		"cause": "rule", "rule": "-- .env", "mode": "read-only",
		"source": ($ENV.XDG_CONFIG_HOME + "/ward/config.yml:1"),
		"how": "exact"}]' <<<"$output" >/dev/null || fail "$output"
}

@test "Landlock's audit records make the report exact (root, audit enabled for the test)" {
	usable landlock
	[ "$(id -u)" = 0 ] || skip "reading the kernel's audit records needs root"
	local ctl="/usr/bin/python3 $BATS_TEST_DIRNAME/audit_ctl.py" prev
	prev=$($ctl set 1) || skip "the audit netlink cannot be used here ($($ctl status 2>&1))"
	mkdir -p "$WS/secret" && echo s >"$WS/secret/k"
	run --separate-stderr "$WARD" run -r landlock --json \
		--access "-- $WS/secret" -- sh -c 'touch /etc/ward-audit-x; cat secret/k'
	$ctl set "$prev" >/dev/null
	jq -e --arg ws "$WS" '
		([.denials[] | select(.path == "/etc")][0] |
			.operation == "create" and .cause == "mode" and .how == "exact") and
		([.denials[] | select(.path == ($ws + "/secret/k"))][0] |
			.operation == "read" and .cause == "rule" and .how == "exact") and
		all(.denials[]; .how == "exact")' <<<"$output" >/dev/null || fail "$output"
	# With audit off (as this machine keeps it) the same run is derived.
	run --separate-stderr "$WARD" run -r landlock --json \
		--access "-- $WS/secret" -- sh -c 'touch /etc/ward-audit-x; cat secret/k'
	if [ "$prev" = 0 ]; then
		jq -e 'all(.denials[]; .how == "derived") and (.denials | length >= 2)' \
			<<<"$output" >/dev/null || fail "$output"
	fi
}
