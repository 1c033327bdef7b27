#!/usr/bin/env bats
# shellcheck shell=bats
#
# Red team, the seal (issue 16, items 1, 2, 3 and the network part of 5):
# the mechanisms themselves, attacked on every Linux runner (bwrap, whose
# Landlock layer inside carries the same supervisor, and Landlock through
# landlock-run), as root and as the unprivileged user nobody, through
# `ward run` and `ward mcp`. tests/e2e/sealhelper.c does the attacking.
#
#   the supervisor never continues a call it judged
#       a racing thread swaps the descriptor number (dup2) under fchmod,
#       fchown, fsetxattr, fremovexattr, FS_IOC_SETFLAGS, futimens and the
#       AT_EMPTY_PATH forms; rewrites the path buffer under chmod,
#       utimensat, setxattr, lsetxattr, removexattr, fchmodat2/utimensat/
#       fchownat(fd, buf, AT_EMPTY_PATH); swaps a memfd with a file in
#       read-only mode; rewrites the sockaddr and swaps the socket under
#       connect, sendto and sendmsg. Nothing outside may change (its ctime
#       is the witness) and no daemon outside may see a connection. On
#       bwrap its read-only mounts refuse those writes by themselves, so
#       the file races run again under the ward of weak_bwrap.bats (host
#       bound read-write): the Landlock layer inside must hold them alone.
#   provenance, not time
#       a host daemon's socket created in /tmp after the call began is
#       refused; the command's own socket works.
#   the proxy as an object
#       listeners on 127.0.0.2, [::] and 0.0.0.0 at the proxy's port get
#       no connection; the proxy itself does.
#   network off
#       curl, wget and git fail at once (bounded waits, no timing
#       asserts); vsock and non-route netlink are refused on both runners.
#
# The container lane (make check-container) runs this file again with user
# namespaces denied: only Landlock runs there, and bwrap cases skip.

load helpers

MCPBOX=$E2E_ROOT/tests/e2e/mcp_box.py

require_runner() {
	require_runner_usable "$1"
}

setup() {
	e2e_setup
	[ -x "$E2E_BUILD/tests/sealhelper" ] ||
		skip "$E2E_BUILD/tests/sealhelper is not built (make check builds it)"
	# A copy the sandbox can run wherever the tree is (a checkout under
	# /tmp is hidden by bwrap's own /tmp in read-only mode).
	SEAL=$OUT_DIR/sealhelper
	cp "$E2E_BUILD/tests/sealhelper" "$SEAL"
	rt_home seal
	unset HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY http_proxy https_proxy all_proxy no_proxy
}

teardown() {
	e2e_teardown
	rm -rf "$RT_HOME" "$RT_STATE" "$HOST_TMP"
}

# A victim outside every root and a file inside, both the acting user's,
# so that DAC alone would allow every change.
victims() {
	echo victim >"$OUT_DIR/victim"
	echo mine >"$WS/mine"
	if [ "$1" = nobody ]; then
		chown 65534:65534 "$OUT_DIR/victim" "$WS/mine"
	fi
	touch -d 2001-01-01 "$OUT_DIR/victim"
	sleep 0.01 # the ctime below must differ from any later change
	VICTIM_BEFORE=$(stat -c '%a %u %g %Y %Z' "$OUT_DIR/victim")
}

assert_victim_kept() {
	local now
	now=$(stat -c '%a %u %g %Y %Z' "$OUT_DIR/victim")
	[ "$now" = "$VICTIM_BEFORE" ] ||
		fail "the victim outside changed: $now (was $VICTIM_BEFORE)"
	[ -z "$(getfattr -d "$OUT_DIR/victim" 2>/dev/null)" ] ||
		fail "the victim got an xattr"
}

assert_raced() { # the race ran, and the inside target was hit
	grep -q 'allowed=[1-9]' <<<"$output" ||
		fail "nothing was allowed (the race did not run): $output"
}

# --- the supervisor never continues a call it judged ------------------------

# The races run 4 s each: against a supervisor that continues, the
# descriptor swap won in 3 of 4 runs of 2 s on this machine, and in 5 of 5
# runs of 4 s.

