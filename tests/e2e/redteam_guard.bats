#!/usr/bin/env bats
# shellcheck shell=bats
#
# Red team, the guard itself: several ward processes guard one workspace
# at once (agent harnesses issue parallel tool calls as separate `ward run`
# processes, and a `ward mcp` runs beside them), a ward dies before its
# check, the quarantine lies on another file system and a plant tries to
# use up what the guard can keep while the user changes a protected file
# at the same time. The guard must never put a plant back, never take a
# plant for the original, never delete anything, and say exactly what it
# did. The timing is the test's: each call waits on a FIFO the test
# writes, no sleep decides anything. Landlock only: there the guard is
# what keeps the protected paths (bwrap binds them read-only).

load helpers
load persist

# bg NAME FRONT COMMAND: start COMMAND under workspace-write on Landlock in
# the background through `ward run` (FRONT run) or a `ward mcp` bash call
# (FRONT mcp), as the test's user; its output goes to $E2E_CAP/NAME.out and
# .err, its pid to $BG_PID (killed in teardown if still there).
bg() {
	local name=$1 front=$2 cmd=$3
	if [ "$front" = run ]; then
		"${E2E_AS[@]}" env HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" \
			"$WARD" run --runner landlock -m workspace-write -w "$WS" \
			-c "$cmd" >"$E2E_CAP/$name.out" 2>"$E2E_CAP/$name.err" &
	else
		"${E2E_AS[@]}" env HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" \
			"$PY" "$E2E_ROOT/tests/e2e/mcp_tool.py" bash \
			"$(json_command "$cmd")" -- "$WARD" mcp --workspace "$WS" \
			--mode workspace-write --runner landlock \
			>"$E2E_CAP/$name.out" 2>"$E2E_CAP/$name.err" &
	fi
	BG_PID=$!
	E2E_PIDS+=("$BG_PID")
}

# FIFOs in the workspace the calls and the test meet at.
fifos() {
	local f
	for f in "$@"; do
		mkfifo "$WS/$f"
		chmod 0666 "$WS/$f"
	done
}

# Wait (bounded) until a call has written to the FIFO $1; tell one reading
# the FIFO $1 to go on.
await() { timeout 30 cat "$WS/$1" >/dev/null || fail "no word on $1"; }
release() { timeout 30 sh -c ': > "$1"' sh "$WS/$1" || fail "nobody read $1"; }

plant_hook() {
	printf '#!/bin/sh\ntouch %s\n' "$RT_PWN"
}

# --- two calls at once ------------------------------------------------------

# A plants a hook and waits; B starts (its snapshot is taken before its
# command runs) and waits; A ends (its check takes the plant away); B ends:
# it must neither put the plant back ("was removed … put back") nor report
# the user's repository as changed.
concurrent_case() {
	local who=$1 front_b=$2 pid_a pid_b
	require_runner landlock
	become "$who"
	make_repo
	fifos a.planted a.go b.started b.go
	bg a run "$(declare -f plant_hook); plant_hook > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; : > a.planted; read x < a.go; echo A-DONE"
	pid_a=$BG_PID
	await a.planted
	bg b "$front_b" ": > b.started; read x < b.go; echo B-DONE"
	pid_b=$BG_PID
	await b.started
	release a.go
	wait "$pid_a" || true
	grep -q A-DONE "$E2E_CAP/a.out" || fail "A did not finish: $(cat "$E2E_CAP/a.err")"
	grep -q "pre-commit appeared during the run; moved to" "$E2E_CAP/a.err" ||
		fail "A's check did not take the plant: $(cat "$E2E_CAP/a.err")"
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "the plant is still there after A"
	release b.go
	wait "$pid_b" || true
	grep -q B-DONE "$E2E_CAP/b.out" || fail "B did not finish: $(cat "$E2E_CAP/b.err")"
	! grep -q "pre-commit" "$E2E_CAP/b.out" "$E2E_CAP/b.err" ||
		fail "B's check acted on the plant: $(cat "$E2E_CAP/b.out" "$E2E_CAP/b.err")"
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "B put the plant back"
	users_git
	assert_not_pwned
}

