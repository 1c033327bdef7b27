#!/usr/bin/env bats
# shellcheck shell=bats
#
# The runner chain on the real system: fallback from a broken bwrap to
# Landlock, fail-closed (exit 125, nothing run) when no runner is usable or
# the forced runner is broken, and the launcher's own fatal errors.
#
# A runner is broken by shadowing it: a fake `bwrap` first in PATH (ward
# resolves bwrap from PATH), or a copy of ward in a private directory with a
# fake landlock-run beside it (ward looks for the launcher beside itself).

load helpers

E2E_VARIANT=chain

setup() {
	e2e_setup
	SHIM=$(mktemp -d /var/tmp/ward-e2e-shim.XXXXXX)
}

teardown() {
	e2e_teardown
	rm -rf "$SHIM"
}

# A bwrap that fails the way a real one does when it cannot set up.
break_bwrap() {
	mkdir -p "$SHIM/path"
	cat >"$SHIM/path/bwrap" <<EOF
#!/bin/sh
echo ran >"$OUT_DIR/fake-bwrap-ran"
echo "bwrap: No permissions to creating new namespace (fake)" >&2
exit 1
EOF
	chmod 0755 "$SHIM/path/bwrap"
	export PATH="$SHIM/path:$PATH"
}

# A copy of ward with a launcher beside it that always fails.
break_launcher() {
	mkdir -p "$SHIM/bin"
	cp "$WARD" "$SHIM/bin/ward"
	# A launcher on a kernel without Landlock: it confines nothing, but
	# it still keeps an unconfined command (--unconfined needs no
	# Landlock), as danger-full-access runs it.
	cat >"$SHIM/bin/landlock-run" <<EOF
#!/bin/sh
echo ran >"$OUT_DIR/fake-launcher-ran"
case " \$* " in
*" --unconfined "*)
	while [ \$# -gt 0 ] && [ "\$1" != -- ]; do shift; done
	shift
	exec "\$@" ;;
esac
echo "landlock-run: Landlock is not supported by this kernel (fake)" >&2
exit 125
EOF
	chmod 0755 "$SHIM/bin/landlock-run"
	WARD=$SHIM/bin/ward
}

assert_refused_unconfined() {
	assert_status 125
	case "$stderr" in
	*unconfined*) ;;
	*) fail "the error does not say ward refused to run unconfined" ;;
	esac
	grep -q '^Hint:' "$E2E_CAP/stderr" || fail "no 'Hint:' line"
}

json_runner() {
	jq -r .sandbox.runner <<<"$output"
}

@test "chain: auto picks bwrap when it works" {
	command -v jq >/dev/null || skip "jq not installed"
	ward_run auto workspace-write --json -- touch "$WS/made"
	record "runner=$(json_runner)"
	assert_status 0
	[ "$(json_runner)" = bwrap ] || fail "runner $(json_runner), expected bwrap"
	assert_exists "$WS/made"
}

@test "chain: auto with bwrap broken (PATH shim) falls back to landlock" {
	command -v jq >/dev/null || skip "jq not installed"
	break_bwrap
	ward_run auto workspace-write --json -- touch "$WS/made"
	record "runner=$(json_runner), exit $status"
	assert_status 0
	[ "$(json_runner)" = landlock ] ||
		fail "runner $(json_runner), expected landlock"
	assert_exists "$WS/made"
	# And the fallback still confines.
	ward_run auto workspace-write -- touch "$OUT_DIR/escaped"
	assert_denied "$OUT_DIR/escaped" workspace-write
}

@test "chain: auto with bwrap and landlock-run broken: exit 125, nothing ran" {
	break_bwrap
	break_launcher
	ward_run auto workspace-write -- touch "$WS/made"
	record "exit $status, command ran: $([ -e "$WS/made" ] && echo yes || echo no)"
	assert_absent "$WS/made"
	assert_refused_unconfined
}

