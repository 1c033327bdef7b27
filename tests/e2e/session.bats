#!/usr/bin/env bats
# shellcheck shell=bats
#
# Sessions and escalation from the command line: `ward session …`,
# `ward run --session`, `ward fs --session`, and `--escalate` with its
# approval prompt on a real terminal (tmux). Every escalation outcome is
# checked by its exact text and by what is on disk afterwards (did the
# command run?), and the session log alone must tell the story.
#
# Each test has its own state directory (XDG_STATE_HOME) and workspace
# under /var/tmp (not /tmp: /tmp is a writable root of workspace-write).

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
WARD=${WARD:-$BUILD/bin/ward}
PY=/usr/bin/python3

# The CLI's hints name the CLI's own flags, never sandbox_permissions.
HINT='retry this exact command once with ward run --escalate MODE --justification TEXT (the narrowest wider MODE that suffices); the approval prompt asks the user'
HINT_OP='retry this exact operation once with ward fs OPERATION … --escalate MODE --justification TEXT (the narrowest wider MODE that suffices); the approval prompt asks the user'

setup_file() {
	[ -x "$WARD" ] || return 0
	local probe
	probe=$("$WARD" probe --json 2>/dev/null) || true
	SESSION_USABLE=$(printf '%s' "$probe" | "$PY" -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    sys.exit(0)
print(" ".join(c["runner"] for c in d["chain"] if c["usable"]))')
	export SESSION_USABLE
}

setup() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	"$WARD" session --help >/dev/null 2>&1 ||
		skip "this ward has no 'session' subcommand"
	BASE=$(mktemp -d /var/tmp/ward-session-e2e.XXXXXX)
	WS=$BASE/ws
	mkdir -p "$WS"
	export XDG_STATE_HOME=$BASE/state
	# No user file of the person running the tests.
	export XDG_CONFIG_HOME=$BASE/config
	unset TMPDIR
	TMUX_SOCK=
}

teardown() {
	if [ -n "${TMUX_SOCK:-}" ]; then
		tmux -L "$TMUX_SOCK" kill-server 2>/dev/null || true
	fi
	rm -rf "${BASE:-/nonexistent}"
}

require_runner() {
	[ -n "${SESSION_USABLE:-}" ] ||
		skip "no runner can confine on this machine (ward probe)"
}

new_session() { # new_session [ARGS...] -> $SID
	SID=$("$WARD" session new --cwd "$WS" "$@")
	[[ "$SID" =~ ^[0-9a-f]{16}$ ]] || fail "bad session id '$SID'"
	LOG=$XDG_STATE_HOME/ward/sessions/$SID.jsonl
}

fail() {
	printf 'FAIL: %s\n' "$*"
	return 1
}

# The event types of the session log, one line, space-separated.
log_types() {
	"$WARD" session log "$SID" --json | "$PY" -c '
import json, sys
print(" ".join(json.loads(l)["type"] for l in sys.stdin))'
}

# Field KEY of the last event of TYPE in the log.
last_field() {
	"$WARD" session log "$SID" --json | "$PY" -c '
import json, sys
t, k = sys.argv[1], sys.argv[2]
v = None
for l in sys.stdin:
    e = json.loads(l)
    if e["type"] == t:
        v = e.get(k)
print(json.dumps(v) if not isinstance(v, str) else v)' "$1" "$2"
}

# What `ward session new` writes: the header and the knobs in force.
NEW_LOG="session/header sandbox/mode approval/policy"

last_line() { # the last line of $stderr
	printf '%s\n' "$stderr" | tail -n 1
}

# --- ward session ------------------------------------------------------------

@test "session new, show, list: a random id, the cwd, the defaults" {
	new_session
	run -0 --separate-stderr "$WARD" session show "$SID"
	[[ "$output" == *"cwd:       $WS"* ]]
	[[ "$output" == *"mode:      read-only (session)"* ]]
	[[ "$output" == *"approval:  ask (session)"* ]]
	[[ "$output" == *"preset:    read-only"* ]]
	run -0 --separate-stderr "$WARD" session show "$SID" --json
	printf '%s' "$output" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["id"] == sys.argv[1] and d["cwd"] == sys.argv[2], d
assert (d["mode"], d["approval"], d["preset"]) == ("read-only", "ask", "read-only"), d
assert d["events"] == 2' "$SID" "$WS"
	# The log file: 0600, the header and the knobs in force.
	[ "$(stat -c %a "$LOG")" = 600 ]
	[ "$(wc -l <"$LOG")" = 3 ]
	local other=$SID
	new_session
	[ "$SID" != "$other" ]
	run -0 "$WARD" session list
	[[ "$output" == *"$SID"* && "$output" == *"$other"* ]]
}

