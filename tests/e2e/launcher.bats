#!/usr/bin/env bats
# shellcheck shell=bats
#
# End-to-end tests of the static launcher build/bin/landlock-run, driven
# directly (no ward in between). Each test gets $W with two directories:
# $W/rw (granted with --rw) and $W/out (not granted; only readable through
# --ro /). Where a test asserts a denial it first shows, when it can, that
# the same operation succeeds unconfined, so a denial cannot come from
# anything but the sandbox.

bats_require_minimum_version 1.5.0

# The build under test (make check-asan points this at its own tree).
LR="${WARD_BUILD:-$BATS_TEST_DIRNAME/../../build}/bin/landlock-run"

setup() {
	[ -x "$LR" ] || {
		echo "# $LR is missing: run make" >&2
		return 1
	}
	W=$BATS_TEST_TMPDIR
	mkdir -p "$W/rw" "$W/out"
	PROFILE=(--ro / --rw /dev/null --rw "$W/rw")
}

# Skip unless the kernel has Landlock at all; a broken probe still fails.
need_landlock() {
	run --separate-stderr "$LR" --probe
	case "$stderr" in
	*"Landlock is not supported"* | *"disabled at boot"*)
		skip "no Landlock on this kernel: $stderr"
		;;
	esac
	# The first line is the enforcement; the second what the network
	# options can rely on (checked below).
	PROBE_OUT=$(head -n 1 <<<"$output")
}

need_root() {
	[ "$(id -u)" = 0 ] || skip "needs root"
}

# $stderr has a fatal "landlock-run:" line (the info line excluded).
has_fatal_line() {
	grep -v '^landlock-run: partial enforcement' <<<"$stderr" |
		grep -q '^landlock-run: '
}

# --- probe, help, version -------------------------------------------------

@test "--probe restricts a child and reports the enforcement" {
	need_landlock
	run --separate-stderr "$LR" --probe
	echo "# stdout: $output" "# stderr: $stderr"
	[ "$status" = 0 ]
	if grep -q '^landlock-run: partial enforcement' <<<"$stderr"; then
		[ "$(head -n 1 <<<"$output")" = "landlock: partially enforced" ]
	else
		[ "$(head -n 1 <<<"$output")" = "landlock: fully enforced" ]
		[ -z "$stderr" ]
	fi
	# Network support: TCP rights from Landlock ABI 4.
	local abi
	abi=$(/usr/bin/python3 -c 'import ctypes; l=ctypes.CDLL(None); print(l.syscall(444, None, 0, 1))')
	if [ "$abi" -ge 4 ]; then
		[ "$(sed -n 2p <<<"$output")" = "landlock: network: tcp" ]
	else
		[ "$(sed -n 2p <<<"$output")" = "landlock: network: none" ]
	fi
	[ "$(wc -l <<<"$output")" = 2 ]
}

@test "--probe refuses extra arguments" {
	run --separate-stderr "$LR" --probe --ro /
	[ "$status" = 125 ]
	has_fatal_line
}

@test "--help and --version exit 0 on stdout" {
	run --separate-stderr "$LR" --help
	[ "$status" = 0 ]
	[[ "$output" == Usage:* ]]
	run --separate-stderr "$LR" --version
	[ "$status" = 0 ]
	[[ "$output" == "landlock-run "[0-9]* ]]
}

@test "the launcher is statically linked" {
	[ -z "${WARD_SANITIZE:-}" ] ||
		skip "the sanitizer lane (make check-asan) links the launcher dynamically: ASan has no static runtime"
	if command -v file >/dev/null; then
		run file -L "$LR"
		echo "# $output"
		[[ "$output" == *"statically linked"* || "$output" == *"static-pie linked"* ]]
	elif command -v ldd >/dev/null; then
		run ldd "$LR"
		echo "# $output"
		[[ "$output" == *"not a dynamic executable"* || "$output" == *"statically linked"* ]]
	else
		skip "neither file nor ldd is installed"
	fi
}

# --- writes ----------------------------------------------------------------

@test "a write outside the --rw roots is denied" {
	need_landlock
	run --separate-stderr "$LR" "${PROFILE[@]}" -- \
		sh -c "echo x > '$W/out/f'"
	echo "# status $status, stderr: $stderr"
	[ "$status" != 0 ]
	[ "$status" != 125 ]
	[[ "$stderr" == *"Permission denied"* ]]
	[ ! -e "$W/out/f" ]
}

