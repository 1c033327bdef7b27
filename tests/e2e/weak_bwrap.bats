#!/usr/bin/env bats
# shellcheck shell=bats
#
# Defense in depth (issue 9): every bwrap run carries ward's Landlock layer
# inside (landlock-run with the same roots, its scopes and the seccomp
# supervisor). This file runs a ward built with -DWARD_TEST_WEAK_BWRAP
# (`make check` builds build/tests/weak/ward): its bwrap profile binds the
# whole host read-write and leaves the host sysctls writable. The
# must-vectors still hold, because the inner layer holds them alone. The
# first test shows the weakened profile really is a hole without the inner
# layer, so the others cannot pass by accident.

load helpers

WEAK=${WEAK_WARD:-$E2E_BUILD/tests/weak/ward}
SYSCTL=/proc/sys/vm/swappiness

setup() {
	e2e_setup
	# A copy the sandbox can read wherever the tree is (a checkout under
	# /tmp is hidden by bwrap's own /tmp in read-only mode).
	cp "$E2E_ROOT/tests/e2e/redteam_root.py" "$OUT_DIR/"
	RT_PY=$OUT_DIR/redteam_root.py
	[ -x "$WEAK" ] || skip "$WEAK is not built (make $WEAK)"
	bwrap --ro-bind / / --unshare-user -- true 2>/dev/null ||
		skip "bwrap cannot create a sandbox here"
	"$LAUNCHER" --probe >/dev/null 2>&1 || skip "Landlock is not usable here"
	WARD=$WEAK
	RT_ABS=ward-weak-$E2E_TAG
}

teardown() {
	e2e_teardown
}

start_daemon() {
	local where=$1 log=$E2E_CAP/daemon-$RANDOM
	"${E2E_AS[@]}" "$PY" "$RT_PY" serve "$where" >"$log" 2>&1 &
	E2E_PIDS+=($!)
	for _ in $(seq 100); do
		grep -q ready "$log" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "the daemon at $where did not start: $(cat "$log")"
}

vec() {
	sed -n "s/^$1=//p" <<<"$output" | head -n 1
}

assert_vec() {
	local v
	v=$(vec "$1")
	[ "$v" = "$2" ] || fail "$1: expected $2, got '${v:-nothing}'"
}

@test "weak bwrap: the weakened profile alone is a hole (the control)" {
	cd "$WS"
	run "$WARD" confine --json --runner bwrap --mode read-only \
		--workspace "$WS" -- sh -c "echo pwn >$OUT_DIR/planted"
	[ "$status" -eq 0 ] || fail "$output"
	# The bwrap part only: everything before the inner landlock-run.
	local -a argv
	mapfile -t argv < <(jq -r '.argv as $a |
		($a | index("--")) as $i | $a[0:$i+1] + $a[$i+1:][
		($a[$i+1:] | index("--")) + 1:] | .[]' <<<"$output")
	[ "${argv[1]}" = --bind ] || fail "not the weak build: ${argv[*]}"
	"${argv[@]}"
	[ -f "$OUT_DIR/planted" ] || fail "the weak profile did not let it through"
}

# weak_case WHO MODE: writes, sysctls, metadata, sockets, abstract sockets
# and cgroups, with nothing but the inner layer in the way.
weak_case() {
	local who=$1 mode=$2
	[ "$who" = nobody ] && as_nobody
	echo victim >"$OUT_DIR/victim"
	ln -s "$OUT_DIR/victim" "$WS/link"
	[ "$who" = nobody ] && chown 65534:65534 "$OUT_DIR/victim"
	start_daemon "$OUT_DIR/daemon.sock"
	start_daemon "$WS/old.sock"
	start_daemon "@$RT_ABS"
	cd "$WS"
	# --network on: the network knob's off would hide the host's abstract
	# sockets behind bwrap's own network namespace; on shares it, so
	# only the Landlock layer stands in the way (as for every vector).
	ward_run bwrap "$mode" --network on -- sh -c "
		echo pwn >$OUT_DIR/planted; echo \"write=\$?\"
		echo pwn >/etc/ward-weak-$E2E_TAG; echo \"etc=\$?\"
		v=\$(cat $SYSCTL); echo \"\$v\" >$SYSCTL; echo \"sysctl=\$?\"
		exec $PY $RT_PY probe $OUT_DIR/victim - $OUT_DIR/daemon.sock \
			$RT_ABS $WS/old.sock $WS/link"
	rm -f "/etc/ward-weak-$E2E_TAG"
	assert_status 0
	[ ! -e "$OUT_DIR/planted" ] || fail "a write outside the roots went through"
	assert_vec write 2
	assert_vec etc 2
	assert_vec sysctl 2
	local v
	for v in chmod fchmod chown setxattr utime setflags fssetxattr; do
		assert_vec "${v}_out" EACCES
	done
	assert_vec chmod_link EACCES
	assert_vec connect_out EACCES
	assert_vec connect_old EACCES
	assert_vec connect_abstract EPERM
	assert_vec cgroup refused
}

@test "weak bwrap: the Landlock layer holds every must-vector (root, read-only)" {
	weak_case root read-only
}
@test "weak bwrap: the Landlock layer holds every must-vector (root, workspace-write)" {
	weak_case root workspace-write
}
@test "weak bwrap: the Landlock layer holds every must-vector (nobody, read-only)" {
	weak_case nobody read-only
}
@test "weak bwrap: the Landlock layer holds every must-vector (nobody, workspace-write)" {
	weak_case nobody workspace-write
}

@test "weak bwrap: the workspace stays writable (the inner layer is not a lockout)" {
	cd "$WS"
	ward_run bwrap workspace-write -- sh -c 'echo ok >inside && chmod 600 inside && cat inside'
	assert_status 0
	[ "$output" = ok ] || fail "$output"
}
