#!/usr/bin/env bats
# shellcheck shell=bats
#
# Red team, the rest of "seal the box": what a confined command may reach
# besides the workspace.
#
#   - ward's state directory (the session logs, their locks, the probe
#     cache, the guard's quarantine) is hidden: not listable, not
#     readable, no lock can be taken on a session log — on bwrap and
#     Landlock, as root and as nobody, and through the fs fence;
#   - the terminal settings a command changes (stty -echo, raw mode, the
#     window size) are put back when ward run ends: normally, at a timeout,
#     and when ward itself is stopped by a signal;
#   - $TMPDIR adds a writable root only when it is a directory the caller
#     owns under /tmp, /var/tmp or $XDG_RUNTIME_DIR; otherwise ward run and
#     ward config check name it in a warning, and it stays read-only.

load helpers
bats_require_minimum_version 1.5.0

setup() {
	e2e_setup
	rt_home rt
	unset XDG_RUNTIME_DIR
	RT_DIRS=()
}

teardown() {
	e2e_teardown
	rm -rf "$RT_HOME" "$RT_STATE" "${RT_DIRS[@]}"
}

require_runner() {
	require_runner_usable "$1"
}

as_user() {
	"${E2E_AS[@]}" env HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" "$@"
}

# --- the session store ------------------------------------------------------------

store_case() {
	local v=$1 who=$2 id log state
	require_runner "$v"
	command -v "$PY" >/dev/null || skip "no $PY"
	become "$who"
	id=$(as_user "$WARD" session new --mode workspace-write --cwd "$WS")
	state=$XDG_STATE_HOME/ward
	log=$state/sessions/$id.jsonl
	[ -f "$log" ] || fail "no session log at $log"
	ward_run "$v" workspace-write -c '
		cat "$1" && echo READ
		ls -a "$2"
		"$3" -c "import fcntl, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_SH)
print(\"LOCKED\")" "$1"
		true' sh "$log" "$state" "$PY"
	[[ "$output" != *READ* ]] || fail "a confined run read the session log"
	[[ "$output" != *sessions* && "$output" != *probe-cache* ]] ||
		fail "a confined run listed the state directory"
	[[ "$output" != *LOCKED* ]] || fail "a confined run locked the session log"
	# The denial report names it: a read refused there is the sandbox's
	# (under bwrap it reads as missing), not a plain missing file.
	ward_run "$v" workspace-write --json -c 'cat "$1"' sh "$log"
	jq -e --arg p "$log" '[.denials[] | select(.path == $p and
		.cause == "protected" and .operation == "read" and
		(.rule | test("state directory")))] | length == 1' \
		<<<"$output" >/dev/null ||
		fail "the denial report does not name the hidden session log"
	# The same run inside the session (its own store is hidden too).
	local -a flags
	read -r -a flags <<<"$(runner_flags "$v")"
	run "${E2E_AS[@]}" env HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" "$WARD" run --session "$id" \
		"${flags[@]}" -c 'cat "$1" && echo READ; echo RAN' sh "$log"
	printf '# session run: %s\n' "$output"
	[[ "$output" == *RAN* ]] || fail "the run in the session did not run"
	[[ "$output" != *READ* ]] || fail "a run in the session read its own log"
	# And the fs fence, in every mode.
	run "${E2E_AS[@]}" "$WARD" fs read -w "$WS" -m danger-full-access "$log"
	[ "$status" -eq 3 ] || fail "ward fs read of the session log: exit $status"
}

@test "bwrap: the session store is hidden (root)" { store_case bwrap root; }
@test "bwrap: the session store is hidden (nobody)" { store_case bwrap nobody; }
@test "landlock: the session store is hidden (root)" { store_case landlock root; }
@test "landlock: the session store is hidden (nobody)" { store_case landlock nobody; }

# --- the terminal --------------------------------------------------------------------

# Run the bash snippet $1 in a terminal (script), as the test's user; its
# output in $output.
in_terminal() {
	output=$(timeout -k 2 60 "${E2E_AS[@]}" env HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" WARD="$WARD" \
		RFLAGS="$2" WS="$WS" script -qec "bash -c '$1'" /dev/null \
		</dev/null 2>&1 | tr -d '\r')
	printf '# %s\n' "$output" | tail -n 20
}

# Before, then after: the settings (stty -g) and the size.
TTY_CHECK='stty sane; stty rows 30 cols 100
before="$(stty -g) $(stty size)"
RUN
after="$(stty -g) $(stty size)"
stty sane
if [ "$before" = "$after" ]; then echo TTY-SAME; else echo "TTY-DIFF: $before / $after"; fi'

tty_case() {
	local v=$1 who=$2 how=$3 snippet flags
	require_runner "$v"
	command -v script >/dev/null || skip "script(1) is not installed"
	become "$who"
	read -r -a flags <<<"$(runner_flags "$v")"
	case "$how" in
	exit) snippet='$WARD run $RFLAGS -m read-only -w $WS -c "stty -echo raw; stty rows 7 cols 42" </dev/tty' ;;
	timeout) snippet='$WARD run $RFLAGS -m read-only -w $WS --timeout 1 -c "stty -echo raw; stty rows 7 cols 42; sleep 30" </dev/tty' ;;
	signal)
		# ward is killed (SIGTERM) once the command has changed the
		# terminal (it says so through a file the test waits for).
		snippet='rm -f $WS/changed; $WARD run $RFLAGS -m workspace-write -w $WS -c "stty -echo raw; stty rows 7 cols 42; : > changed; sleep 30" </dev/tty & w=$!