@test "a write under --rw is allowed" {
	need_landlock
	run --separate-stderr "$LR" "${PROFILE[@]}" -- \
		sh -c "echo hello > '$W/rw/f' && cat '$W/rw/f'"
	[ "$status" = 0 ]
	[ "$output" = hello ]
	[ "$(cat "$W/rw/f")" = hello ]
}

@test "--rw /dev/null (a non-directory grant) is writable" {
	need_landlock
	run --separate-stderr "$LR" --ro / --rw /dev/null -- \
		sh -c 'echo x > /dev/null && echo ok'
	[ "$status" = 0 ]
	[ "$output" = ok ]
}

@test "the command's exit status and stdio pass through" {
	need_landlock
	run --separate-stderr "$LR" --ro / -- sh -c 'read l; echo "got $l"; exit 7' <<<"ping"
	[ "$status" = 7 ]
	[ "$output" = "got ping" ]
}

@test "a symlink in a --rw dir pointing outside does not allow writing" {
	need_landlock
	echo orig >"$W/out/target"
	ln -s "$W/out/target" "$W/rw/link"
	run --separate-stderr "$LR" "${PROFILE[@]}" -- \
		sh -c "echo pwned > '$W/rw/link'"
	echo "# status $status, stderr: $stderr"
	[ "$status" != 0 ]
	[[ "$stderr" == *"Permission denied"* ]]
	[ "$(cat "$W/out/target")" = orig ]
}

@test "a hard link to a file outside the --rw dir cannot be created" {
	need_landlock
	echo orig >"$W/out/victim"
	# Unconfined, the same link works (same filesystem).
	ln "$W/out/victim" "$W/out/control"
	run --separate-stderr "$LR" "${PROFILE[@]}" -- \
		ln "$W/out/victim" "$W/rw/hardlink"
	echo "# status $status, stderr: $stderr"
	[ "$status" != 0 ]
	[[ "$stderr" == *"Invalid cross-device link"* || "$stderr" == *"Permission denied"* ]]
	[ ! -e "$W/rw/hardlink" ]
}

@test "a file cannot be renamed out of the --rw dir" {
	need_landlock
	echo data >"$W/rw/f"
	run --separate-stderr "$LR" "${PROFILE[@]}" -- mv "$W/rw/f" "$W/out/f"
	echo "# status $status, stderr: $stderr"
	[ "$status" != 0 ]
	[ -e "$W/rw/f" ]
	[ ! -e "$W/out/f" ]
}

@test "a rename inside the --rw dir works" {
	need_landlock
	echo data >"$W/rw/f"
	mkdir "$W/rw/sub"
	run --separate-stderr "$LR" "${PROFILE[@]}" -- mv "$W/rw/f" "$W/rw/sub/g"
	[ "$status" = 0 ]
	[ -e "$W/rw/sub/g" ]
}

@test "a device node cannot be created even under --rw, even by root" {
	need_landlock
	need_root
	mknod "$W/out/control" c 1 3 2>/dev/null ||
		skip "mknod is not permitted here even unconfined"
	run --separate-stderr "$LR" "${PROFILE[@]}" -- mknod "$W/rw/null" c 1 3
	echo "# status $status, stderr: $stderr"
	[ "$status" != 0 ]
	# EACCES is Landlock's refusal (MAKE_CHAR withheld); the dropped
	# CAP_MKNOD alone would have said "Operation not permitted".
	[[ "$stderr" == *"Permission denied"* ]]
	[ ! -e "$W/rw/null" ]
	# A FIFO in the same place is fine: the grant itself works.
	run --separate-stderr "$LR" "${PROFILE[@]}" -- mkfifo "$W/rw/fifo"
	[ "$status" = 0 ]
	[ -p "$W/rw/fifo" ]
}

# --- process hygiene -------------------------------------------------------

@test "a root caller's command has no capabilities and no_new_privs" {
	need_landlock
	need_root
	grep -q '^CapEff:[[:space:]]*0*[1-9a-f]' /proc/self/status ||
		skip "the caller has no capabilities to lose"
	run --separate-stderr "$LR" --ro / -- grep -E '^(Cap|NoNewPrivs)' /proc/self/status
	echo "# $output"
	[ "$status" = 0 ]
	[ "$(grep -c '^Cap' <<<"$output")" = 5 ]
	[ -z "$(grep '^Cap' <<<"$output" | grep -v $'\t0000000000000000$')" ]
	grep -q $'^NoNewPrivs:\t1$' <<<"$output"
}

