#!/usr/bin/env bats
# shellcheck shell=bats
#
# Red team, the box: when a call ends, every process it started is gone —
# on every runner (bwrap, Landlock through landlock-run), through every
# front end (ward run, ward mcp), as root and as the unprivileged user
# nobody. Each escape leaves a process that, a moment after the call
# returned, writes a marker file m.* into the workspace; a marker means it
# outlived the call.
#
#   leftovers      setsid -f, a double fork, and a decoy child ptrace-seized
#                  by a sibling (a zombie only its tracer can reap, which
#                  once used up the whole sweep budget)
#   killed early   the call killed in its first milliseconds
#                  (--timeout 0.005; MCP timeout_ms 1 and task_kill at once)
#   ward killed    ward itself SIGKILLed during the call (ward run, ward mcp),
#                  and what spawned the argv `ward confine` printed
#   cgroups        clone3(CLONE_INTO_CGROUP) is refused (ENOSYS) on every
#                  runner, and none lets the command write cgroup.procs
#
# The container lane (make check-container) runs this file again with user
# namespaces denied: there only Landlock runs, and bwrap cases skip.

load helpers

BOX=$E2E_BUILD/tests/boxhelper
MCPBOX=$E2E_ROOT/tests/e2e/mcp_box.py

require_runner() {
	require_runner_usable "$1"
}

setup() {
	e2e_setup
	[ -x "$BOX" ] || skip "$BOX is not built (make check builds it)"
	rt_home box
}

teardown() {
	# A survivor (a failed test) must not write into the next test.
	pkill -KILL -f "$WS/m\." 2>/dev/null || true
	e2e_teardown
	rm -rf "$RT_HOME" "$RT_STATE"
}

# Wait $1 seconds (longer than any escape lingers), then no marker may be.
assert_no_survivor() {
	local left
	sleep "$1"
	left=$(cd "$WS" && ls -d m.* 2>/dev/null | tr '\n' ' ')
	[ -z "$left" ] || fail "outlived the call: $left"
}

# A cgroup v2 directory (ours, from a cgroup2 mount), else a v1 one.
some_cgroup_dir() {
	local mnt
	mnt=$(awk '$0 ~ / - cgroup2 / {print $5; exit}' /proc/self/mountinfo)
	if [ -n "$mnt" ]; then
		echo "$mnt"
	elif [ -e /sys/fs/cgroup/pids/cgroup.procs ]; then
		echo /sys/fs/cgroup/pids
	fi
}

# --- ward run ----------------------------------------------------------------

leftovers_case() {
	local v=$1 who=$2
	become "$who"
	require_runner "$v"
	ward_run "$v" workspace-write sh -c "
		setsid -f sh -c 'sleep 1; echo > $WS/m.setsid'
		(sh -c 'sleep 1; echo > $WS/m.fork' &)
		$BOX ptrace-decoy 1 $WS/m.ptrace"
	[ "$status" -eq 0 ] || fail "the escape did not run (status $status)"
	[[ "$output" == *"seized by"* ]] || fail "the decoy was not seized: $output"
	assert_no_survivor 2
}