@test "session new records the mode and approval in force, not a reference to the default" {
	new_session --mode read-only --approval ask
	[ "$(log_types)" = "$NEW_LOG" ]
	new_session --mode workspace-write --approval never
	[ "$(log_types)" = "$NEW_LOG" ]
	run -0 "$WARD" session show "$SID"
	[[ "$output" == *"mode:      workspace-write (session)"* ]]
	[[ "$output" == *"approval:  never (session)"* ]]
	[[ "$output" == *"preset:    custom"* ]]
	# Without --mode: ward.yml's mode in force now is recorded, and a later
	# change of the user default does not move the session.
	mkdir -p "$XDG_CONFIG_HOME/ward"
	printf 'mode: workspace-write\n' >"$XDG_CONFIG_HOME/ward/config.yml"
	new_session
	[ "$(last_field sandbox/mode mode)" = workspace-write ]
	printf 'mode: read-only\n' >"$XDG_CONFIG_HOME/ward/config.yml"
	run -0 "$WARD" session mode "$SID"
	[ "$output" = workspace-write ]
}

@test "a failed session new leaves no session behind" {
	mkdir -p "$XDG_CONFIG_HOME/ward"
	printf 'mode: sideways\n' >"$XDG_CONFIG_HOME/ward/config.yml"
	run -125 --separate-stderr "$WARD" session new --cwd "$WS"
	[[ "$stderr" == *"invalid mode"* ]]
	mkdir -p "$WS/.ward"
	rm "$XDG_CONFIG_HOME/ward/config.yml"
	printf 'colour: blue\n' >"$WS/.ward/config.yml"
	run -125 --separate-stderr "$WARD" session new --cwd "$WS"
	run -2 --separate-stderr "$WARD" session new --cwd "$BASE/missing"
	[ ! -e "$XDG_STATE_HOME/ward/sessions" ] ||
		[ -z "$(ls -A "$XDG_STATE_HOME/ward/sessions")" ]
	run -0 "$WARD" session list
	[ -z "$output" ]
}

@test "session list survives a session whose directory was deleted" {
	local gone=$BASE/gone
	mkdir -p "$gone"
	new_session
	local keep=$SID
	SID=$("$WARD" session new --cwd "$gone" --mode workspace-write)
	rmdir "$gone"
	run -0 --separate-stderr "$WARD" session list
	[[ "$output" == *"$keep"*"$WS"* ]]
	[[ "$output" == *"$SID"*"workspace-write"*"$gone (missing)"* ]]
	run -0 --separate-stderr "$WARD" session list --json
	printf '%s' "$output" | "$PY" -c '
import json, sys
d = {s["id"]: s for s in json.load(sys.stdin)}
assert d[sys.argv[1]]["cwd_exists"] is False and d[sys.argv[1]]["mode"] == "workspace-write", d
assert d[sys.argv[2]]["cwd_exists"] is True, d' "$SID" "$keep"
	run -0 --separate-stderr "$WARD" session show "$SID"
}

@test "session list survives a corrupt or empty session log: the rest is listed, the bad one named, and rm removes it" {
	local d=$XDG_STATE_HOME/ward/sessions bad=0123456789abcdef empty=fedcba9876543210
	new_session
	echo junk >"$d/$bad.jsonl"
	: >"$d/$empty.jsonl"
	run -125 --separate-stderr "$WARD" session list
	[[ "$output" == *"$SID"*"$WS"* ]]
	[[ "$stderr" == *"session $bad: "*"$bad.jsonl: line 1"* ]]
	[[ "$stderr" == *"session $empty: "*"no session header"* ]]
	run -125 --separate-stderr "$WARD" session list --json
	[ "$(jq -r '[.[].id] | join(" ")' <<<"$output")" = "$SID" ]
	run -0 --separate-stderr "$WARD" session rm "$bad" "$empty"
	run -0 --separate-stderr "$WARD" session list
	[ -z "$stderr" ]
}

@test "session rm removes sessions; unknown ids are usage errors" {
	new_session
	local a=$SID a_log=$LOG
	new_session
	run -0 --separate-stderr "$WARD" session rm "$a"
	[ ! -e "$a_log" ] && [ -e "$LOG" ]
	run -2 --separate-stderr "$WARD" session show "$a"
	run -2 --separate-stderr "$WARD" session rm "$a"
	[[ "$stderr" == *"no session $a"* ]]
	run -2 --separate-stderr "$WARD" session rm ../x
	run -2 --separate-stderr "$WARD" session rm
	run -0 "$WARD" session list
	[[ "$output" == *"$SID"* && "$output" != *"$a"* ]]
	# Several at once; an unknown one does not stop the others.
	new_session
	local b=$SID
	run -2 --separate-stderr "$WARD" session rm "$a" "$b"
	[ ! -e "$XDG_STATE_HOME/ward/sessions/$b.jsonl" ]
	"$WARD" session --help | grep -q '^  rm ID'
}

# A session whose log is a copy of $BASE/template under id $1, created
# at $2.
forge_session() {
	sed -e "1s/\"id\":\"[^\"]*\"/\"id\":\"$1\"/" \
		-e "1s/\"created\":\"[^\"]*\"/\"created\":\"$2\"/" \
		"$BASE/template" >"$XDG_STATE_HOME/ward/sessions/$1.jsonl"
}