@test "chain: forced bwrap, bwrap broken: exit 125, nothing ran" {
	break_bwrap
	ward_run bwrap workspace-write -- touch "$WS/made"
	record "exit $status, command ran: $([ -e "$WS/made" ] && echo yes || echo no)"
	assert_absent "$WS/made"
	assert_status 125
}

@test "chain: forced landlock-run, launcher broken: exit 125, nothing ran" {
	break_launcher
	ward_run landlock-run workspace-write -- touch "$WS/made"
	record "exit $status, command ran: $([ -e "$WS/made" ] && echo yes || echo no)"
	assert_absent "$WS/made"
	assert_status 125
}

@test "chain: forced landlock-run, launcher missing: exit 125, nothing ran" {
	mkdir -p "$SHIM/bin"
	cp "$WARD" "$SHIM/bin/ward"
	WARD=$SHIM/bin/ward
	# ward would find the installed launcher instead; then this case
	# cannot be built here.
	if [ -e /usr/local/libexec/ward/landlock-run ] ||
		[ -e /usr/libexec/ward/landlock-run ]; then
		skip "an installed landlock-run would be used"
	fi
	ward_run landlock-run workspace-write -- touch "$WS/made"
	record "exit $status, command ran: $([ -e "$WS/made" ] && echo yes || echo no)"
	assert_absent "$WS/made"
	assert_status 125
}

# The provider refuses a bwrap found inside the workspace: a confined
# command could otherwise plant one there for the next run to execute
# unconfined.
@test "chain: a bwrap planted in the workspace (first in PATH) is not used" {
	mkdir -p "$WS/bin"
	cat >"$WS/bin/bwrap" <<EOF
#!/bin/sh
echo ran >"$OUT_DIR/planted-bwrap-ran"
exec /usr/bin/bwrap "\$@"
EOF
	chmod 0755 "$WS/bin/bwrap"
	PATH="$WS/bin:$PATH" ward_run auto workspace-write -- touch "$WS/made"
	record "planted bwrap ran: $([ -e "$OUT_DIR/planted-bwrap-ran" ] && echo yes || echo no), exit $status"
	assert_absent "$OUT_DIR/planted-bwrap-ran"
}

@test "chain: danger-full-access needs no sandbox (runs with bwrap broken and no Landlock)" {
	break_bwrap
	break_launcher
	ward_run auto danger-full-access -- touch "$OUT_DIR/made"
	record "exit $status, command ran: $([ -e "$OUT_DIR/made" ] && echo yes || echo no)"
	assert_status 0
	assert_exists "$OUT_DIR/made"
}

@test "chain: an unknown mode is refused, nothing ran" {
	ward_run auto no-such-mode -- touch "$WS/made"
	record "exit $status, command ran: $([ -e "$WS/made" ] && echo yes || echo no)"
	assert_failed
	assert_absent "$WS/made"
}

@test "chain: launcher with a missing --rw path: exit 125, nothing ran" {
	"$LAUNCHER" --ro / --rw "$OUT_DIR/missing" -- touch "$WS/made" \
		>"$E2E_CAP/stdout" 2>"$E2E_CAP/stderr" && status=0 || status=$?
	stderr=$(cat "$E2E_CAP/stderr")
	record "exit $status: $(head -n 1 "$E2E_CAP/stderr")"
	assert_status 125
	assert_absent "$WS/made"
	grep -q '^landlock-run: ' "$E2E_CAP/stderr" || fail "no landlock-run: line"
}

@test "chain: launcher bad usage (unknown option, no command): exit 125" {
	local s1 s2
	"$LAUNCHER" --no-such-option -- touch "$WS/made" 2>/dev/null && s1=0 || s1=$?
	"$LAUNCHER" --ro / 2>/dev/null && s2=0 || s2=$?
	record "unknown option: exit $s1; no command: exit $s2"
	[ "$s1" = 125 ] || fail "unknown option exited $s1"
	[ "$s2" = 125 ] || fail "no command exited $s2"
	assert_absent "$WS/made"
}