race_fd_case() {
	local v=$1 who=$2
	become "$who"
	require_runner "$v"
	victims "$who"
	ward_run "$v" workspace-write -- "$SEAL" race-fd "$OUT_DIR/victim" \
		"$WS/mine" 4
	assert_status 0
	assert_raced
	assert_victim_kept
}

race_path_case() {
	local v=$1 who=$2
	become "$who"
	require_runner "$v"
	victims "$who"
	ward_run "$v" workspace-write -- "$SEAL" race-path "$OUT_DIR/victim" \
		"$WS/mine" 4
	assert_status 0
	assert_raced
	assert_victim_kept
}

# Read-only: a memfd passes the check (the command's own), the swap must
# not carry FS_IOC_SETFLAGS or fchmod to the victim.
race_memfd_case() {
	local v=$1 who=$2 flags
	become "$who"
	require_runner "$v"
	victims "$who"
	flags=$(lsattr -d "$OUT_DIR/victim" 2>/dev/null | cut -d' ' -f1)
	"${E2E_AS[@]}" chattr +A "$OUT_DIR/victim" 2>/dev/null &&
		"${E2E_AS[@]}" chattr -A "$OUT_DIR/victim" ||
		skip "no inode flags on $OUT_DIR's file system"
	VICTIM_BEFORE=$(stat -c '%a %u %g %Y %Z' "$OUT_DIR/victim")
	ward_run "$v" read-only -- "$SEAL" race-memfd "$OUT_DIR/victim" 2
	assert_status 0
	assert_raced
	assert_victim_kept
	[ "$(lsattr -d "$OUT_DIR/victim" | cut -d' ' -f1)" = "$flags" ] ||
		fail "the victim's inode flags changed"
}

# A daemon outside (the acting user's, in OUT_DIR); the race rewrites the
# address between the command's own socket and the daemon's.
start_serve() { # PATH LOG
	local out=$E2E_CAP/serve-$RANDOM
	"${E2E_AS[@]}" "$SEAL" serve "$1" "$2" 60 >"$out" 2>&1 &
	E2E_PIDS+=($!)
	for _ in $(seq 200); do
		grep -q ready "$out" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "the daemon at $1 did not start: $(cat "$out")"
}

race_connect_case() {
	local v=$1 who=$2
	become "$who"
	require_runner "$v"
	start_serve "$OUT_DIR/daemon.sock" "$OUT_DIR/daemon.log"
	ward_run "$v" workspace-write -- "$SEAL" race-connect "$WS/own.sock" \
		"$OUT_DIR/daemon.sock" 2
	assert_status 0
	assert_raced
	[ ! -s "$OUT_DIR/daemon.log" ] ||
		fail "the daemon outside was reached: $(sort "$OUT_DIR/daemon.log" | uniq -c)"
}

# bwrap with its mounts weakened (the ward of tests/e2e/weak_bwrap.bats:
# the host bound read-write): bwrap's read-only mounts alone refuse the
# races' writes outside (EROFS), so there only the Landlock layer inside
# bwrap, and its supervisor, stands between the race and the victim.
weak() {
	local w=${WEAK_WARD:-$E2E_BUILD/tests/weak/ward}
	[ -x "$w" ] || skip "$w is not built (make $w)"
	WARD=$w
}