@test "session list is oldest first; a unique id prefix is taken wherever an id is" {
	new_session
	mv "$LOG" "$BASE/template"
	# Ids in the reverse order of their creation times.
	forge_session ffff0000aaaa0001 2020-01-01T00:00:00.000Z
	forge_session eeee0000aaaa0002 2021-01-01T00:00:00.000Z
	forge_session dddd0000aaaa0003 2022-01-01T00:00:00.000Z
	forge_session dddd0000bbbb0004 2023-01-01T00:00:00.000Z
	run -0 --separate-stderr "$WARD" session list
	[ "$(printf '%s\n' "$output" | sed 1d | cut -d' ' -f1 | tr '\n' ' ')" = \
		"ffff0000aaaa0001 eeee0000aaaa0002 dddd0000aaaa0003 dddd0000bbbb0004 " ]
	run -0 --separate-stderr "$WARD" session list --json
	[ "$(jq -r '.[].id' <<<"$output" | tr '\n' ' ')" = \
		"ffff0000aaaa0001 eeee0000aaaa0002 dddd0000aaaa0003 dddd0000bbbb0004 " ]
	# A prefix names its one session ...
	run -0 --separate-stderr "$WARD" session show ffff --json
	[ "$(jq -r .id <<<"$output")" = ffff0000aaaa0001 ]
	run -0 --separate-stderr "$WARD" session mode eee workspace-write
	run -0 --separate-stderr "$WARD" session mode eeee0000aaaa0002
	[ "$output" = workspace-write ]
	run -0 --separate-stderr "$WARD" run --session dddd0000b -- true
	grep -q '"type":"call/result"' "$XDG_STATE_HOME/ward/sessions/dddd0000bbbb0004.jsonl"
	echo hi >"$WS/f"
	run -0 --separate-stderr "$WARD" fs read --session ff f
	[ "$output" = hi ]
	# ... an ambiguous one names the sessions it could be, and does
	# nothing.
	run -2 --separate-stderr "$WARD" session show dddd
	[[ "$stderr" == *"session id prefix 'dddd' is ambiguous: 2 sessions begin with it (dddd0000aaaa0003, dddd0000bbbb0004)"* ]]
	run -2 --separate-stderr "$WARD" session rm dddd
	[ -e "$XDG_STATE_HOME/ward/sessions/dddd0000aaaa0003.jsonl" ]
	run -2 --separate-stderr "$WARD" run --session dddd -- true
	[[ "$stderr" == *ambiguous* ]]
	run -2 --separate-stderr "$WARD" mcp --session d </dev/null
	[[ "$stderr" == *ambiguous* ]]
	run -0 --separate-stderr "$WARD" session rm dddd0000a eee
	[ ! -e "$XDG_STATE_HOME/ward/sessions/dddd0000aaaa0003.jsonl" ]
	[ ! -e "$XDG_STATE_HOME/ward/sessions/eeee0000aaaa0002.jsonl" ]
	# An exact id wins over a longer one it begins.
	forge_session dddd 2024-01-01T00:00:00.000Z
	run -0 --separate-stderr "$WARD" session show dddd --json
	[ "$(jq -r .id <<<"$output")" = dddd ]
	"$WARD" session --help | grep -q 'unique prefix\|any prefix'
}

@test "session prune --older-than removes idle sessions only" {
	new_session
	local old=$SID old_log=$LOG
	new_session
	touch -d '3 days ago' "$old_log"
	run -0 --separate-stderr "$WARD" session prune --older-than 2d
	[ "$output" = "removed $old" ]
	[ ! -e "$old_log" ] && [ -e "$LOG" ]
	run -0 --separate-stderr "$WARD" session prune --older-than 1h --json
	[ "$output" = '{"removed":[],"busy":[]}' ]
	run -2 --separate-stderr "$WARD" session prune
	[[ "$stderr" == *"--older-than"* ]]
	for bad in 3x -1d 2dd ''; do
		run -2 --separate-stderr "$WARD" session prune --older-than "$bad"
	done
	[ -e "$LOG" ]
	"$WARD" session --help | grep -q 'prune --older-than DURATION'
}

@test "session ids are validated and unknown sessions are usage errors" {
	for bad in ../x a/b 'a b' '' "$(printf 'x%.0s' {1..65})"; do
		run -2 --separate-stderr "$WARD" session show "$bad"
	done
	run -2 --separate-stderr "$WARD" session show nosuchsession
	[[ "$stderr" == *"nosuchsession"* ]]
	run -2 --separate-stderr "$WARD" run --session ../../etc -- true
	run -2 --separate-stderr "$WARD" session frobnicate
	run -2 --separate-stderr "$WARD" session new --mode sideways
	run -2 --separate-stderr "$WARD" session new --cwd "$BASE/missing"
}

@test "session mode/approval: setting the value in force appends nothing" {
	new_session
	run -0 "$WARD" session mode "$SID"
	[ "$output" = read-only ]
	run -0 "$WARD" session mode "$SID" read-only
	[ "$(wc -l <"$LOG")" = 3 ]
	run -0 "$WARD" session mode "$SID" workspace-write
	[ "$output" = workspace-write ]
	run -0 "$WARD" session mode "$SID" workspace-write
	[ "$(wc -l <"$LOG")" = 4 ]
	run -0 "$WARD" session approval "$SID" never
	run -0 "$WARD" session approval "$SID" never
	[ "$(wc -l <"$LOG")" = 5 ]
	# A new process reads the same state from the log alone.
	run -0 "$WARD" session approval "$SID"
	[ "$output" = never ]
	run -0 "$WARD" session mode "$SID"
	[ "$output" = workspace-write ]
	run -2 --separate-stderr "$WARD" session mode "$SID" root
	run -2 --separate-stderr "$WARD" session approval "$SID" sometimes
	[ "$(wc -l <"$LOG")" = 5 ]
}