@test "landlock: two ward runs at once never put a plant back (root)" { concurrent_case root run; }
@test "landlock: two ward runs at once never put a plant back (nobody)" { concurrent_case nobody run; }
@test "landlock: a ward run and a ward mcp at once never put a plant back (root)" { concurrent_case root mcp; }
@test "landlock: a ward run and a ward mcp at once never put a plant back (nobody)" { concurrent_case nobody mcp; }

# B starts after A planted and ends first: its check compares with the
# state before A began, so it takes A's plant; A's own check then finds
# nothing. The plant never becomes anyone's baseline.
@test "landlock: a call that starts after a plant does not take it for the original" {
	require_runner landlock
	make_repo
	fifos a.planted a.go
	bg a run "$(declare -f plant_hook); plant_hook > .git/hooks/post-checkout; : > a.planted; read x < a.go"
	local pid_a=$BG_PID
	await a.planted
	ward_run landlock-run workspace-write -c 'echo B'
	[[ "$stderr" == *"post-checkout appeared during the run; moved to"* ]] ||
		fail "B did not take the plant made before it began"
	release a.go
	wait "$pid_a" || true
	! grep -q "post-checkout" "$E2E_CAP/a.err" ||
		fail "A put it back or reported it again: $(cat "$E2E_CAP/a.err")"
	[ ! -e "$WS/.git/hooks/post-checkout" ] || fail "the plant is back"
}

# --- a ward that dies before its check -------------------------------------

# A plants and is SIGKILLed (its command dies with it). The next call must
# not wedge, must not take the plant as its baseline, and checks what A
# guarded first, saying so.
killed_case() {
	local who=$1 front=$2 pid_a
	require_runner landlock
	become "$who"
	make_repo
	fifos a.planted a.go
	bg a run "$(declare -f plant_hook); plant_hook > .git/hooks/pre-push; chmod +x .git/hooks/pre-push; echo '[core] fsmonitor = touch $RT_PWN' >> .git/config; : > a.planted; read x < a.go"
	pid_a=$BG_PID
	await a.planted
	kill -KILL "$pid_a"
	wait "$pid_a" || true
	confined "$front" landlock-run 'echo NEXT'
	[[ "$output" == *NEXT* ]] || fail "the next call did not run: $stderr"
	[[ "$stderr" == *"pre-push appeared during an earlier call (ward pid $pid_a, which ended before its check)"* ]] ||
		fail "the next call did not check what the killed one left"
	[[ "$stderr" == *".git/config changed during an earlier call"*"original put back"* ]] ||
		fail "the killed call's config change was not put back"
	[ ! -e "$WS/.git/hooks/pre-push" ] || fail "the plant is still there"
	users_git
	assert_not_pwned
}

@test "landlock: a SIGKILLed ward's plant is checked by the next call (root)" { killed_case root run; }
@test "landlock: a SIGKILLed ward's plant is checked by the next call (nobody)" { killed_case nobody run; }
@test "landlock: a SIGKILLed ward's plant is checked by the next ward mcp call (root)" { killed_case root mcp; }

# The lock the guard holds while it snapshots or checks: one held by a
# process that was killed is free at once.
@test "landlock: a killed holder of the guard's lock wedges nobody" {
	require_runner landlock
	make_repo
	ward_run landlock-run workspace-write -c true
	local lock=$XDG_STATE_HOME/ward/guard/lock
	[ -f "$lock" ] || fail "no guard lock at $lock"
	fifos held
	# Byte 0 is the protocol's lock (guardstate.c); the holder keeps it
	# until it is killed.
	"$PY" -c '
import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 1, 0))
open(sys.argv[2], "w").close()
time.sleep(600)
' "$lock" "$WS/held" &
	local holder=$!
	E2E_PIDS+=("$holder")
	await held
	kill -KILL "$holder"
	wait "$holder" || true
	ward_run landlock-run workspace-write -c 'echo AFTER'
	assert_status 0
	[[ "$output" == AFTER ]] || fail "the call after the killed holder did not run"
}

# --- never destroy: a sparse plant, a concurrent user change ------------------