@test "bwrap (root): a dup2 race never lands fchmod/fchown/xattr/SETFLAGS/futimens/AT_EMPTY_PATH outside" { race_fd_case bwrap root; }
@test "bwrap (root): a path rewritten after the check never lands chmod/utimensat/xattr/AT_EMPTY_PATH outside" { race_path_case bwrap root; }
@test "bwrap (root): read-only, a memfd swapped for a file keeps its flags and mode" { race_memfd_case bwrap root; }
@test "bwrap (root): an address rewritten or a socket swapped never reaches a daemon outside" { race_connect_case bwrap root; }
@test "bwrap (nobody): a dup2 race never lands fchmod/fchown/xattr/SETFLAGS/futimens/AT_EMPTY_PATH outside" { race_fd_case bwrap nobody; }
@test "bwrap (nobody): a path rewritten after the check never lands chmod/utimensat/xattr/AT_EMPTY_PATH outside" { race_path_case bwrap nobody; }
@test "bwrap (nobody): read-only, a memfd swapped for a file keeps its flags and mode" { race_memfd_case bwrap nobody; }
@test "bwrap (nobody): an address rewritten or a socket swapped never reaches a daemon outside" { race_connect_case bwrap nobody; }
@test "landlock (root): a dup2 race never lands fchmod/fchown/xattr/SETFLAGS/futimens/AT_EMPTY_PATH outside" { race_fd_case landlock root; }
@test "landlock (root): a path rewritten after the check never lands chmod/utimensat/xattr/AT_EMPTY_PATH outside" { race_path_case landlock root; }
@test "landlock (root): read-only, a memfd swapped for a file keeps its flags and mode" { race_memfd_case landlock root; }
@test "landlock (root): an address rewritten or a socket swapped never reaches a daemon outside" { race_connect_case landlock root; }
@test "landlock (nobody): a dup2 race never lands fchmod/fchown/xattr/SETFLAGS/futimens/AT_EMPTY_PATH outside" { race_fd_case landlock nobody; }
@test "landlock (nobody): a path rewritten after the check never lands chmod/utimensat/xattr/AT_EMPTY_PATH outside" { race_path_case landlock nobody; }
@test "landlock (nobody): read-only, a memfd swapped for a file keeps its flags and mode" { race_memfd_case landlock nobody; }
@test "landlock (nobody): an address rewritten or a socket swapped never reaches a daemon outside" { race_connect_case landlock nobody; }
@test "bwrap, mounts weakened (root): a dup2 race never lands outside" { weak; race_fd_case bwrap root; }
@test "bwrap, mounts weakened (root): a path rewritten after the check never lands outside" { weak; race_path_case bwrap root; }
@test "bwrap, mounts weakened (root): read-only, a memfd swapped for a file keeps its flags and mode" { weak; race_memfd_case bwrap root; }
@test "bwrap, mounts weakened (nobody): a dup2 race never lands outside" { weak; race_fd_case bwrap nobody; }
@test "bwrap, mounts weakened (nobody): a path rewritten after the check never lands outside" { weak; race_path_case bwrap nobody; }
@test "bwrap, mounts weakened (nobody): read-only, a memfd swapped for a file keeps its flags and mode" { weak; race_memfd_case bwrap nobody; }

# As root the supervisor acts for the command and keeps nothing the
# command lacks: no CAP_FOWNER (chmod of another user's file inside the
# workspace fails), and Landlock's rules bind what it performs (no socket
# file created outside the roots).
@test "landlock (root): the supervisor's answers are the command's (no CAP_FOWNER, Landlock binds its bind)" {
	require_runner landlock
	echo theirs >"$WS/theirs"
	chown 65534:65534 "$WS/theirs"
	ward_run landlock workspace-write -- "$PY" -c '
import os, socket, errno, sys
def attempt(label, fn):
    try:
        fn(); print(label + "=ok")
    except OSError as e:
        print(label + "=" + errno.errorcode[e.errno])
attempt("chmod_theirs", lambda: os.chmod("theirs", 0o600))
attempt("chmod_mine", lambda: (open("mine2", "w").close(), os.chmod("mine2", 0o600)))
s = socket.socket(socket.AF_UNIX)
attempt("bind_outside", lambda: s.bind(sys.argv[1] + "/planted.sock"))
s2 = socket.socket(socket.AF_UNIX)
attempt("bind_inside", lambda: s2.bind("inside.sock"))
' "$OUT_DIR"
	assert_status 0
	grep -qx 'chmod_theirs=EPERM' <<<"$output" || fail "$output"
	grep -qx 'chmod_mine=ok' <<<"$output" || fail "$output"
	grep -qx 'bind_outside=EACCES' <<<"$output" || fail "$output"
	grep -qx 'bind_inside=ok' <<<"$output" || fail "$output"
	[ ! -e "$OUT_DIR/planted.sock" ] || fail "a socket file was created outside"
}

