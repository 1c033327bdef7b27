#!/usr/bin/env bats
# shellcheck shell=bats
#
# Root's identity on what ward does not govern (issue 9, item 7), on every
# Linux runner (bwrap, and Landlock through landlock-run), as root and as
# the unprivileged user nobody:
#
#   - metadata outside the writable roots (chmod, fchmod, chown, xattrs —
#     ACLs are xattrs —, timestamps, FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR) is
#     refused in every mode, also through a symlink in the workspace; inside
#     the roots it works (workspace-write);
#   - a daemon's 0600 pathname unix socket outside the roots is refused
#     (connect and sendto), reachable with --allow-unix; a socket bound in
#     the workspace *before* the call (a server outside the sandbox) is
#     refused; one the command binds itself works;
#   - an abstract unix socket outside the sandbox is unreachable;
#   - no cgroup.procs can be written (the cgroup cannot be left).
#
# One confined run per case runs every vector (tests/e2e/redteam_root.py
# prints NAME=ok or NAME=<errno>); the unconfined baseline shows that each
# vector works without ward, so none of these tests can pass vacuously.

load helpers

setup() {
	e2e_setup
	# A copy the sandbox can read wherever the tree is (a checkout under
	# /tmp is hidden by bwrap's own /tmp in read-only mode).
	cp "$E2E_ROOT/tests/e2e/redteam_root.py" "$OUT_DIR/"
	RT_PY=$OUT_DIR/redteam_root.py
	RT_ABS=ward-rt-$E2E_TAG
}

teardown() {
	e2e_teardown
}


require_runner() {
	require_runner_usable "$1"
}

# Start a daemon (redteam_root.py serve) as the acting user; wait for it.
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

# The fixtures: a victim file and a daemon socket outside the roots (in
# OUT_DIR), a file and a daemon socket bound before the call inside the
# workspace, an abstract daemon; all owned by the acting user, so that DAC
# alone would allow every vector.
rt_fixtures() {
	local who=$1
	[ "$who" = nobody ] && as_nobody
	echo victim >"$OUT_DIR/victim"
	echo mine >"$WS/mine"
	ln -s "$OUT_DIR/victim" "$WS/link"
	if [ "$who" = nobody ]; then
		chown 65534:65534 "$OUT_DIR/victim" "$WS/mine"
	fi
	start_daemon "$OUT_DIR/daemon.sock"
	start_daemon "$WS/old.sock"
	start_daemon "@$RT_ABS"
}

# The value of vector $1 in the last output.
vec() {
	sed -n "s/^$1=//p" <<<"$output" | head -n 1
}

assert_vec() {
	local v
	v=$(vec "$1")
	[ "$v" = "$2" ] || fail "$1: expected $2, got '${v:-nothing}'"
}

assert_vec_not() {
	local v
	v=$(vec "$1")
	[ -n "$v" ] || fail "$1: not run"
	[ "$v" != "$2" ] || fail "$1: expected anything but $2"
}

# rt_case VARIANT WHO MODE [ward run flags...]
rt_case() {
	local variant=$1 who=$2 mode=$3 in_file=-
	shift 3
	require_runner "$variant"
	rt_fixtures "$who"
	[ "$mode" = workspace-write ] && in_file=$WS/mine
	cd "$WS"
	# --network on: with the network off (the default) bwrap's own
	# network namespace hides the host's abstract sockets already
	# (ECONNREFUSED, tests/e2e/network.bats); on shares it, so the
	# abstract vector checks the Landlock layer's scope itself.
	ward_run "$variant" "$mode" --network on "$@" -- "$PY" "$RT_PY" probe \
		"$OUT_DIR/victim" "$in_file" "$OUT_DIR/daemon.sock" "$RT_ABS" \
		"$WS/old.sock" "$WS/link"
	assert_status 0
	local v
	for v in chmod fchmod chown setxattr utime setflags fssetxattr; do
		assert_vec "${v}_out" EACCES
		[ "$mode" = workspace-write ] && assert_vec "${v}_in" ok
	done
	assert_vec chmod_link EACCES
	[ "$(stat -c %a "$OUT_DIR/victim")" = 644 ] ||
		fail "the victim's mode changed"
	assert_vec connect_out EACCES
	assert_vec sendto_out EACCES
	assert_vec connect_abstract EPERM
	assert_vec connect_old EACCES
	[ "$mode" = workspace-write ] && assert_vec connect_own ok
	assert_vec cgroup refused
	return 0
}