# ward keeps the launcher it starts (landlock-run --kept): the command's
# parent confines itself and supervises, and its parent is ward, not a
# keeper process of the launcher's own. As root ward starts the launcher
# as init of a pid namespace: nothing above it is visible from inside.
# ward confine's printed argv keeps its own keeper.
kept_case() {
	local who=$1 probe want
	become "$who"
	require_runner landlock
	probe='comm() { cat "/proc/$1/comm" 2>/dev/null || echo "?"; }
		gp=$(awk "/^PPid:/ { print \$2 }" "/proc/$PPID/status")
		echo "$(comm "$PPID") $( [ "$gp" = 0 ] && echo "?" || comm "$gp")"'
	# Root without CAP_SYS_ADMIN (the container lane) gets no pid
	# namespace: then ward is seen as on the unprivileged path.
	want="ward-supervise ward"
	[ "$who" = root ] && unshare --pid true 2>/dev/null && want="ward-supervise ?"
	ward_run landlock read-only sh -c "$probe"
	[ "$status" -eq 0 ] || fail "status $status: $stderr"
	[ "$output" = "$want" ] || fail "ancestry under ward run: $output, not $want"
	"${E2E_AS[@]}" "$WARD" confine --json --workspace "$WS" --runner landlock \
		-- sh -c "$probe" >"$E2E_CAP/confine.json" || fail "ward confine failed"
	output=$("${E2E_AS[@]}" "$PY" -c '
import json, os, sys
argv = json.load(sys.stdin)["argv"]
os.execvp(argv[0], argv)' <"$E2E_CAP/confine.json")
	# Its keeper is the launcher's own (a process named after it; as
	# root outside the pid namespace, so not visible).
	want="ward-supervise landlock-run"
	[ "$who" = root ] && unshare --pid true 2>/dev/null && want="ward-supervise ?"
	[ "$output" = "$want" ] ||
		fail "ancestry under ward confine's argv: $output, not $want"
}

killed_early_case() {
	local v=$1 who=$2 i
	become "$who"
	require_runner "$v"
	for i in 1 2 3 4 5; do
		ward_run "$v" workspace-write --timeout 0.005 \
			sh -c "sleep 0.5; echo > $WS/m.start$i"
	done
	assert_no_survivor 1
}

# Once the command has written $WS/ready, SIGKILL $1 (what started the
# sandbox, in the background of this shell); then nothing may outlive it.
kill_when_ready() {
	local pid=$1 i
	E2E_PIDS+=("$pid")
	for i in $(seq 1 100); do
		[ -e "$WS/ready" ] && break
		sleep 0.1
	done
	[ -e "$WS/ready" ] || fail "the command never started"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	assert_no_survivor 2.5
}

ward_killed_case() {
	local v=$1 who=$2
	local -a flags
	become "$who"
	require_runner "$v"
	read -r -a flags <<<"$(runner_flags "$v")"
	"${E2E_AS[@]}" "$WARD" run --mode workspace-write --workspace "$WS" \
		"${flags[@]}" -- sh -c "
		setsid -f sh -c 'sleep 1.5; echo > $WS/m.setsid'
		echo > $WS/ready
		sleep 1.5; echo > $WS/m.command" >/dev/null 2>&1 &
	kill_when_ready $!
}

# ward SIGKILLed at many points of its first milliseconds (bwrap's start
# had a window: its sandbox process, not yet bound to its parent, was left
# blocked in its namespaces, 1 kill in 73). Every process of every call
# carries the token $WS/m.kill (bwrap's own argv holds the command's), so
# what is left can be counted; none may be, once the sandbox had a
# moment to notice its caller is gone.
ward_killed_at_start_case() {
	local v=$1 who=$2 i left
	local -a flags
	become "$who"
	require_runner "$v"
	read -r -a flags <<<"$(runner_flags "$v")"
	for i in $(seq 1 60); do
		# A subshell of its own: no job notice per kill.
		(
			"${E2E_AS[@]}" "$WARD" run --mode workspace-write \
				--workspace "$WS" "${flags[@]}" -- \
				sh -c 'sleep 30' "$WS/m.kill$i" >/dev/null 2>&1 &
			pid=$!
			sleep "0.0$((i % 10))$((RANDOM % 10))"
			kill -KILL "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		) 2>/dev/null
	done
	# Bounded: the sandbox ends itself at its next step, in well under
	# a second on a quiet machine (30 s for a loaded one); blocked
	# forever it would stay.
	for i in $(seq 1 300); do
		left=$(pgrep -f "$WS/m\.kill" | tr '\n' ' ')
		[ -z "$left" ] && break
		sleep 0.1
	done
	[ -z "$left" ] || fail "left behind by a killed ward: $(for p in $left; do tr '\0' ' ' </proc/$p/cmdline 2>/dev/null | cut -c1-120; echo; done)"
}

# The argv `ward confine` prints holds the sandbox by bwrap's parent-death
# signal: whoever spawns it has no end of the Landlock layer's report pipe
# (which binds the sandbox to ward run instead), so its bwrap keeps
# --die-with-parent, and a spawner SIGKILLed takes the sandbox down.
confine_killed_case() {
	local who=$1
	become "$who"
	require_runner bwrap
	"${E2E_AS[@]}" "$WARD" confine --json --mode workspace-write \
		--workspace "$WS" --runner bwrap -- sh -c "
		echo > $WS/ready
		sleep 1.5; echo > $WS/m.confined" >"$E2E_CAP/confine.json" ||
		fail "ward confine failed"
	"${E2E_AS[@]}" "$PY" -c '
import json, os, sys
argv = json.load(sys.stdin)["argv"]
os.execvp(argv[0], argv)' <"$E2E_CAP/confine.json" >/dev/null 2>&1 &
	kill_when_ready $!
}

cgroup_case() {
	local v=$1 who=$2 dir
	become "$who"
	require_runner "$v"
	dir=$(some_cgroup_dir)
	[ -n "$dir" ] || skip "no cgroup directory to try"
	ward_run "$v" workspace-write sh -c "
		$BOX clone3-cgroup $dir 1 $WS/m.clone3
		$BOX cgroup-procs $dir
		$PY -I -c 'import subprocess; print(subprocess.run([\"echo\", \"forked\"], capture_output=True, text=True).stdout.strip())'"
	echo "# $output"
	# Refused by ward's seccomp layer (inside bwrap too: the Landlock
	# layer); the C library falls back to clone.
	[[ "$output" == *"clone3: refused (Function not implemented)"* ]] ||
		fail "clone3 was not refused with ENOSYS"
	[[ "$output" == *"cgroup.procs: refused"* ]] ||
		fail "the command could move itself to $dir"
	[[ "$output" == *forked* ]] || fail "processes cannot be started"
	assert_no_survivor 1.5
}

@test "ward run bwrap (root): setsid, double fork and a ptraced zombie end with the call" { leftovers_case bwrap root; }
@test "ward run bwrap (root): a call killed in its first milliseconds leaves nothing" { killed_early_case bwrap root; }
@test "ward run bwrap (root): ward SIGKILLed takes the command's tree down" { ward_killed_case bwrap root; }
@test "ward run bwrap (root): no clone3 into another cgroup, no write to cgroup.procs" { cgroup_case bwrap root; }
@test "ward run bwrap (nobody): setsid, double fork and a ptraced zombie end with the call" { leftovers_case bwrap nobody; }
@test "ward run bwrap (nobody): a call killed in its first milliseconds leaves nothing" { killed_early_case bwrap nobody; }
@test "ward run bwrap (root): ward SIGKILLed during bwrap's start leaves no process" { ward_killed_at_start_case bwrap root; }
@test "ward run bwrap (nobody): ward SIGKILLed during bwrap's start leaves no process" { ward_killed_at_start_case bwrap nobody; }
@test "ward run landlock (root): ward SIGKILLed during the launcher's start leaves no process" { ward_killed_at_start_case landlock root; }
@test "ward run bwrap (nobody): ward SIGKILLed takes the command's tree down" { ward_killed_case bwrap nobody; }
@test "ward confine bwrap (root): the printed argv's spawner SIGKILLed takes the sandbox down" { confine_killed_case root; }
@test "ward confine bwrap (nobody): the printed argv's spawner SIGKILLed takes the sandbox down" { confine_killed_case nobody; }
@test "ward run bwrap (nobody): no clone3 into another cgroup, no write to cgroup.procs" { cgroup_case bwrap nobody; }
@test "ward run landlock (root): setsid, double fork and a ptraced zombie end with the call" { leftovers_case landlock root; }
@test "ward run landlock (root): a call killed in its first milliseconds leaves nothing" { killed_early_case landlock root; }
@test "ward run landlock (root): ward SIGKILLed takes the command's tree down" { ward_killed_case landlock root; }
@test "ward run landlock (root): no clone3 into another cgroup, no write to cgroup.procs" { cgroup_case landlock root; }
@test "ward run landlock (nobody): setsid, double fork and a ptraced zombie end with the call" { leftovers_case landlock nobody; }
@test "ward run landlock (nobody): a call killed in its first milliseconds leaves nothing" { killed_early_case landlock nobody; }
@test "ward run landlock (nobody): ward SIGKILLed takes the command's tree down" { ward_killed_case landlock nobody; }
@test "ward run landlock (root): ward keeps the launcher, two processes per call" { kept_case root; }
@test "ward run landlock (nobody): ward keeps the launcher, two processes per call" { kept_case nobody; }
@test "ward run landlock (nobody): no clone3 into another cgroup, no write to cgroup.procs" { cgroup_case landlock nobody; }

# --- ward mcp ----------------------------------------------------------------

mcp_flags() {
	case "$1" in
	bwrap) echo "--runner bwrap" ;;
	landlock) echo "--runner landlock" ;;
	landlock-run) echo "--runner landlock" ;;
	esac
}