@test "session preset: switch, custom, and only changed knobs appended" {
	new_session
	run -0 "$WARD" session preset "$SID"
	[ "$output" = read-only ]
	run -0 "$WARD" session preset "$SID" workspace-write
	[ "$output" = workspace-write ]
	[ "$(log_types)" = "$NEW_LOG sandbox/mode" ]
	run -0 "$WARD" session preset "$SID" danger-full-access
	[ "$(log_types)" = "$NEW_LOG sandbox/mode sandbox/mode approval/policy" ]
	run -0 "$WARD" session mode "$SID" read-only
	run -0 "$WARD" session preset "$SID"
	[ "$output" = custom ]
	run -2 --separate-stderr "$WARD" session preset "$SID" custom
	[[ "$stderr" == *"'custom' cannot be set"* ]]
	run -2 --separate-stderr "$WARD" session preset "$SID" nope
	[[ "$stderr" == *"unknown preset 'nope'"* ]]
	run -0 "$WARD" session preset "$SID" read-only
	run -0 "$WARD" session preset "$SID"
	[ "$output" = read-only ]
	run -0 "$WARD" session presets
	[[ "${lines[0]}" == "read-only "* ]]
	[[ "${lines[2]}" == *"danger-full-access"*"never" ]]
}

@test "a torn last line is ignored, then repaired; a corrupt middle line is an error" {
	new_session
	"$WARD" session mode "$SID" workspace-write >/dev/null
	printf '{"type":"call/start","call":"x' >>"$LOG"
	run -0 "$WARD" session show "$SID"
	[[ "$output" == *"mode:      workspace-write (session)"* ]]
	[[ "$output" == *"torn last line"* ]]
	run -0 "$WARD" session approval "$SID" never
	[ "$(log_types)" = "$NEW_LOG sandbox/mode log/repaired approval/policy" ]
	[ "$(tail -c 1 "$LOG" | od -An -c | tr -d ' ')" = '\n' ]
	printf 'garbage\n{"type":"note"}\n' >>"$LOG"
	run -125 --separate-stderr "$WARD" session show "$SID"
	[[ "$stderr" == *"line 7"* ]]
	run -125 --separate-stderr "$WARD" run --session "$SID" -- true
}

@test "many processes appending to one log: nothing lost, nothing interleaved" {
	new_session --mode danger-full-access
	local pids=() i
	for i in $(seq 1 16); do
		"$WARD" run --session "$SID" -- true &
		pids+=($!)
	done
	for i in "${pids[@]}"; do
		wait "$i"
	done
	"$WARD" session log "$SID" --json | "$PY" -c '
import json, sys, collections
c = collections.Counter(json.loads(l)["type"] for l in sys.stdin)
assert c["call/start"] == 16 and c["call/result"] == 16, c'
}

# The fdatasync(2) calls of one ward process, counted by strace (the
# process itself only: the sandboxed command is not traced).
count_syncs() { # count_syncs CMD... -> $SYNCS
	local out=$BASE/strace.out
	# LeakSanitizer cannot run in a traced process (make check-asan).
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -qq -o "$out" -e trace=fdatasync,fsync "$@" \
		>/dev/null 2>&1 || true
	SYNCS=$(grep -c '^f\(data\)\?sync(' "$out" || true)
}

@test "a call's events are not synced one by one: one fdatasync, at close" {
	require_runner
	command -v strace >/dev/null || skip "strace is not installed"
	new_session
	# Before issue 18 the call/start and the call/result were each synced
	# (two per call, 0.8-24 ms each under load); now the handle syncs
	# once, when it is closed.
	count_syncs "$WARD" run --session "$SID" -- true
	[ "$SYNCS" = 1 ] || fail "ward run --session synced $SYNCS times"
	[ "$(log_types)" = "$NEW_LOG call/start call/result" ]
	# A knob event changes state: synced as it is written.
	count_syncs "$WARD" session mode "$SID" workspace-write
	[ "$SYNCS" = 1 ] || fail "session mode synced $SYNCS times"
}

@test "a kill -9 of ward in the middle of a call loses no event it wrote" {
	require_runner
	new_session
	local pid i
	"$WARD" run --session "$SID" -- sh -c 'sleep 30' >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 1 200); do
		grep -q '"type":"call/start"' "$LOG" && break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" || true
	# Written with one write(2), not yet synced: in the file all the same.
	[ "$(log_types)" = "$NEW_LOG call/start" ]
	run -0 "$WARD" session show "$SID"
	[[ "$output" != *"torn"* ]]
	# The next call appends after it, whole.
	run -0 "$WARD" run --session "$SID" -- true
	[ "$(log_types)" = "$NEW_LOG call/start call/start call/result" ]
}