rt_socket_case() {
	local variant=$1 who=$2
	rt_case "$variant" "$who" workspace-write
	# The knob: the named socket, and only it, is reachable.
	ward_run "$variant" workspace-write --allow-unix "$OUT_DIR/daemon.sock" \
		-- "$PY" "$RT_PY" probe "$OUT_DIR/victim" - \
		"$OUT_DIR/daemon.sock" "$RT_ABS" "$WS/old.sock" "$WS/link"
	assert_status 0
	assert_vec connect_out ok
	assert_vec_not sendto_out EACCES # EPROTOTYPE: a stream socket
	assert_vec connect_old EACCES
	assert_vec chmod_out EACCES
}

@test "baseline: unconfined, every vector works (so the tests below can fail)" {
	rt_fixtures root
	cd "$WS"
	run env RT_NO_CGROUP=1 "$PY" "$RT_PY" probe "$OUT_DIR/victim" \
		"$WS/mine" "$OUT_DIR/daemon.sock" "$RT_ABS" "$WS/old.sock" \
		"$WS/link"
	[ "$status" -eq 0 ] || fail "$output"
	local v
	for v in chmod fchmod chown setxattr utime setflags fssetxattr; do
		assert_vec "${v}_out" ok
	done
	assert_vec chmod_link ok
	assert_vec connect_out ok
	assert_vec connect_abstract ok
	assert_vec connect_old ok
}

@test "bwrap: metadata, sockets, abstract, cgroup (root, workspace-write)" {
	rt_socket_case bwrap root
}
@test "bwrap: metadata, sockets, abstract, cgroup (nobody, workspace-write)" {
	rt_socket_case bwrap nobody
}
@test "bwrap: metadata, sockets, abstract, cgroup (root, read-only)" {
	rt_case bwrap root read-only
}
@test "bwrap: metadata, sockets, abstract, cgroup (nobody, read-only)" {
	rt_case bwrap nobody read-only
}
@test "landlock: metadata, sockets, abstract, cgroup (root, workspace-write)" {
	rt_socket_case landlock root
}
@test "landlock: metadata, sockets, abstract, cgroup (nobody, workspace-write)" {
	rt_socket_case landlock nobody
}
@test "landlock: metadata, sockets, abstract, cgroup (root, read-only)" {
	rt_case landlock root read-only
}
@test "landlock: metadata, sockets, abstract, cgroup (nobody, read-only)" {
	rt_case landlock nobody read-only
}

