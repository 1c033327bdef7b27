#!/usr/bin/env bats
# shellcheck shell=bats
#
# Rules that scale (issue 18): 10,000 literal `--` rules are accepted and
# enforced on both runners, outside the writable roots (read-only: the
# workspace itself) and inside them (workspace-write), as root and as
# nobody. A sample of the hidden files is read from inside the sandbox;
# each must be refused, and a file beside them no rule names must stay
# readable. (bwrap refused more than 4,096 such paths before: each was one
# of its own mounts, and bwrap re-reads its mount table for every mount.)

load helpers

NRULES=10000

setup() {
	e2e_setup
	# The files and the rules naming each of them, in a --config file.
	mkdir "$WS/big"
	(cd "$WS/big" && seq -f 'f%g' 1 "$NRULES" | xargs touch)
	for f in f1 f5000 f9999 f$NRULES; do
		echo secret >"$WS/big/$f"
	done
	echo visible >"$WS/keep"
	CFG=$OUT_DIR/rules.yml
	{
		echo "access:"
		seq -f "  - \"-- $WS/big/f%g\"" 1 "$NRULES"
	} >"$CFG"
	chmod 0644 "$CFG"
}

teardown() {
	# A test that moved the workspace deeper removes it from the top.
	WS=${WS_TOP:-$WS}
	e2e_teardown
}

# check_scale RUNNER MODE: the sample is refused, keep is readable.
check_scale() {
	local runner=$1 mode=$2 f
	require_runner_usable "$runner"
	ward_run "$runner" "$mode" --config "$CFG" -- sh -c '
		for f in f1 f5000 f9999 f10000; do
			if cat "big/$f" >/dev/null 2>&1; then echo "READ $f"
			else echo "DENIED $f"; fi
		done
		cat keep'
	[ "$status" = 0 ] || fail "exit $status: $last_err"
	for f in f1 f5000 f9999 f$NRULES; do
		[[ "$output" == *"DENIED $f"* ]] ||
			fail "$runner $mode: $f is readable: $output"
	done
	[[ "$output" == *visible* ]] || fail "keep is not readable: $output"
	[[ "$stderr" != *"refuses"* ]] || fail "refused: $stderr"
}

@test "bwrap: 10,000 -- rules outside the writable roots are accepted and enforced" {
	check_scale bwrap read-only
}

@test "bwrap: 10,000 -- rules inside a writable root are accepted and enforced" {
	check_scale bwrap workspace-write
}

@test "landlock: 10,000 -- rules outside the writable roots are accepted and enforced" {
	check_scale landlock read-only
}

@test "landlock: 10,000 -- rules inside a writable root are accepted and enforced" {
	check_scale landlock workspace-write
}

@test "bwrap and landlock as nobody: 10,000 -- rules are accepted and enforced" {
	as_nobody
	check_scale bwrap read-only
	check_scale landlock workspace-write
}

@test "bwrap: a -- rule on a parent of the workspace stays a denial naming the rule" {
	# Hidden paths outside the roots went to the Landlock layer inside
	# bwrap; one that holds the workspace stays bwrap's own, whose
	# failing chdir is reported as the rule's denial (not as a runner
	# failure).
	require_runner_usable bwrap
	local parent=$WS/outer
	mkdir "$parent"
	WS_TOP=$WS
	WS=$parent/ws
	mkdir "$WS"
	ward_run bwrap read-only --access "-- $parent" -- true
	[ "$status" != 0 ] && [ "$status" != 125 ] ||
		fail "exit $status: $stderr"
	[[ "$stderr" == *"refused by rule \"-- $parent\""* ]] ||
		fail "no denial naming the rule: $stderr"
	[[ "$stderr" != *"sandbox unavailable"* ]] || fail "$stderr"
}