# --- ward run --session ------------------------------------------------------

@test "run --session: the session decides the mode and the workspace" {
	require_runner
	new_session
	cd "$BASE"
	run -1 --separate-stderr "$WARD" run --session "$SID" -- touch f
	[ ! -e "$WS/f" ]
	[ "$(printf '%s\n' "$stderr" | tail -n 3 | head -n 1)" = "[sandbox: file access denied under read-only mode]" ]
	[[ "$(printf '%s\n' "$stderr" | tail -n 2 | head -n 1)" == "[sandbox: "*" of $WS/f refused: not writable under read-only mode (session $SID); inferred from the error output]" ]]
	[ "$(last_line)" = "$HINT" ]
	[[ "$stderr" != *sandbox_permissions* ]]
	"$WARD" session mode "$SID" workspace-write >/dev/null
	run -0 --separate-stderr "$WARD" run --session "$SID" -- touch f
	[ -e "$WS/f" ]
	[ "$(last_field call/start mode_source)" = session ]
	[ "$(last_field call/result runner)" != none ]
	run -2 --separate-stderr "$WARD" run --session "$SID" --mode danger-full-access -- true
	[[ "$stderr" == *"cannot be combined with '--session'"* ]]
	run -2 --separate-stderr "$WARD" run --session "$SID" -w /tmp -- true
}

@test "two sessions are isolated from each other" {
	require_runner
	local ws2=$BASE/ws2
	mkdir -p "$ws2"
	new_session --mode workspace-write
	local a=$SID
	SID=$("$WARD" session new --cwd "$ws2")
	local b=$SID
	run -0 "$WARD" run --session "$a" -- touch a
	run -1 --separate-stderr "$WARD" run --session "$b" -- touch b
	# Each writes its own cwd only.
	run -1 --separate-stderr "$WARD" run --session "$a" -- touch "$ws2/a"
	[ -e "$WS/a" ] && [ ! -e "$ws2/b" ] && [ ! -e "$ws2/a" ]
	SID=$a
	[ "$(log_types)" = "$NEW_LOG call/start call/result call/start call/result" ]
	SID=$b
	[ "$(log_types)" = "$NEW_LOG call/start call/result" ]
	[ "$(last_field call/result denied)" = true ]
}

@test "the session store cannot be written from inside a confined run" {
	require_runner
	# The store inside the workspace: allowed only because it stays
	# read-only there (a protected path), on the runner in use.
	export XDG_STATE_HOME=$WS/.state
	new_session --mode workspace-write
	run --separate-stderr "$WARD" run --session "$SID" -c \
		"printf '{\"type\":\"sandbox/mode\",\"mode\":\"danger-full-access\"}\n' >>'$LOG'"
	[ "$status" -ne 0 ]
	run --separate-stderr "$WARD" run --session "$SID" -c "rm -f '$LOG'; mv '$(dirname "$LOG")' '$WS/gone'"
	[ "$status" -ne 0 ]
	[ -e "$LOG" ]
	run -0 "$WARD" session mode "$SID"
	[ "$output" = workspace-write ]
	run -3 --separate-stderr "$WARD" fs write --session "$SID" --text x "$LOG"
	run -0 "$WARD" session show "$SID"
}

# --- escalation without a terminal ------------------------------------------

@test "escalate with no terminal: approval unavailable, nothing runs, exit 122" {
	new_session
	run -122 --separate-stderr setsid -w "$WARD" run --session "$SID" \
		--escalate workspace-write --justification "create f" -- touch "$WS/f" </dev/null
	[ "$(last_line)" = 'approval for escalating this command to "workspace-write" is unavailable: nobody could be asked; nothing was run' ]
	[ ! -e "$WS/f" ]
	[ "$(log_types)" = "$NEW_LOG call/start escalation/request approval/asked approval/decision escalation/verdict call/result" ]
	[ "$(last_field approval/decision outcome)" = unavailable ]
	[ "$(last_field escalation/request justification)" = "create f" ]
	[ "$(last_field call/result ran)" = false ]
	# --json: an error object with its own code.
	run -122 --separate-stderr setsid -w "$WARD" run --json --session "$SID" \
		--escalate workspace-write --justification "create f" -- touch "$WS/f" </dev/null
	printf '%s' "$output" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
assert d["error"] == "ESCALATION_UNAVAILABLE", d
assert "nothing was run" in d["message"], d'
}

@test "escalate under approval policy never: refused without asking" {
	new_session --approval never
	run -122 --separate-stderr "$WARD" run --session "$SID" \
		--escalate workspace-write --justification "create f" -- touch "$WS/f"
	[ "$(last_line)" = 'escalating this command to "workspace-write" was refused automatically: the approval policy is "never"; nothing was run' ]
	[ ! -e "$WS/f" ]
	[[ "$(log_types)" != *approval/asked* ]]
	[ "$(last_field escalation/verdict verdict)" = policy-never ]
}

@test "a request that is not strictly wider asks nobody" {
	new_session --mode workspace-write
	for m in read-only workspace-write; do
		run -122 --separate-stderr "$WARD" run --session "$SID" \
			--escalate "$m" --justification "x" -- touch "$WS/f"
		[ "$(last_line)" = "--escalate \"$m\" is not wider than the mode this command already runs under; nothing was run and nobody was asked; run it without --escalate" ]
	done
	[ ! -e "$WS/f" ]
	[[ "$(log_types)" != *approval/asked* ]]
}