# --- provenance, not time ------------------------------------------------------

# The call starts and waits; a host daemon (outside the call) then creates
# its socket in /tmp, a writable root; the command tries to reach it.
# late_daemon: once the call has started ($WS/started), the host daemon
# binds $HOST_TMP/late.sock and the call is told to go on ($WS/go).
late_daemon() {
	for _ in $(seq 600); do
		[ -e "$WS/started" ] && break
		sleep 0.05
	done
	[ -e "$WS/started" ] || fail "the call did not start"
	start_serve "$HOST_TMP/late.sock" "$HOST_TMP/late.log"
	echo >"$WS/go"
}

late_socket_case() {
	local v=$1 who=$2 pid
	become "$who"
	require_runner "$v"
	mkdir -p "$HOST_TMP"
	[ "$who" = nobody ] && chown 65534:65534 "$HOST_TMP"
	(ward_run "$v" workspace-write -- sh -c "echo > $WS/started; $SEAL wait-connect $HOST_TMP/late.sock $WS/go; $SEAL connect $WS/own.sock" >/dev/null
	 printf '%s\n' "$output" >"$E2E_CAP/late.out"
	 echo "$status" >"$E2E_CAP/late.status") &
	pid=$!
	late_daemon
	wait "$pid"
	output=$(cat "$E2E_CAP/late.out")
	[ "$(cat "$E2E_CAP/late.status")" = 0 ] || fail "status: $output"
	grep -qx 'connect=EACCES' <<<"$output" || fail "the late socket: $output"
	[ ! -s "$HOST_TMP/late.log" ] || fail "the host daemon was reached"
}

# The command's own socket, bound during the call, is reachable (by
# connect, also after a rename); one bound before the call is not.
own_socket_case() {
	local v=$1 who=$2
	become "$who"
	require_runner "$v"
	start_serve "$WS/before.sock" "$OUT_DIR/before.log"
	ward_run "$v" workspace-write -- "$PY" -c '
import os, socket, errno
def attempt(label, fn):
    try:
        fn(); print(label + "=ok")
    except OSError as e:
        print(label + "=" + errno.errorcode[e.errno])
srv = socket.socket(socket.AF_UNIX); srv.bind("own.sock"); srv.listen(4)
attempt("own", lambda: socket.socket(socket.AF_UNIX).connect("own.sock"))
os.rename("own.sock", "moved.sock")
attempt("moved", lambda: socket.socket(socket.AF_UNIX).connect("moved.sock"))
attempt("before", lambda: socket.socket(socket.AF_UNIX).connect("before.sock"))
'
	assert_status 0
	grep -qx 'own=ok' <<<"$output" || fail "$output"
	grep -qx 'moved=ok' <<<"$output" || fail "$output"
	grep -qx 'before=EACCES' <<<"$output" || fail "$output"
}

@test "bwrap (root): a host socket created in /tmp after the call began is unreachable" { late_socket_case bwrap root; }
@test "bwrap (root): the command's own socket is reachable, also renamed; an older one is not" { own_socket_case bwrap root; }
@test "bwrap (nobody): a host socket created in /tmp after the call began is unreachable" { late_socket_case bwrap nobody; }
@test "bwrap (nobody): the command's own socket is reachable, also renamed; an older one is not" { own_socket_case bwrap nobody; }
@test "landlock (root): a host socket created in /tmp after the call began is unreachable" { late_socket_case landlock root; }
@test "landlock (root): the command's own socket is reachable, also renamed; an older one is not" { own_socket_case landlock root; }
@test "landlock (nobody): a host socket created in /tmp after the call began is unreachable" { late_socket_case landlock nobody; }
@test "landlock (nobody): the command's own socket is reachable, also renamed; an older one is not" { own_socket_case landlock nobody; }

# --- the proxy as an object -----------------------------------------------------