for i in $(seq 200); do [ -e $WS/changed ] && break; sleep 0.05; done
kill -TERM $w; wait $w' ;;
	esac
	# The replacement quoted: bash 5.2 reads an unquoted & in it as the
	# matched text (patsub_replacement), and the snippet has && and &.
	in_terminal "${TTY_CHECK/RUN/"$snippet"}" "${flags[*]}"
	[[ "$output" == *TTY-SAME* ]] ||
		fail "the terminal settings changed inside the call were not put back ($how)"
}

@test "bwrap: stty -echo, raw mode and the window size are put back (root)" { tty_case bwrap root exit; }
@test "bwrap: stty -echo, raw mode and the window size are put back (nobody)" { tty_case bwrap nobody exit; }
@test "landlock: stty -echo, raw mode and the window size are put back (root)" { tty_case landlock root exit; }
@test "landlock: stty -echo, raw mode and the window size are put back (nobody)" { tty_case landlock nobody exit; }
@test "bwrap: the terminal is put back after a timeout" { tty_case bwrap root timeout; }
@test "landlock: the terminal is put back after a timeout (nobody)" { tty_case landlock nobody timeout; }
@test "bwrap: the terminal is put back when ward is killed by SIGTERM" { tty_case bwrap root signal; }
@test "landlock: the terminal is put back when ward is killed by SIGTERM (nobody)" { tty_case landlock nobody signal; }

# --- $TMPDIR ---------------------------------------------------------------------------

# A $TMPDIR ward refuses: not a writable root, and said so (by ward run
# before it runs, by ward config check), on every runner.
tmpdir_refused_case() {
	local v=$1 who=$2 dir
	require_runner "$v"
	become "$who"
	if [ "$who" = nobody ]; then
		# Under /var/tmp, but not the caller's.
		dir=$(mktemp -d /var/tmp/ward-rt-notmine.XXXXXX)
		chmod 0777 "$dir"
	else
		# The caller's, but a system place (not /tmp, /var/tmp or
		# $XDG_RUNTIME_DIR).
		dir=$(mktemp -d /run/ward-rt-sys.XXXXXX)
	fi
	RT_DIRS+=("$dir")
	E2E_WRAP=(env TMPDIR="$dir")
	ward_run "$v" workspace-write -c 'echo x > "$TMPDIR/f" && echo WROTE'
	E2E_WRAP=()
	[ ! -e "$dir/f" ] || fail "a write to the refused \$TMPDIR $dir reached the host"
	[[ "$stderr" == *"warning:"*"\$TMPDIR ($dir) is not a writable root"* ]] ||
		fail "ward run did not name the refused \$TMPDIR"
	run "${E2E_AS[@]}" env TMPDIR="$dir" HOME="$HOME" "$WARD" config check \
		-w "$WS" -m workspace-write
	[[ "$output" == *"\$TMPDIR ($dir) is not a writable root"* ]] ||
		fail "ward config check does not name it"
}

@test "bwrap: a \$TMPDIR outside /tmp, /var/tmp and \$XDG_RUNTIME_DIR is refused, loudly (root)" { tmpdir_refused_case bwrap root; }
@test "bwrap: a \$TMPDIR the caller does not own is refused, loudly (nobody)" { tmpdir_refused_case bwrap nobody; }
@test "landlock: a \$TMPDIR outside /tmp, /var/tmp and \$XDG_RUNTIME_DIR is refused, loudly (root)" { tmpdir_refused_case landlock root; }
@test "landlock: a \$TMPDIR the caller does not own is refused, loudly (nobody)" { tmpdir_refused_case landlock nobody; }

@test "a \$TMPDIR the caller owns under /var/tmp is a writable root, silently" {
	require_runner landlock
	local dir
	dir=$(mktemp -d /var/tmp/ward-rt-tmpdir.XXXXXX)
	RT_DIRS+=("$dir")
	E2E_WRAP=(env TMPDIR="$dir")
	ward_run landlock workspace-write -c 'echo x > "$TMPDIR/f"'
	E2E_WRAP=()
	assert_status 0
	[ -e "$dir/f" ] || fail "the write to \$TMPDIR did not reach the host"
	[[ "$stderr" != *TMPDIR* ]] || fail "a warning about a good \$TMPDIR"
}

# Hiding a path on Landlock grants read on the entries beside it, listed
# when the call is planned. An entry removed between the plan and the start
# (another process's temporary file) must not fail the call: those grants
# are optional (--ro-if-exists), and a gone entry only narrows.