@test "escalate without a session: same verdicts, nothing recorded" {
	run -122 --separate-stderr setsid -w "$WARD" run -w "$WS" \
		--escalate workspace-write --justification "create f" -- touch "$WS/f" </dev/null
	[ "$(last_line)" = 'approval for escalating this command to "workspace-write" is unavailable: nobody could be asked; nothing was run' ]
	run -122 --separate-stderr "$WARD" run -w "$WS" --mode danger-full-access \
		--escalate workspace-write --justification "x" -- touch "$WS/f"
	[[ "$(last_line)" == '--escalate "workspace-write" is not wider'* ]]
	[ ! -e "$WS/f" ]
	[ ! -e "$XDG_STATE_HOME/ward/sessions" ] || [ -z "$(ls "$XDG_STATE_HOME/ward/sessions")" ]
}

@test "--escalate and --justification go together" {
	new_session
	run -2 --separate-stderr "$WARD" run --session "$SID" --escalate workspace-write -- true
	[[ "$stderr" == *"--justification"* ]]
	run -2 --separate-stderr "$WARD" run --session "$SID" --escalate workspace-write --justification '  ' -- true
	run -2 --separate-stderr "$WARD" run --session "$SID" --justification why -- true
	run -2 --separate-stderr "$WARD" run --session "$SID" --escalate root --justification why -- true
	[ "$(log_types)" = "$NEW_LOG" ]
}

@test "ward fs --session: denial marker and operation hint; escalation texts say operation" {
	new_session
	run -3 --separate-stderr "$WARD" fs write --session "$SID" --text hi notes.txt
	[ "$(printf '%s\n' "$stderr" | tail -n 3 | head -n 1)" = "[sandbox: file access denied under read-only mode]" ]
	# The fence knows exactly: no "inferred".
	[ "$(printf '%s\n' "$stderr" | tail -n 2 | head -n 1)" = "[sandbox: write of $WS/notes.txt refused: not writable under read-only mode (session $SID)]" ]
	[ "$(last_line)" = "$HINT_OP" ]
	[ ! -e "$WS/notes.txt" ]
	[ "$(last_field call/start operation)" = write ]
	[ "$(last_field call/result denied)" = true ]
	run -122 --separate-stderr setsid -w "$WARD" fs write --session "$SID" \
		--escalate workspace-write --justification "save notes" --text hi notes.txt </dev/null
	[ "$(last_line)" = 'approval for escalating this operation to "workspace-write" is unavailable: nobody could be asked; nothing was run' ]
	[ ! -e "$WS/notes.txt" ]
	# Without a session: no hint (nothing offers escalation).
	run -3 --separate-stderr "$WARD" fs write -w "$WS" --text hi notes.txt
	[ "$(printf '%s\n' "$stderr" | tail -n 2 | head -n 1)" = "[sandbox: file access denied under read-only mode]" ]
	[ "$(last_line)" = "[sandbox: write of $WS/notes.txt refused: not writable under read-only mode (built-in default)]" ]
}

# --- the approval prompt on a real terminal ---------------------------------

tmux_start() {
	command -v tmux >/dev/null || skip "tmux is not installed"
	TMUX_SOCK=ward-session-e2e-$$-${BATS_TEST_NUMBER:-0}
	tmux -L "$TMUX_SOCK" new-session -d -s t -x 200 -y 50 \
		"env XDG_STATE_HOME='$XDG_STATE_HOME' XDG_CONFIG_HOME='$XDG_CONFIG_HOME' PS1='$ ' bash --norc --noprofile"
}

tmux_wait() { # tmux_wait TEXT: until the pane shows TEXT (10 s)
	local i
	for i in $(seq 1 100); do
		tmux -L "$TMUX_SOCK" capture-pane -p -t t | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	printf '# pane:\n'
	tmux -L "$TMUX_SOCK" capture-pane -p -t t | sed 's/^/# /'
	return 1
}

# tmux_ward ARGS…: run ward in the pane; its exit status goes to $BASE/rc,
# its stderr to $BASE/err, stdout to $BASE/out.
tmux_ward() {
	local q
	q=$(printf '%q ' "$WARD" "$@")
	rm -f "$BASE/rc"
	tmux -L "$TMUX_SOCK" send-keys -t t \
		"$q >'$BASE/out' 2>'$BASE/err'; echo \$? >'$BASE/rc'" Enter
}

tmux_done() { # wait for the command, then set $status and $stderr
	local i
	for i in $(seq 1 150); do
		[ -s "$BASE/rc" ] && break
		sleep 0.1
	done
	status=$(cat "$BASE/rc")
	stderr=$(cat "$BASE/err")
}