proxy_case() {
	local v=$1 who=$2 lpid
	become "$who"
	require_runner "$v"
	"$SEAL" listen-other "$WS/port" "$OUT_DIR/ready" "$OUT_DIR/other.log" 60 \
		>"$E2E_CAP/listen.out" 2>&1 &
	lpid=$!
	E2E_PIDS+=("$lpid")
	ward_run "$v" workspace-write --allow-domain allowed.test -- \
		"$SEAL" proxy-other "$WS/port" "$OUT_DIR/ready"
	assert_status 0
	# (Inside bwrap's namespace 0.0.0.0 is its own loopback: the bridge.)
	for a in v4_other v6_loop v6_mapped_other; do
		grep -q "^$a=ok" <<<"$output" && fail "$a connected: $output"
	done
	grep -qx 'proxy=ok' <<<"$output" || fail "the proxy: $output"
	[ ! -s "$OUT_DIR/other.log" ] ||
		fail "a listener at the proxy's port was reached directly: $(cat "$E2E_CAP/listen.out")"
	if [ "$v" = landlock ]; then
		for a in v4_other v4_any v6_loop v6_any v6_mapped_other; do
			grep -qx "$a=ECONNREFUSED" <<<"$output" || fail "$a: $output"
		done
		grep -qx 'proxy_mapped=ok' <<<"$output" || fail "$output"
	fi
}

@test "bwrap (root): a listener on another address at the proxy's port is never reached" { proxy_case bwrap root; }
@test "bwrap (nobody): a listener on another address at the proxy's port is never reached" { proxy_case bwrap nobody; }
@test "landlock (root): a listener on another address at the proxy's port is never reached" { proxy_case landlock root; }
@test "landlock (nobody): a listener on another address at the proxy's port is never reached" { proxy_case landlock nobody; }

# --- network off: the errors of no network -----------------------------------

families_case() {
	local v=$1 who=$2
	become "$who"
	require_runner "$v"
	ward_run "$v" workspace-write -- "$SEAL" families
	assert_status 0
	grep -qx 'vsock=EAFNOSUPPORT' <<<"$output" || fail "$output"
	grep -qx 'netlink_uevent=EPROTONOSUPPORT' <<<"$output" || fail "$output"
	grep -qx 'netlink_diag=EPROTONOSUPPORT' <<<"$output" || fail "$output"
	grep -qx 'netlink_audit=EPROTONOSUPPORT' <<<"$output" || fail "$output"
	grep -qx 'netlink_route=ok' <<<"$output" || fail "$output"
	grep -q '^packet=ok' <<<"$output" && fail "$output"
	grep -qx 'connect_v4=ENETUNREACH' <<<"$output" || fail "$output"
	grep -qx 'connect_v6=ENETUNREACH' <<<"$output" || fail "$output"
	grep -qx 'sendto_udp=ENETUNREACH' <<<"$output" || fail "$output"
}

# Each client must give up by itself (well inside the bound), with its own
# "no network" error, not time out.
clients_case() {
	local v=$1 who=$2 c
	become "$who"
	require_runner "$v"
	for c in "curl -sS http://ward-seal.invalid/" "curl -sS http://192.0.2.1/" \
		"wget -q http://ward-seal.invalid/" \
		"wget -q http://192.0.2.1/" \
		"git ls-remote http://192.0.2.1/x.git"; do
		command -v "${c%% *}" >/dev/null || continue
		E2E_TIMEOUT=30 ward_run "$v" workspace-write -- $c
		[ "$status" -ne 0 ] || fail "$c succeeded"
		[ "$status" -ne 124 ] && [ "$status" -ne 137 ] ||
			fail "$c did not fail fast (timed out after 30 s)"
	done
}

@test "bwrap (root): network off refuses vsock and non-route netlink; inet fails as unreachable" { families_case bwrap root; }
@test "bwrap (root): network off: curl, wget and git fail fast" { clients_case bwrap root; }
@test "bwrap (nobody): network off refuses vsock and non-route netlink; inet fails as unreachable" { families_case bwrap nobody; }
@test "bwrap (nobody): network off: curl, wget and git fail fast" { clients_case bwrap nobody; }
@test "landlock (root): network off refuses vsock and non-route netlink; inet fails as unreachable" { families_case landlock root; }
@test "landlock (root): network off: curl, wget and git fail fast" { clients_case landlock root; }
@test "landlock (nobody): network off refuses vsock and non-route netlink; inet fails as unreachable" { families_case landlock nobody; }
@test "landlock (nobody): network off: curl, wget and git fail fast" { clients_case landlock nobody; }