# host_pid_of_supervisor NSPID LAUNCHER: our pid of the ward-supervise
# process descended from LAUNCHER whose innermost pid is NSPID.
host_pid_of_supervisor() {
	local s p q
	for s in /proc/[0-9]*/status; do
		grep -q '^Name:[[:space:]]*ward-supervise$' "$s" 2>/dev/null ||
			continue
		[ "$(awk '/^NSpid:/ {print $NF}' "$s")" = "$1" ] || continue
		p=${s#/proc/}
		p=${p%/status}
		q=$p
		while [ -n "$q" ] && [ "$q" -gt 1 ]; do
			if [ "$q" = "$2" ]; then
				echo "$p"
				return
			fi
			q=$(awk '/^PPid:/ {print $2}' "/proc/$q/status" 2>/dev/null)
		done
	done
}

@test "supervisor: a dead supervisor fails closed (the keeper ends the command, 125), and the command cannot signal it" {
	require_runner landlock-run
	cd "$WS"
	echo victim >"$OUT_DIR/victim"
	run "$LAUNCHER" --ro / --rw /dev/null --rw "$WS" -- "$PY" -c '
import os, signal, errno
def comm(p):
    try:
        return open("/proc/%s/comm" % p).read().strip()
    except OSError:
        return ""
sup = [p for p in os.listdir("/proc") if p.isdigit() and
       comm(p) == "ward-supervise"]
mine = []
for p in sup:
    try:
        os.kill(int(p), signal.SIGKILL)
        mine.append("killed")
    except OSError as e:
        mine.append(errno.errorcode[e.errno])
print("kill=" + ",".join(mine))
try:
    os.chmod("'"$OUT_DIR"'/victim", 0o666)
    print("chmod=ok")
except OSError as e:
    print("chmod=" + errno.errorcode[e.errno])
'
	[ "$status" -eq 0 ] || fail "$output"
	# Signal scoping (Landlock ABI 6): the supervisor is outside the domain.
	grep -q '^kill=.*EPERM' <<<"$output" || fail "kill: $output"
	grep -q '^chmod=EACCES' <<<"$output" || fail "chmod: $output"
	# Without the supervisor (killed from outside): fail closed.
	"$LAUNCHER" --ro / --rw /dev/null --rw "$WS" -- "$PY" -c '
import os, time, errno
# Every supervisor in sight: another call on the machine may have one.
sups = []
for p in os.listdir("/proc"):
    try:
        if p.isdigit() and open("/proc/%s/comm" % p).read().strip() == "ward-supervise":
            sups.append(p)
    except OSError:
        pass
open("sup.tmp", "w").write(" ".join(sups))
os.rename("sup.tmp", "sup")
while os.path.exists("sup"):
    time.sleep(0.05)
try:
    os.chmod("'"$OUT_DIR"'/victim", 0o666)
    r = "ok"
except OSError as e:
    r = errno.errorcode[e.errno]
open("result", "w").write(r)
' &
	local pid=$! sups= sup= s
	for _ in $(seq 100); do
		sups=$(cat "$WS/sup" 2>/dev/null) && [ -n "$sups" ] && break
		sleep 0.05
	done
	[ -n "$sups" ] || fail "no supervisor found"
	# As root the command runs in a pid namespace of its own (the
	# keeper's): its pid for the supervisor is not ours. Where it shares
	# ours (the container lane), other calls' supervisors are in sight
	# too: ours is the one descended from this launcher.
	for s in $sups; do
		sup=$(host_pid_of_supervisor "$s" "$pid")
		[ -z "$sup" ] || break
	done
	[ -n "$sup" ] || fail "the supervisor is not among the launcher's ($sups)"
	kill -KILL "$sup"
	while kill -0 "$sup" 2>/dev/null; do sleep 0.05; done
	rm -f "$WS/sup"
	# The keeper sees its supervisor die and ends the command (exit 125,
	# docs/RUNNERS.md); a judged call the command makes before that
	# fails closed with ENOSYS. Either way nothing goes through.
	local st=0
	wait "$pid" || st=$?
	[ "$st" -eq 125 ] || fail "the launcher exited $st, not 125"
	if [ -e "$WS/result" ]; then
		[ "$(cat "$WS/result")" = ENOSYS ] ||
			fail "chmod: $(cat "$WS/result")"
	fi
	[ "$(stat -c %a "$OUT_DIR/victim")" = 644 ] || fail "chmod went through"
}

# The supervisor is the command's parent (landlock-run's confined child
# forks the command and serves it). A command that tries to kill it gets
# EPERM (signal scoping); one that clears its parent-death signal and
# loses its supervisor from outside still ends: the keeper sees the
# supervisor die (125, said on stderr) and ends the tree — the pid
# namespace as root, the subreaper's sweep as nobody.
@test "supervisor: the command's parent cannot be killed by it, and its death ends a command that cleared its parent-death signal (root, nobody)" {
	require_runner landlock-run
	cd "$WS"
	local who pid sup cmd st i
	for who in root nobody; do
		[ "$who" = root ] || as_nobody
		rm -f "$WS/ready"
		timeout -k 5 60 "${E2E_AS[@]}" "$LAUNCHER" --ro / --rw /dev/null \
			--rw "$WS" -- "$PY" -c '
import ctypes, errno, os, signal, time
ppid = os.getppid()
comm = open("/proc/%d/comm" % ppid).read().strip()
try:
    os.kill(ppid, signal.SIGKILL)
    k = "killed"
except OSError as e:
    k = errno.errorcode[e.errno]
ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG: none
open("ready.tmp", "w").write("parent=%s kill=%s\n" % (comm, k))
os.rename("ready.tmp", "ready")
while True:
    time.sleep(0.05)
' >"$OUT_DIR/out" 2>"$OUT_DIR/err" &
		pid=$!
		for ((i = 0; i < 200; i++)); do
			[ -e "$WS/ready" ] && break
			sleep 0.05
		done
		# timeout, then the keeper (setpriv execs), then its child.
		sup=$(pgrep -P "$(pgrep -P "$pid")" -x ward-supervise) || {
			kill "$pid"
			wait "$pid" || true
			fail "$who: no supervisor under the launcher"
		}
		cmd=$(cat /proc/"$sup"/task/*/children 2>/dev/null | awk '{print $1}')
		grep -qx 'parent=ward-supervise kill=EPERM' "$WS/ready" || {
			kill -KILL "$sup"
			wait "$pid" || true
			fail "$who: $(cat "$WS/ready" 2>/dev/null) $(cat "$OUT_DIR/err")"
		}
		[ -n "$cmd" ] || fail "$who: the supervisor has no child"
		kill -KILL "$sup"
		st=0
		wait "$pid" || st=$?
		[ "$st" -eq 125 ] || fail "$who: exit $st, not 125: $(cat "$OUT_DIR/err")"
		grep -q 'the supervisor ended (killed by signal 9) while the command ran' \
			"$OUT_DIR/err" || fail "$who: $(cat "$OUT_DIR/err")"
		# The keeper returns only once the tree is gone.
		! kill -0 "$cmd" 2>/dev/null || fail "$who: the command (pid $cmd) outlived its supervisor"
	done
}

# A symlink flipped under the calls: one process flips a workspace symlink
# between a file inside and the victim outside (atomic renames), another
# chmods and chowns and touches through it as fast as it can. The
# supervisor performs every path-named call itself, on the object it
# checked, so no flip can land in between (tests/e2e/redteam_seal.bats
# races the rest: xattrs, descriptors, addresses).
@test "race: a symlink flipped under chmod/chown/utime never reaches outside" {
	local variant
	for variant in landlock; do
		require_runner "$variant"
	done
	echo victim >"$OUT_DIR/victim"
	chmod 644 "$OUT_DIR/victim"
	touch -d 2000-01-01 "$OUT_DIR/victim"
	local before
	before=$(stat -c '%a %u %g %Y' "$OUT_DIR/victim")
	echo mine >"$WS/mine"
	ln -s "$OUT_DIR/victim" "$WS/flip"
	cd "$WS"
	for variant in landlock; do
		ward_run "$variant" workspace-write -- "$PY" -c '
import os, sys, time
out = sys.argv[1]
pid = os.fork()
if pid == 0:
    end = time.time() + 3
    while time.time() < end:
        os.symlink("mine", "t1"); os.rename("t1", "flip")
        os.symlink(out, "t2"); os.rename("t2", "flip")
    os._exit(0)
n = ok = 0
end = time.time() + 3
while time.time() < end:
    for f in (lambda: os.chmod("flip", 0o600), lambda: os.chmod("flip", 0o666),
              lambda: os.utime("flip", (1, 1)),
              lambda: os.chown("flip", os.getuid(), 4242 if os.getuid() else 0)):
        n += 1
        try:
            f(); ok += 1
        except OSError:
            pass
os.waitpid(pid, 0)
print("calls=%d allowed=%d" % (n, ok))
' "$OUT_DIR/victim"
		assert_status 0
		[ "$(stat -c '%a %u %g %Y' "$OUT_DIR/victim")" = "$before" ] ||
			fail "$variant: the victim changed: $(stat -c '%a %u %g %Y' "$OUT_DIR/victim") (was $before)"
		# The race was run: the inside target was hit many times.
		grep -q 'allowed=[1-9]' <<<"$output" ||
			fail "$variant: nothing was allowed: $output"
		ln -sfn "$OUT_DIR/victim" "$WS/flip"
	done
}