# The quarantine on another file system than the workspace (copies, not
# renames): a 256 MiB sparse plant used to exhaust the copy budget so that
# the user's own `git config`, made during the run, was deleted.
cross_fs_state() {
	local shm
	[ -d /dev/shm ] && [ "$(stat -c %d /dev/shm)" != "$(stat -c %d "$WS")" ] ||
		skip "no file system apart from the workspace's for the state directory"
	shm=$(mktemp -d /dev/shm/ward-e2e-state.XXXXXX)
	chmod 0755 "$shm"
	rm -rf "$RT_STATE"
	RT_STATE=$shm
	export XDG_STATE_HOME=$shm
}

sparse_case() {
	local who=$1 front=$2 pid_a line
	require_runner landlock
	cross_fs_state
	become "$who"
	make_repo
	fifos a.planted a.go
	bg a "$front" "truncate -s 256M .git/hooks/sparse && : > a.planted; read x < a.go; echo A-DONE"
	pid_a=$BG_PID
	await a.planted
	# The user, meanwhile, in another terminal.
	as_user git -C "$WS" config user.name "The User"
	release a.go
	wait "$pid_a" || true
	grep -q A-DONE "$E2E_CAP/a.out" || fail "the call did not finish: $(cat "$E2E_CAP/a.err")"
	cat "$E2E_CAP/a.out" "$E2E_CAP/a.err" >"$E2E_CAP/a.all"
	# The user's change survives: in place, or in the quarantine.
	grep -rqs "name = The User" "$WS/.git/config" "$XDG_STATE_HOME/ward/quarantine" ||
		fail "the user's change is gone"
	# The messages are true: one per path, never "removed".
	! grep -q "was removed\|and was removed" "$E2E_CAP/a.all" ||
		fail "the guard says it removed something: $(cat "$E2E_CAP/a.all")"
	line=$(grep -c "^ward: protected.*\.git/config" "$E2E_CAP/a.all")
	[ "$line" = 1 ] || fail ".git/config is reported $line times: $(cat "$E2E_CAP/a.all")"
	grep -q "\.git/config changed during the run; the new content was moved to" "$E2E_CAP/a.all" ||
		fail "the report on .git/config is not what happened"
	# The sparse plant costs the quarantine nothing like 256 MiB.
	[ "$(du -sk "$XDG_STATE_HOME/ward/quarantine" | cut -f1)" -lt 4096 ] ||
		fail "the quarantine grew by $(du -sh "$XDG_STATE_HOME/ward/quarantine")"
	[ "$(stat -c %s "$(find "$XDG_STATE_HOME/ward/quarantine" -name sparse)")" = 268435456 ] ||
		fail "the sparse plant was not kept whole"
	[ ! -e "$WS/.git/hooks/sparse" ] || fail "the plant is still in .git/hooks"
}

@test "landlock: a sparse plant beside a concurrent user change loses nothing (root)" { sparse_case root run; }
@test "landlock: a sparse plant beside a concurrent user change loses nothing (nobody)" { sparse_case nobody run; }
@test "landlock: a sparse plant beside a concurrent user change loses nothing, ward mcp (nobody)" { sparse_case nobody mcp; }

# Past the quota the guard keeps a plant in place under a name nothing
# runs, and the call fails loudly; the user's change still goes where it
# fits.
quota_case() {
	local who=$1 pid_a
	require_runner landlock
	cross_fs_state
	become "$who"
	make_repo
	mkdir -p "$HOME/.config/ward"
	echo 'quarantine_quota_mb: 1' >"$HOME/.config/ward/config.yml"
	[ "$who" != nobody ] || chown -R 65534:65534 "$HOME/.config"
	fifos a.planted a.go
	bg a run "head -c 3000000 /dev/urandom > .git/hooks/big && : > a.planted; read x < a.go"
	pid_a=$BG_PID
	await a.planted
	as_user git -C "$WS" config user.name "The User"
	release a.go
	local rc=0
	wait "$pid_a" || rc=$?
	[ "$rc" = 125 ] || fail "the call exited $rc, expected 125 (the guard failed): $(cat "$E2E_CAP/a.err")"
	grep -q "big (now $WS/.git/hooks/big.ward-kept-[^)]*) appeared during the run; ward could not move it to the quarantine (the quarantine is full" "$E2E_CAP/a.err" ||
		fail "the guard does not say it kept the plant: $(cat "$E2E_CAP/a.err")"
	[ ! -e "$WS/.git/hooks/big" ] || fail "the plant keeps its name"
	[ -n "$(find "$WS/.git/hooks" -name 'big.ward-kept-*')" ] || fail "the plant was not kept beside itself"
	grep -rqs "name = The User" "$WS/.git" "$XDG_STATE_HOME/ward/quarantine" ||
		fail "the user's change is gone"
	"${E2E_AS[@]}" env HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" "$WARD" quarantine list >"$E2E_CAP/list"
	grep -q "kept in place as: $WS/.git/hooks/big.ward-kept-" "$E2E_CAP/list" ||
		fail "ward quarantine list does not show the kept plant: $(cat "$E2E_CAP/list")"
}