# mcp HOW COMMAND: one ward mcp session running COMMAND the HOW way.
mcp() {
	local -a flags
	read -r -a flags <<<"$(mcp_flags "$V")"
	timeout -k 5 60 "${E2E_AS[@]}" env HOME="$HOME" \
		XDG_STATE_HOME="$XDG_STATE_HOME" BOX_READY="${BOX_READY:-}" "$PY" "$MCPBOX" "$1" "$2" -- \
		"$WARD" mcp --workspace "$WS" --mode workspace-write \
		"${flags[@]}" 2>>"$E2E_CAP/mcp.err" || fail "mcp_box.py $1 failed: $(tail -n 5 "$E2E_CAP/mcp.err")"
}

mcp_case() {
	V=$1
	local who=$2 i
	become "$who"
	require_runner "$V"
	mcp plain "setsid -f sh -c 'sleep 1; echo > $WS/m.setsid'; $BOX ptrace-decoy 1 $WS/m.ptrace"
	for i in 1 2 3; do
		mcp kill-at-once "sleep 0.5; echo > $WS/m.kill$i"
		mcp timeout1 "sleep 0.5; echo > $WS/m.timeout$i"
	done
	# The server SIGKILLed while a background task runs (once it runs:
	# see docs/RUNNERS.md on a bwrap killed in its first milliseconds).
	BOX_READY=$WS/ready mcp abandon "setsid -f sh -c 'sleep 1; echo > $WS/m.abandon1'; echo > $WS/ready; sleep 1; echo > $WS/m.abandon2"
	assert_no_survivor 2
}

@test "ward mcp bwrap (root): leftovers, task_kill at once, timeout_ms 1 and a killed server leave nothing" { mcp_case bwrap root; }
@test "ward mcp bwrap (nobody): leftovers, task_kill at once, timeout_ms 1 and a killed server leave nothing" { mcp_case bwrap nobody; }
@test "ward mcp landlock (root): leftovers, task_kill at once, timeout_ms 1 and a killed server leave nothing" { mcp_case landlock root; }
@test "ward mcp landlock (nobody): leftovers, task_kill at once, timeout_ms 1 and a killed server leave nothing" { mcp_case landlock nobody; }