@test "terminal prompt: y runs the command once under the granted mode" {
	require_runner
	new_session
	tmux_start
	tmux_ward run --session "$SID" --escalate workspace-write \
		--justification "touch needs to create f" -- touch "$WS/f"
	tmux_wait "[y/N]"
	local pane
	pane=$(tmux -L "$TMUX_SOCK" capture-pane -p -t t)
	[[ "$pane" == *"command         touch $WS/f"* ]]
	[[ "$pane" == *"directory       $WS"* ]]
	[[ "$pane" == *"current mode    read-only"* ]]
	[[ "$pane" == *"requested mode  workspace-write"* ]]
	[[ "$pane" == *"justification   touch needs to create f"* ]]
	[ ! -e "$WS/f" ] # approval happens before anything runs
	tmux -L "$TMUX_SOCK" send-keys -t t y Enter
	tmux_done
	[ "$status" = 0 ] || fail "exit $status: $stderr"
	[ -e "$WS/f" ]
	[ "$(last_field approval/decision outcome)" = allowed-once ]
	[ "$(last_field escalation/verdict verdict)" = granted ]
	[ "$(last_field call/result mode)" = workspace-write ]
	# The grant does not leak: the next call is back to read-only,
	# and nothing about the session's mode was written.
	run -1 --separate-stderr "$WARD" run --session "$SID" -- touch "$WS/g"
	[ ! -e "$WS/g" ]
	[ "$(last_field call/result mode)" = read-only ]
	[ "$(log_types | grep -o sandbox/mode | wc -l)" -eq 1 ] # only new's
	run -0 "$WARD" session mode "$SID"
	[ "$output" = read-only ]
}

@test "terminal prompt: n rejects with the exact text and runs nothing" {
	new_session
	tmux_start
	tmux_ward run --session "$SID" --escalate workspace-write \
		--justification "create f" -- touch "$WS/f"
	tmux_wait "[y/N]"
	tmux -L "$TMUX_SOCK" send-keys -t t n Enter
	tmux_done
	[ "$status" = 122 ]
	[ "$(last_line)" = 'the user rejected escalating this command to "workspace-write"' ]
	[ ! -e "$WS/f" ]
	[ "$(last_field approval/decision outcome)" = rejected ]
	[ "$(last_field call/result error)" = escalation-rejected ]
}

@test "terminal prompt: Enter alone is no; Ctrl-C and Ctrl-D cancel" {
	new_session
	tmux_start
	tmux_ward run --session "$SID" --escalate danger-full-access \
		--justification "x" -- touch "$WS/f"
	tmux_wait "[y/N]"
	tmux -L "$TMUX_SOCK" send-keys -t t Enter
	tmux_done
	[ "$status" = 122 ]
	[ "$(last_line)" = 'the user rejected escalating this command to "danger-full-access"' ]

	tmux -L "$TMUX_SOCK" send-keys -t t clear Enter
	tmux_ward run --session "$SID" --escalate danger-full-access \
		--justification "x" -- touch "$WS/f"
	tmux_wait "[y/N]"
	tmux -L "$TMUX_SOCK" send-keys -t t C-c
	tmux_done
	[ "$status" = 122 ]
	[ "$(last_line)" = 'the approval request for escalating this command to "danger-full-access" was cancelled before the user decided; nothing was run' ]
	[ "$(last_field approval/decision outcome)" = cancelled ]

	tmux -L "$TMUX_SOCK" send-keys -t t clear Enter
	tmux_ward run --session "$SID" --escalate danger-full-access \
		--justification "x" -- touch "$WS/f"
	tmux_wait "[y/N]"
	tmux -L "$TMUX_SOCK" send-keys -t t C-d
	tmux_done
	[ "$status" = 122 ]
	[ "$(last_field approval/decision outcome)" = cancelled ]
	[ ! -e "$WS/f" ]
}

@test "terminal prompt: control characters in the request are shown escaped" {
	new_session
	tmux_start
	tmux_ward run --session "$SID" --escalate workspace-write \
		--justification "$(printf 'ok\033[2K\rALLOW')" -- touch "$WS/f"
	tmux_wait "[y/N]"
	local pane
	pane=$(tmux -L "$TMUX_SOCK" capture-pane -p -t t)
	[[ "$pane" == *'justification   ok\x1b[2K\x0dALLOW'* ]]
	tmux -L "$TMUX_SOCK" send-keys -t t n Enter
	tmux_done
	[ "$status" = 122 ]
}

@test "terminal prompt for a file operation: y writes, the texts say operation" {
	new_session
	tmux_start
	tmux_ward fs write --session "$SID" --escalate workspace-write \
		--justification "save notes" --text hi notes.txt
	tmux_wait "[y/N]"
	[[ "$(tmux -L "$TMUX_SOCK" capture-pane -p -t t)" == *"operation       write notes.txt"* ]]
	tmux -L "$TMUX_SOCK" send-keys -t t y Enter
	tmux_done
	[ "$status" = 0 ] || fail "exit $status: $stderr"
	[ "$(cat "$WS/notes.txt")" = hi ]
	[ "$(last_field call/result runner)" = fsfence ]
	[ "$(last_field call/result mode)" = workspace-write ]
	# The next operation is back to read-only.
	run -3 --separate-stderr "$WARD" fs rm --session "$SID" notes.txt
	[ -e "$WS/notes.txt" ]
}