@test "descriptors opened by the caller are not inherited" {
	need_landlock
	exec 7</etc/passwd
	# Unconfined, fd 7 reaches the child: the check below can fail.
	run sh -c 'test -e /proc/self/fd/7 && echo open || echo closed'
	[ "$output" = open ]
	run --separate-stderr "$LR" --ro / -- \
		sh -c 'test -e /proc/self/fd/7 && echo open || echo closed'
	exec 7<&-
	[ "$status" = 0 ]
	[ "$output" = closed ]
	run --separate-stderr "$LR" --ro / -- ls /proc/self/fd
	echo "# fds: $output"
	[ -z "$(grep -x 7 <<<"$output")" ]
}

@test "the command cannot signal the caller (signal scoping)" {
	need_landlock
	[ "$PROBE_OUT" = "landlock: fully enforced" ] ||
		skip "signal scoping needs Landlock ABI 6"
	sleep 60 3>&- &
	local victim=$!
	disown "$victim" # no job-control chatter when it is killed below
	run sh -c "kill -0 $victim && echo reachable"
	[ "$output" = reachable ]
	run --separate-stderr "$LR" --ro / -- sh -c "kill -TERM $victim"
	echo "# status $status, stderr: $stderr"
	local alive=no
	kill -0 "$victim" 2>/dev/null && alive=yes
	kill -KILL "$victim" 2>/dev/null || true
	[ "$status" != 0 ]
	# Landlock's scope (EPERM), or, as root, the keeper's pid namespace
	# where the caller has no pid at all (ESRCH).
	[[ "$stderr" == *"Operation not permitted"* ||
		"$stderr" == *"No such process"* ]]
	[ "$alive" = yes ]
}

# --- launcher failures: exit 125 and one "landlock-run:" line -------------

@test "bad usage exits 125 with a landlock-run: line" {
	local -a cases=(
		"--ro / true"
		"--ro / --"
		"--bogus -- true"
		"--ro"
		"--rw -- true"
		"--hide"
		"--hide-ro -- true"
		"--probe --hide /tmp"
		"--kept --ro / -- true"
		"--kept --pid-fd 1 --unconfined -- true"
		"--probe --kept"
		""
	)
	local c
	for c in "${cases[@]}"; do
		# shellcheck disable=SC2086
		run --separate-stderr "$LR" $c
		echo "# landlock-run $c -> $status: $stderr"
		[ "$status" = 125 ]
		has_fatal_line
		[ -z "$output" ]
	done
}

@test "a missing --ro or --rw path exits 125 naming the path" {
	need_landlock
	run --separate-stderr "$LR" --ro / --rw "$W/nope" -- touch "$W/rw/ran"
	echo "# $stderr"
	[ "$status" = 125 ]
	has_fatal_line
	[[ "$stderr" == *"$W/nope"* ]]
	[ ! -e "$W/rw/ran" ]
	run --separate-stderr "$LR" --ro "$W/also-nope" -- true
	[ "$status" = 125 ]
	[[ "$stderr" == "landlock-run: "*"$W/also-nope"* ]]
}

@test "--ro-if-exists and --rw-if-exists skip a path that is gone, and grant one that is there" {
	need_landlock
	run --separate-stderr "$LR" --ro / --rw-if-exists "$W/nope" \
		--ro-if-exists "$W/also-nope" --rw-if-exists "$W/rw" \
		-- touch "$W/rw/ran"
	echo "# $stderr"
	[ "$status" = 0 ]
	[ -e "$W/rw/ran" ]
	# An optional grant is still only the grant it names.
	run --separate-stderr "$LR" --ro / --rw-if-exists "$W/nope" \
		-- touch "$W/out/x"
	[ "$status" != 0 ]
	[ ! -e "$W/out/x" ]
}