# --- through ward mcp -------------------------------------------------------

# mcp VARIANT COMMAND [WARD_MCP_FLAG...]: one bash call through `ward mcp`
# (as the acting user); its result's text in $output.
mcp() {
	local v=$1 command=$2
	shift 2
	output=$(timeout -k 5 60 "${E2E_AS[@]}" env HOME="$HOME" \
		XDG_STATE_HOME="$XDG_STATE_HOME" "$PY" "$MCPBOX" plain \
		"$command" -- "$WARD" mcp --workspace "$WS" \
		--mode workspace-write --runner "$v" "$@" \
		2>>"$E2E_CAP/mcp.err") || fail "mcp: $(tail -n 5 "$E2E_CAP/mcp.err")"
}

mcp_race_case() {
	local v=$1 who=$2
	become "$who"
	require_runner "$v"
	victims "$who"
	mcp "$v" "$SEAL race-fd $OUT_DIR/victim $WS/mine 2; $SEAL race-path $OUT_DIR/victim $WS/mine 2; $SEAL families"
	assert_raced
	assert_victim_kept
	grep -q 'vsock=EAFNOSUPPORT' <<<"$output" || fail "$output"
	grep -q 'connect_v4=ENETUNREACH' <<<"$output" || fail "$output"
}

# The late host socket and the proxy's port, through ward mcp.
mcp_net_case() {
	local v=$1 who=$2 pid lpid
	become "$who"
	require_runner "$v"
	mkdir -p "$HOST_TMP"
	[ "$who" = nobody ] && chown 65534:65534 "$HOST_TMP"
	(mcp "$v" "echo > $WS/started; $SEAL wait-connect $HOST_TMP/late.sock $WS/go"
	 printf '%s\n' "$output" >"$E2E_CAP/late.out") &
	pid=$!
	late_daemon
	wait "$pid" || fail "mcp: $(tail -n 5 "$E2E_CAP/mcp.err")"
	grep -q 'connect=EACCES' "$E2E_CAP/late.out" ||
		fail "the late socket: $(cat "$E2E_CAP/late.out")"
	[ ! -s "$HOST_TMP/late.log" ] || fail "the host daemon was reached"

	"$SEAL" listen-other "$WS/port" "$OUT_DIR/ready" "$OUT_DIR/other.log" 60 \
		>"$E2E_CAP/listen.out" 2>&1 &
	lpid=$!
	E2E_PIDS+=("$lpid")
	mcp "$v" "$SEAL proxy-other $WS/port $OUT_DIR/ready" \
		--allow-domain allowed.test
	grep -q 'proxy=ok' <<<"$output" || fail "the proxy: $output"
	for a in v4_other v6_loop v6_mapped_other; do
		grep -q "$a=ok" <<<"$output" && fail "$a connected: $output"
	done
	[ ! -s "$OUT_DIR/other.log" ] ||
		fail "a listener at the proxy's port was reached directly: $(cat "$E2E_CAP/listen.out")"
}

@test "ward mcp bwrap (root): the races and the families hold" { mcp_race_case bwrap root; }
@test "ward mcp bwrap (nobody): the races and the families hold" { mcp_race_case bwrap nobody; }
@test "ward mcp landlock (root): the races and the families hold" { mcp_race_case landlock root; }
@test "ward mcp landlock (nobody): the races and the families hold" { mcp_race_case landlock nobody; }
@test "ward mcp bwrap (root): a late host socket and the proxy's port stay out of reach" { mcp_net_case bwrap root; }
@test "ward mcp bwrap (nobody): a late host socket and the proxy's port stay out of reach" { mcp_net_case bwrap nobody; }
@test "ward mcp landlock (root): a late host socket and the proxy's port stay out of reach" { mcp_net_case landlock root; }
@test "ward mcp landlock (nobody): a late host socket and the proxy's port stay out of reach" { mcp_net_case landlock nobody; }