@test "landlock: past the quota a plant is kept in place and the call fails (root)" { quota_case root; }
@test "landlock: past the quota a plant is kept in place and the call fails (nobody)" { quota_case nobody; }

# --- ward quarantine ------------------------------------------------------------

@test "ward quarantine list, restore and prune" {
	require_runner landlock
	make_repo
	ward_run landlock-run workspace-write -c 'echo one > .git/hooks/pre-rebase; mkdir .vscode; echo "{}" > .vscode/tasks.json'
	[ ! -e "$WS/.git/hooks/pre-rebase" ] || fail "the plant was not taken"
	run "$WARD" quarantine list
	assert_status 0
	[[ "$output" == *"$WS/.git/hooks/pre-rebase"* && "$output" == *"$WS/.vscode"* ]] ||
		fail "list does not show both"
	local box
	box=$("$WARD" quarantine list --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[0]["box"])')
	[ -n "$box" ] || fail "no box in list --json"
	# Restore one path; again is an error; over something is refused.
	run "$WARD" quarantine restore "$box" "$WS/.git/hooks/pre-rebase"
	assert_status 0
	[ "$(cat "$WS/.git/hooks/pre-rebase")" = one ] || fail "not restored"
	run "$WARD" quarantine restore "$box" "$WS/.git/hooks/pre-rebase"
	[ "$status" -eq 2 ] || fail "a second restore exited $status"
	mkdir "$WS/.vscode"
	run "$WARD" quarantine restore "$box" "$WS/.vscode"
	[ "$status" -eq 2 ] || fail "a restore over an existing path exited $status"
	[[ "$output" == *"something is there now"* ]] || fail "the refusal does not say why"
	[ ! -e "$WS/.vscode/tasks.json" ] || fail "the restore wrote into the existing path"
	# Never through a symbolic link: the path now leads elsewhere.
	rmdir "$WS/.vscode"
	mv "$WS" "$WS.real"
	ln -s "$OUT_DIR" "$WS"
	run "$WARD" quarantine restore "$box" "$WS/.vscode"
	rm "$WS"
	mv "$WS.real" "$WS"
	[ "$status" -eq 2 ] || fail "a restore through a symlink exited $status"
	[ ! -e "$OUT_DIR/.vscode" ] || fail "the restore followed the symlink"
	run "$WARD" quarantine restore nosuchbox
	[ "$status" -eq 2 ] || fail "an unknown box exited $status"
	# Prune: a fresh box is younger than a day; by name it goes.
	run "$WARD" quarantine prune --older-than 1d
	assert_status 0
	[[ "$output" == "removed 0 boxes" ]] || fail "prune removed a fresh box: $output"
	run "$WARD" quarantine prune "$box"
	assert_status 0
	[[ "$output" == "removed 1 box" ]] || fail "prune BOX: $output"
	run "$WARD" quarantine list
	[[ "$output" == *"the quarantine is empty"* ]] || fail "the box is still listed"
	run "$WARD" quarantine prune --all --older-than 1d
	[ "$status" -eq 2 ] || fail "--all with --older-than was accepted"
	run "$WARD" quarantine --help
	[[ "$output" == *"restore BOX [PATH...]"* ]] || fail "--help does not list restore"
	run "$WARD" completion bash
	[[ "$output" == *quarantine* && "$output" == *restore* ]] || fail "no completion for ward quarantine"
}