# --hide / --hide-ro straight from the launcher: inside the --rw root a
# hidden file cannot be read or written, a hidden directory is empty and
# read-only, an --hide-ro file is readable and not writable; a path that is
# gone or a symbolic link is skipped; root and nobody alike.
hide_case() {
	local -a as=("$@")
	mkdir -p "$W/rw/d" "$W/rw/ro"
	echo secret >"$W/rw/f"
	echo inside >"$W/rw/d/x"
	echo keep >"$W/rw/ro/k"
	ln -sf f "$W/rw/link"
	echo pub >"$W/rw/pub"
	chmod -R a+rwX "$W"
	# Unconfined, all of it is readable and writable.
	"${as[@]}" cat "$W/rw/f" "$W/rw/d/x" >/dev/null
	run --separate-stderr "${as[@]}" "$LR" --ro / --rw /dev/null --rw "$W/rw" \
		--hide "$W/rw/f" --hide "$W/rw/d" --hide-ro "$W/rw/ro" \
		--hide "$W/rw/gone" --hide "$W/rw/link" -- sh -c '
		cat "$1/f" 2>/dev/null && echo READ-F
		(echo x >"$1/f") 2>/dev/null && echo WROTE-F
		[ -z "$(ls -A "$1/d")" ] || echo LISTED-D
		touch "$1/d/new" 2>/dev/null && echo CREATED-D
		cat "$1/ro/k" >/dev/null || echo UNREADABLE-RO
		(echo x >"$1/ro/k") 2>/dev/null && echo WROTE-RO
		touch "$1/ro/new" 2>/dev/null && echo CREATED-RO
		echo more >>"$1/pub" || echo PUB
		echo end' _ "$W/rw"
	echo "# ${as[*]}: $status: $output / $stderr"
	[ "$status" = 0 ]
	[ "$output" = end ]
	[ "$(cat "$W/rw/f")" = secret ]
	[ "$(cat "$W/rw/ro/k")" = keep ]
	[ ! -e "$W/rw/d/new" ]
	[ "$(tail -1 "$W/rw/pub")" = more ]
}

@test "--hide and --hide-ro cover paths inside an --rw root (root)" {
	need_landlock
	need_root
	hide_case
}

@test "--hide and --hide-ro cover paths inside an --rw root (nobody)" {
	need_landlock
	need_root
	command -v setpriv >/dev/null || skip "setpriv not installed"
	# Somewhere nobody can reach (the test's own directory is not).
	W=$(mktemp -d /var/tmp/ward-launcher-hide.XXXXXX)
	chmod 0755 "$W"
	mkdir -p "$W/rw"
	hide_case setpriv --reuid=65534 --regid=65534 --clear-groups ||
		{ rm -rf "$W"; return 1; }
	rm -rf "$W"
}

@test "--hide where no user namespace can be made exits 125 (nobody)" {
	need_landlock
	need_root
	local nu=$BATS_TEST_DIRNAME/nouserns.py
	W=$(mktemp -d /var/tmp/ward-launcher-hide.XXXXXX)
	mkdir -p "$W/rw"
	touch "$W/rw/f"
	chmod -R a+rwX "$W"
	run --separate-stderr "$nu" setpriv --reuid=65534 --regid=65534 \
		--clear-groups "$LR" --ro / --rw "$W/rw" --hide "$W/rw/f" \
		-- touch "$W/rw/ran"
	local ran=0
	[ -e "$W/rw/ran" ] && ran=1
	rm -rf "$W"
	[ "$status" != 77 ] || skip "nouserns.py: not x86_64"
	echo "# $stderr"
	[ "$status" = 125 ]
	has_fatal_line
	[[ "$stderr" == *"namespace"* ]]
	[ "$ran" = 0 ]
}

@test "a command that is not found exits 125 with a landlock-run: line" {
	need_landlock
	run --separate-stderr "$LR" --ro / -- ward-no-such-command-xyz
	echo "# $stderr"
	[ "$status" = 125 ]
	[ "$stderr" = "landlock-run: ward-no-such-command-xyz: command not found" ]
	run --separate-stderr "$LR" --ro / -- "$W/out/missing"
	[ "$status" = 125 ]
	has_fatal_line
}

@test "a full enforcement prints no info line" {
	need_landlock
	[ "$PROBE_OUT" = "landlock: fully enforced" ] ||
		skip "this kernel enforces partially"
	run --separate-stderr "$LR" --ro / -- true
	[ "$status" = 0 ]
	[ -z "$stderr" ]
}

# --- --kept: the caller is the keeper -----------------------------------------

# kept_run ARGS...: run the launcher with --kept, its report in $W/report
# (fd 3), stdout in $output, stderr in $stderr.
kept_run() {
	run --separate-stderr "$LR" --kept --pid-fd 3 "${PROFILE[@]}" "$@" 3>"$W/report"
	echo "# status $status, stderr: $stderr, report: $(tr '\n' ' ' <"$W/report")"
}