@test "session log: the whole interaction, readably and as stored" {
	new_session
	"$WARD" session mode "$SID" workspace-write >/dev/null
	run -122 --separate-stderr setsid -w "$WARD" run --session "$SID" \
		--escalate danger-full-access --justification "need /etc" -- true </dev/null
	run -0 "$WARD" session log "$SID"
	[[ "${lines[0]}" == *"session $SID created in $WS"* ]]
	[[ "$output" == *"sandbox mode set to workspace-write"* ]]
	[[ "$output" == *"asks to run under danger-full-access (from workspace-write): \"need /etc\""* ]]
	[[ "$output" == *"escalation refused (unavailable)"* ]]
	[[ "$output" == *"not run (escalation-unavailable)"* ]]
	run -0 "$WARD" session log "$SID" --json
	# Every line is a JSON object; the header first; one call id threads
	# the call through request, ask, decision, verdict and result.
	printf '%s\n' "$output" | "$PY" -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin if l.strip()]
assert ev[0]["type"] == "session/header" and ev[0]["id"] == sys.argv[1], ev[0]
calls = {e.get("call") for e in ev if e["type"] != "session/header" and "call" in e}
assert len(calls) == 1, calls
assert [e["type"] for e in ev if "call" in e] == ["call/start", "escalation/request", "approval/asked", "approval/decision", "escalation/verdict", "call/result"]' "$SID"
}

@test "a full disk: the append fails with ENOSPC's text, the log stays whole" {
	unshare -rm true 2>/dev/null ||
		skip "cannot create a user and mount namespace here (unshare -rm)"
	mkdir -p "$BASE/disk"
	# In a private mount namespace: a 64 KiB tmpfs for the session store,
	# filled up but for the last 20 bytes of the log's last page, so the
	# next append is a short write (the disk fills up during it).
	run --separate-stderr unshare -rm bash -c '
		set -e
		disk=$1 ward=$2 ws=$3
		mount -t tmpfs -o size=64k tmpfs "$disk"
		export XDG_STATE_HOME=$disk/state
		sid=$("$ward" session new --cwd "$ws")
		log=$XDG_STATE_HOME/ward/sessions/$sid.jsonl
		size=$(stat -c %s "$log")
		len=$((4096 - size % 4096 - 20))
		[ "$len" -ge 26 ] || len=$((len + 4096))
		{
			printf "{\"type\":\"note\",\"pad\":\""
			head -c $((len - 25)) /dev/zero | tr "\0" x
			printf "\"}\n"
		} >>"$log"
		head -c 1M /dev/zero >"$disk/fill" 2>/dev/null || true
		before=$(md5sum <"$log")
		if "$ward" session mode "$sid" workspace-write; then
			echo "the append succeeded on a full disk" >&2
			exit 1
		fi
		[ "$(md5sum <"$log")" = "$before" ] || { echo "log changed" >&2; exit 1; }
		"$ward" session show "$sid" | grep -q "mode:      read-only"
	' _ "$BASE/disk" "$WARD" "$WS"
	echo "# status $status; stderr: $stderr"
	[ "$status" -eq 0 ]
	[[ "$stderr" == *"No space left on device"* ]]
	[[ "$stderr" != *"Input/output error"* ]]
}

@test "session new as root with a missing HOME creates nothing there" {
	[ "$(id -u)" = 0 ] || skip "the case is root's: only root can create /nonexistent"
	local home=/nonexistent-ward-$$-$RANDOM
	run --separate-stderr env -u XDG_STATE_HOME HOME="$home" \
		"$WARD" session new --cwd "$WS"
	echo "# status $status; stderr: $stderr"
	[ ! -e "$home" ] || { rm -rf "$home"; fail "$home was created"; }
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"$home"* ]]
}

@test "a full disk: every call that cannot be recorded says why" {
	# "cannot record the call in session ID, so nothing was run: " had
	# nothing after the colon (the detail was printed into itself).
	require_runner
	unshare -rm true 2>/dev/null ||
		skip "cannot create a user and mount namespace here (unshare -rm)"
	mkdir -p "$BASE/disk"
	# A private mount namespace: the tmpfs goes away with it.
	run --separate-stderr unshare -rm bash -c '
		disk=$1 W=$2 WS=$3
		mount -t tmpfs -o size=64k tmpfs "$disk" || exit 99
		export XDG_STATE_HOME=$disk/state
		SID=$("$W" session new --cwd "$WS") || exit 98
		head -c 1M /dev/zero >"$disk/fill" 2>/dev/null
		for i in $(seq 1 300); do
			"$W" run --session "$SID" -- true 2>&1 || break
		done
		"$W" session mode "$SID" workspace-write 2>&1
		echo hi | "$W" fs write --session "$SID" "$WS/f" 2>&1
		test ! -e "$WS/f"' _ "$BASE/disk" "$WARD" "$WS"
	echo "# exit $status: $output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"ward run: cannot record the call in session "*", so nothing was run: cannot append to "*": No space left on device"* ]]
	[[ "$output" == *"ward session mode: cannot append to "*": No space left on device"* ]]
	[[ "$output" == *"ward fs write: cannot record the call in session "*": No space left on device"* ]]
}