# Wait (bounded) until no process whose command line holds @1 is left.
gone() {
	local i
	for i in $(seq 100); do
		pgrep -f -- "$1" >/dev/null || return 0
		sleep 0.05
	done
	pgrep -af -- "$1" >&2
	return 1
}

@test "--kept: one process confines and supervises, sweeps what the command left, reports its end" {
	need_landlock
	local mark="sleep 3$RANDOM"
	kept_run -- sh -c "echo \$PPID; (setsid $mark &); exit 3"
	[ "$status" = 3 ]
	# No keeper between: the command's parent is the launcher itself,
	# whose pid opens the report (no pid namespace without one from the
	# caller).
	[ "$(head -n 1 "$W/report")" = "$output" ]
	[ "$(tail -n 1 "$W/report")" = "exit 768" ]
	gone "$mark" || fail "the setsid'd child outlived the kept launcher"
	# A signal is the command's, raised again.
	kept_run -- sh -c 'kill -TERM $$'
	[ "$status" = 143 ]
	[ "$(tail -n 1 "$W/report")" = "exit 15" ]
	# Still confined: the write outside --rw fails.
	kept_run -- sh -c "echo x >'$W/out/f'"
	[ "$status" != 0 ] && [ ! -e "$W/out/f" ]
}

@test "--kept: SIGRTMAX, or the report's reader going away, ends the whole tree" {
	need_landlock
	local mark="sleep 4$RANDOM" lp
	"$LR" --kept --pid-fd 3 "${PROFILE[@]}" -- sh -c "(setsid $mark &); $mark" \
		3>"$W/report" 2>"$W/err" &
	lp=$!
	for _ in $(seq 100); do
		[ "$(pgrep -fc -- "$mark")" -ge 2 ] && break
		sleep 0.05
	done
	kill -RTMIN+30 "$lp" 2>/dev/null || kill -s RTMAX "$lp"
	local st=0
	wait "$lp" || st=$?
	echo "# after SIGRTMAX: $st, report: $(tr '\n' ' ' <"$W/report")"
	[ "$st" = 137 ]
	[ "$(tail -n 1 "$W/report")" = "exit 9" ]
	gone "$mark" || fail "SIGRTMAX left a process of the tree"
	# The reader closes its end: the launcher ends the tree, says so.
	mkfifo "$W/fifo"
	"$LR" --kept --pid-fd 3 "${PROFILE[@]}" -- sh -c "(setsid $mark &); $mark" \
		3>"$W/fifo" 2>"$W/err" &
	lp=$!
	exec 4<"$W/fifo"
	for _ in $(seq 100); do
		[ "$(pgrep -fc -- "$mark")" -ge 2 ] && break
		sleep 0.05
	done
	exec 4<&-
	st=0
	wait "$lp" || st=$?
	echo "# after the reader left: $st, $(cat "$W/err")"
	[ "$st" = 125 ]
	grep -q "its caller (pid [0-9]*) died while the command ran" "$W/err"
	gone "$mark" || fail "a caller gone left a process of the tree"
}

@test "--kept as init of a pid namespace the caller made: the command sees its own, the status is on the report (root)" {
	need_landlock
	need_root
	command -v unshare >/dev/null || skip "no unshare(1)"
	# unshare --fork: its child, pid 1 of the new namespace, execs the
	# launcher (as ward's clone does).
	run --separate-stderr unshare --pid --fork "$LR" --kept --pid-fd 3 "${PROFILE[@]}" \
		-- sh -c 'echo $$; cd /proc && echo [0-9]*; kill -TERM $$' 3>"$W/report"
	echo "# status $status, out $output, stderr: $stderr, report: $(tr '\n' ' ' <"$W/report")"
	# The command is pid 2 (init's first child), and sees its namespace's
	# processes only: init and itself (the shell's own glob, no child
	# that may or may not have started).
	[ "$(printf '%s' "$output" | tr '\n' ' ')" = "2 1 2" ]
	[ "$(head -n 1 "$W/report")" = 0 ]
	# Init cannot raise SIGTERM on itself: it exits 128 + 15, and the
	# report holds the command's real status.
	[ "$status" = 143 ]
	[ "$(tail -n 1 "$W/report")" = "exit 15" ]
}
