#!/usr/bin/env bats
# shellcheck shell=bats
#
# The `ward` program's command line: help, bad inputs (exit 2, culprit
# named), exit statuses (the command's own, 124, 125, 126, 127, 128+N),
# the denial marker, --json shapes of run, probe and confine, and the
# sandbox-unavailable path (exit 125, never run unconfined).
#
# Workspaces live under /var/tmp, not /tmp: bwrap gives a confined command
# a private /tmp (a workspace there would be hidden), and /tmp is itself a
# writable root under workspace-write.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
WARD=$BUILD/bin/ward
LAUNCHER=$BUILD/bin/landlock-run
PY=/usr/bin/python3

setup_file() {
	[ -x "$WARD" ] || return 0
	# Which runners work here, probed once for the whole file.
	local probe
	probe=$("$WARD" probe --json 2>/dev/null) || true
	CLI_USABLE=$(printf '%s' "$probe" | "$PY" -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    sys.exit(0)
print(" ".join(c["runner"] for c in d["chain"] if c["usable"]))')
	export CLI_USABLE
}

setup() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	WS=$(mktemp -d /var/tmp/ward-cli-ws.XXXXXX)
	OUTSIDE=$(mktemp -d /var/tmp/ward-cli-out.XXXXXX)
	unset TMPDIR
}

teardown() {
	rm -rf "${WS:-}" "${OUTSIDE:-}"
}

fail() {
	printf "FAIL: %s\n" "$*"
	return 1
}

require_runner() {
	case " ${CLI_USABLE:-} " in
	*" $1 "*) ;;
	*) skip "the $1 runner cannot confine on this machine (ward probe)" ;;
	esac
}

# json EXPR [ARG...]: evaluate a Python expression over the JSON object in
# $output (as d; the ARGs as sys.argv[2:]) and print the result.
json() {
	printf '%s' "$output" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
print(eval(sys.argv[1]))' "$@"
}

marker() {
	printf '[sandbox: file access denied under %s mode]' "$1"
}

# usage_error STATUS STDERR CULPRIT: exit 2, a "ward…: " message naming
# the culprit, and a usage line.
assert_usage_error() {
	local culprit=$1
	printf '# status %s\n# stderr: %s\n' "$status" "$stderr"
	[ "$status" -eq 2 ]
	[[ "${stderr_lines[0]}" == ward* ]]
	[[ "${stderr_lines[0]}" == *"$culprit"* ]]
	[[ "$stderr" == *"Usage: "* ]]
}

# --- help and version -------------------------------------------------------

@test "ward --help lists every subcommand and the exit statuses" {
	run -0 "$WARD" --help
	for cmd in run probe confine help; do
		[[ "$output" == *"  $cmd "* ]]
	done
	[[ "$output" == *"125"* ]]
	run -0 "$WARD" -h
}

@test "ward --version prints the version" {
	run -0 "$WARD" --version
	[[ "$output" =~ ^ward\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
}

@test "every subcommand has --help with usage, options, examples, exit status" {
	for cmd in run probe confine; do
		run -0 "$WARD" "$cmd" --help
		[[ "$output" == "Usage: ward $cmd"* ]]
		[[ "$output" == *"Options:"* ]]
		[[ "$output" == *"Examples:"* ]]
		[[ "$output" == *"Exit status:"* ]]
		run -0 "$WARD" "$cmd" -h
	done
}

@test "ward help COMMAND is COMMAND --help" {
	run -0 "$WARD" run --help
	local direct=$output
	run -0 "$WARD" help run
	[ "$output" = "$direct" ]
	run -0 "$WARD" help
	[[ "$output" == *"Commands:"* ]]
}

# --- bad inputs: exit 2, the culprit named ------------------------------------

@test "no subcommand: usage on stderr, exit 2" {
	run -2 --separate-stderr "$WARD"
	[[ "$stderr" == *"Usage: "* ]]
}

@test "unknown subcommand is named" {
	run --separate-stderr "$WARD" frobnicate
	assert_usage_error "'frobnicate'"
	run --separate-stderr "$WARD" help frobnicate
	assert_usage_error "'frobnicate'"
}

@test "unknown options are named" {
	run --separate-stderr "$WARD" --frob
	assert_usage_error "'--frob'"
	run --separate-stderr "$WARD" run --bogus -- true
	assert_usage_error "'--bogus'"
	run --separate-stderr "$WARD" run -nx -- true
	assert_usage_error "'-x'"
	run --separate-stderr "$WARD" probe --bogus
	assert_usage_error "'--bogus'"
	run --separate-stderr "$WARD" confine --bogus -- true
	assert_usage_error "'--bogus'"
	run --separate-stderr "$WARD" run --json=yes -- true
	assert_usage_error "'--json'"
}

@test "a missing option value is named" {
	run --separate-stderr "$WARD" run --mode
	assert_usage_error "'--mode'"
	run --separate-stderr "$WARD" run -w
	assert_usage_error "'-w'"
	run --separate-stderr "$WARD" run --timeout
	assert_usage_error "'--timeout'"
	run --separate-stderr "$WARD" probe --runner
	assert_usage_error "'--runner'"
}

@test "a bad mode is named and the valid ones listed" {
	run --separate-stderr "$WARD" run --mode writable -- true
	assert_usage_error "'writable'"
	[[ "$stderr" == *read-only*workspace-write*danger-full-access* ]]
	run --separate-stderr "$WARD" confine -m READ-ONLY -- true
	assert_usage_error "'READ-ONLY'"
}

@test "a bad runner is named and the valid ones listed" {
	run --separate-stderr "$WARD" run --runner docker -- true
	assert_usage_error "'docker'"
	[[ "$stderr" == *auto*bwrap*landlock* ]]
	run --separate-stderr "$WARD" run --runner seatbelt -- true
	assert_usage_error "'seatbelt'"
}

@test "a workspace that is not a directory is named" {
	run --separate-stderr "$WARD" run --workspace "$WS/missing" -- true
	assert_usage_error "$WS/missing"
	touch "$WS/file"
	run --separate-stderr "$WARD" run --workspace "$WS/file" -- true
	assert_usage_error "$WS/file"
	[[ "$stderr" == *"not a directory"* ]]
	run --separate-stderr "$WARD" confine -w "$WS/file" -- true
	assert_usage_error "$WS/file"
}

@test "a timeout that is not a positive number is named" {
	for t in 0 -1 abc 1x "" nan inf 0.0; do
		run --separate-stderr "$WARD" run --timeout "$t" -- true
		assert_usage_error "'$t'"
	done
}

@test "--max-output: bad values are named; it needs --json" {
	run --separate-stderr "$WARD" run --json --max-output 0 -- true
	assert_usage_error "'0'"
	run --separate-stderr "$WARD" run --json --max-output 12Q -- true
	assert_usage_error "'12Q'"
	run --separate-stderr "$WARD" run --max-output 1K -- true
	assert_usage_error "--max-output"
}

@test "no command is a usage error" {
	run --separate-stderr "$WARD" run
	assert_usage_error "no command"
	run --separate-stderr "$WARD" run --mode read-only --
	assert_usage_error "no command"
	run --separate-stderr "$WARD" confine --json
	assert_usage_error "no command"
	run --separate-stderr "$WARD" probe extra
	assert_usage_error "'extra'"
}

# --- exit statuses ------------------------------------------------------------

@test "the command's exit status propagates (bwrap)" {
	require_runner bwrap
	run -3 "$WARD" run -w "$WS" --runner bwrap -- sh -c 'exit 3'
	run -0 "$WARD" run -w "$WS" --runner bwrap -- true
	run -1 "$WARD" run -w "$WS" --runner bwrap -- false
}

@test "the command's exit status propagates (landlock)" {
	require_runner landlock
	run -3 "$WARD" run -w "$WS" --runner landlock -- sh -c 'exit 3'
	run -0 "$WARD" run -w "$WS" --runner landlock -- true
}

@test "a timeout exits 124 and kills the command (bwrap, landlock)" {
	local r
	for r in bwrap landlock; do
		case " $CLI_USABLE " in *" $r "*) ;; *) continue ;; esac
		SECONDS=0
		run -124 --separate-stderr "$WARD" run -w "$WS" --runner "$r" \
			--timeout 0.3 -- sleep 30
		[ "$SECONDS" -lt 10 ]
		[[ "$stderr" == *"timed out"* ]]
	done
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
}

@test "a command killed by a signal exits 128+N" {
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
	run -137 "$WARD" run -w "$WS" -- sh -c 'kill -KILL $$'
	run -143 "$WARD" run -w "$WS" -- sh -c 'kill -TERM $$'
}

@test "a missing command exits 127, a non-executable one 126" {
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
	run -127 --separate-stderr "$WARD" run -w "$WS" -- no-such-command-x
	[[ "$stderr" == "ward run: no-such-command-x"* ]]
	printf 'echo hi\n' >"$WS/script.sh"
	chmod 0644 "$WS/script.sh"
	run -126 --separate-stderr "$WARD" run -w "$WS" -- ./script.sh
	[[ "$stderr" == *"script.sh"* ]]
	run -126 "$WARD" run -w "$WS" -- "$WS"
	run -127 --separate-stderr "$WARD" run --json -w "$WS" -- nope-nope
	[ "$(json 'd["error"]')" = COMMAND_NOT_FOUND ]
}

# With PATH unset, ward's check of the command and the executor search the
# same default (src/util: UTIL_PATH_DEFAULT, /usr/local/bin first). A
# private mount namespace gives the test a /usr/local/bin of its own.
path_unset_finds() {
	local runner=$1
	[ "$(id -u)" = 0 ] || skip "a private /usr/local/bin needs root"
	command -v unshare >/dev/null || skip "unshare is not installed"
	require_runner "$runner"
	unshare -m true 2>/dev/null || skip "no mount namespace here"
	mkdir "$OUTSIDE/bin"
	printf '#!/bin/sh\necho found-in-usr-local\n' >"$OUTSIDE/bin/ward-t-only"
	chmod 0755 "$OUTSIDE/bin/ward-t-only"
	run -0 unshare -m sh -c 'mount --bind "$1" /usr/local/bin &&
		exec env -u PATH "$2" run -w "$3" --runner "$4" -- ward-t-only' \
		sh "$OUTSIDE/bin" "$WARD" "$WS" "$runner"
	[ "$output" = found-in-usr-local ]
}

@test "with PATH unset, run finds a command only in /usr/local/bin (bwrap)" {
	path_unset_finds bwrap
}

@test "with PATH unset, run finds a command only in /usr/local/bin (landlock)" {
	path_unset_finds landlock
}

# --- output, stdin, -c --------------------------------------------------------

@test "stdin passes through; --no-stdin gives /dev/null" {
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
	run -0 bash -c 'echo piped | "$0" run -w "$1" -- cat' "$WARD" "$WS"
	[ "$output" = piped ]
	run -0 bash -c 'echo piped | "$0" run -n -w "$1" -- cat' "$WARD" "$WS"
	[ "$output" = "" ]
}

@test "-c runs bash -c STRING; extra arguments become \$0 \$1" {
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
	run -0 "$WARD" run -w "$WS" -c '[ -n "$BASH_VERSION" ] && echo "$0:$1"' \
		name arg
	[ "$output" = "name:arg" ]
}

@test "the command runs in the workspace with WARD_SANDBOX set" {
	local r
	for r in $CLI_USABLE; do
		run -0 "$WARD" run -w "$WS" --runner "$r" -- \
			sh -c 'pwd; echo "$WARD_SANDBOX"'
		[ "${lines[0]}" = "$WS" ]
		[ "${lines[1]}" = "$r" ]
	done
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
}

# --- the denial marker --------------------------------------------------------

# denied RUNNER MODE TARGET: a write to TARGET fails; the marker is the last
# stderr line, after the command's own output.
check_denied() {
	local runner=$1 mode=$2 target=$3
	run --separate-stderr "$WARD" run -w "$WS" --runner "$runner" \
		--mode "$mode" -c "echo before; echo before-err >&2; echo x > '$target'"
	printf '# %s %s: status %s\n# stdout: %s\n# stderr: %s\n' \
		"$runner" "$mode" "$status" "$output" "$stderr"
	[ "$status" -ne 0 ]
	[ "$output" = before ]
	[ "${stderr_lines[0]}" = before-err ]
	# The marker, then what was refused: the path, by the mode, from
	# where the mode came (the flag here), inferred from the error.
	[ "${stderr_lines[-2]}" = "$(marker "$mode")" ]
	[[ "${stderr_lines[-1]}" =~ ^\[sandbox:\ (write|create)\ of\ $target\ refused:\ not\ writable\ under\ $mode\ mode\ \(--mode\)\;\ inferred\ from\ the\ error\ output\]$ ]] ||
		fail "detail line: ${stderr_lines[-1]}"
	# The command's own complaint comes before the marker.
	[ "${#stderr_lines[@]}" -ge 4 ]
	[ ! -e "$target" ]
}

@test "denied writes print the marker after the output (bwrap)" {
	require_runner bwrap
	check_denied bwrap read-only "$WS/note"
	check_denied bwrap workspace-write "$OUTSIDE/note"
}

@test "denied writes print the marker after the output (landlock)" {
	require_runner landlock
	check_denied landlock read-only "$WS/note"
	check_denied landlock workspace-write "$OUTSIDE/note"
}

@test "an allowed write prints no marker" {
	local r
	for r in $CLI_USABLE; do
		rm -f "$WS/note"
		run -0 --separate-stderr "$WARD" run -w "$WS" --runner "$r" \
			--mode workspace-write -c 'echo hi > note'
		[[ "$stderr" != *"[sandbox:"* ]]
		[ "$(cat "$WS/note")" = hi ]
	done
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
}

@test "the marker starts its own line after output without a newline" {
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
	run --separate-stderr "$WARD" run -w "$WS" \
		-c 'touch f; printf partial >&2; exit 1'
	[ "$status" -eq 1 ]
	[ "${stderr_lines[-2]}" = "$(marker read-only)" ]
	[ "${stderr_lines[-3]}" = partial ]
}

# --- run --json -----------------------------------------------------------------

@test "run --json prints one object of the documented shape" {
	local r
	for r in $CLI_USABLE; do
		run -4 --separate-stderr "$WARD" run --json -w "$WS" --runner "$r" \
			-c 'echo out; echo err >&2; touch f; exit 4'
		[ "$stderr" = "" ]
		[ "${#lines[@]}" -eq 1 ]
		[ "$(json 'sorted(d)')" = "['denials', 'env_dropped', 'exit_code', 'guard_failed', 'network', 'sandbox', 'signal', 'stderr', 'stderr_truncated_bytes', 'stdout', 'stdout_truncated_bytes', 'timed_out']" ]
		[ "$(json 'sorted(d["sandbox"])')" = "['denied', 'ended', 'enforcement', 'mode', 'network', 'partial', 'runner']" ]
		[ "$(json 'd["sandbox"]["ended"]')" = None ]
		[ "$(json 'd["network"]')" = "{'mode': 'off', 'connections': [], 'denied': None, 'off_denied': False}" ]
		[ "$(json '[(x["path"], x["cause"], x["mode"], x["source"], x["how"]) for x in d["denials"]]')" = "[('$WS/f', 'mode', 'read-only', 'built-in default', 'derived')]" ]
		[ "$(json 'd["exit_code"]')" = 4 ]
		[ "$(json 'd["signal"]')" = None ]
		[ "$(json 'd["timed_out"]')" = False ]
		[ "$(json 'd["stdout"]')" = out ]
		[ "$(json 'd["stderr"].startswith("err\n")')" = True ]
		[ "$(json 'd["stdout_truncated_bytes"]')" = 0 ]
		[ "$(json 'd["sandbox"]["mode"]')" = read-only ]
		[ "$(json 'd["sandbox"]["runner"]')" = "$r" ]
		[ "$(json 'd["sandbox"]["enforcement"]')" != none ]
		[ "$(json 'd["sandbox"]["denied"]')" = True ]
		[[ "$output" != *"[sandbox:"* ]]
	done
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
}

@test "run --json: signal, timeout, truncation, invalid UTF-8" {
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
	local r
	for r in $CLI_USABLE; do
		run -137 "$WARD" run --json -w "$WS" -r "$r" -c 'kill -KILL $$'
		if [ "$r" = bwrap ]; then
			# bwrap reports its child's death by signal N as exit
			# 128+N; the signal itself is not visible outside.
			[ "$(json '(d["exit_code"], d["signal"])')" = "(137, None)" ]
		else
			[ "$(json '(d["exit_code"], d["signal"])')" = "(None, 9)" ]
		fi
	done
	run -124 "$WARD" run --json -w "$WS" --timeout 0.2 -- sleep 30
	[ "$(json 'd["timed_out"]')" = True ]
	run -0 "$WARD" run --json --max-output 1K -w "$WS" -c 'head -c 10000 /dev/zero | tr "\0" a'
	[ "$(json 'd["stdout_truncated_bytes"]')" -gt 8000 ]
	[ "$(json 'len(d["stdout"]) <= 1024')" = True ]
	run -0 "$WARD" run --json -w "$WS" -c 'printf "a\377b\0c"'
	[ "$(json 'd["stdout"] == "a\ufffdb\x00c"')" = True ]
}

@test "run --json: a megabyte of output, whole and in few writes, on each runner" {
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
	command -v strace >/dev/null || skip "strace is not installed"
	local r writes
	# 1,000,000 bytes with a newline and a quote every 100 (escaped),
	# under the 1 MiB capture limit, and some UTF-8.
	"$PY" -c '
import sys
line = ("x" * 80 + "\u00e9\"" + "y" * 15)[:98] + "\n"
data = (line * 10001).encode()[:1000000]
sys.stdout.buffer.write(data)' >"$WS/big.txt"
	for r in $CLI_USABLE; do
		# LeakSanitizer cannot run in a traced process (make check-asan).
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			strace -qq -o "$OUTSIDE/st.$r" -e trace=write -e signal=none \
			"$WARD" run --json -w "$WS" -r "$r" -- cat big.txt \
			>"$OUTSIDE/out.$r" 2>/dev/null
		"$PY" - "$OUTSIDE/out.$r" "$WS/big.txt" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
want = open(sys.argv[2], encoding="utf-8").read()
assert d["stdout"] == want and d["stdout_truncated_bytes"] == 0, (
    len(d["stdout"]), d["stdout_truncated_bytes"])
PYEOF
		# Its writes to stdout (fd 1) only: json_dumpf wrote one
		# stdio buffer at a time (244 and more); the object goes out
		# in 64 KiB pieces now.
		writes=$(grep -c '^write(1,' "$OUTSIDE/st.$r" || true)
		[ "$writes" -le 20 ] ||
			fail "$r: $writes writes for one megabyte of JSON"
	done
}

@test "run: one process of its own per call when nothing is hidden inside a root (no mount probe)" {
	[ -n "$CLI_USABLE" ] || skip "no runner can confine here"
	command -v strace >/dev/null || skip "strace is not installed"
	local r m n
	# ward's own forks only (no -f): the spawn of the runner. Whether
	# mounts can hide a path (a forked probe) is asked only when a path
	# to hide lies inside a writable root; here none does (HOME is
	# outside the workspace and /tmp).
	for r in $CLI_USABLE; do
		for m in read-only workspace-write; do
			ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
				strace -qq -o "$OUTSIDE/st.$r.$m" -e signal=none \
				-e trace=clone,clone3,fork,vfork \
				"$WARD" run -w "$WS" -r "$r" --mode "$m" -- true \
				2>/dev/null || fail "$r $m: ward run failed"
			n=$(grep -cE '^(clone|clone3|fork|vfork)\(' "$OUTSIDE/st.$r.$m" || true)
			[ "$n" = 1 ] ||
				fail "$r $m: $n processes forked by ward: $(cat "$OUTSIDE/st.$r.$m")"
		done
	done
}

# with_fds N CMD...: run CMD with RLIMIT_NOFILE N and only 0-2 inherited
# (bats keeps descriptors of its own open, and how many varied: the
# budget below is ward's, counted from 3).
with_fds() {
	"$PY" -c '
import os, resource, sys
n = int(sys.argv[1])
os.closerange(3, 65536)
resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
os.execv(sys.argv[2], sys.argv[2:])' "$@"
}

@test "run --json and run work with only 16 descriptors (bwrap, landlock)" {
	local r
	for r in bwrap landlock; do
		require_runner "$r"
		run --separate-stderr with_fds 16 "$WARD" run --json -r "$r" \
			-w "$WS" -- echo hello
		echo "# $r --json: exit $status: $output $stderr"
		[ "$status" -eq 0 ]
		[ "$(json 'd["exit_code"]')" = 0 ]
		[ "$(json 'd["stdout"]')" = hello ]
		run --separate-stderr with_fds 16 "$WARD" run -r "$r" -w "$WS" \
			-- echo hello
		[ "$status" -eq 0 ] && [ "$output" = hello ]
	done
}

@test "a call's descriptor budget: the fewest it runs with stays within docs/THREADING.md" {
	# The budget (RLIMIT_NOFILE a call needs, 0-2 inherited), as
	# docs/THREADING.md states it; the fewest found must not exceed it,
	# so the margin to the 16 above is shown, not hoped for.
	local r j n least budget
	for r in bwrap landlock; do
		require_runner "$r"
		for j in "" --json; do
			budget=$(sed -n "s/^| $r ${j:-stream} | \([0-9]*\) |.*/\1/p" \
				"$ROOT/docs/THREADING.md")
			[ -n "$budget" ] || fail "no budget for $r ${j:-stream}"
			least=
			for ((n = 16; n >= 4; n--)); do
				with_fds "$n" "$WARD" run $j -r "$r" -w "$WS" \
					-- true >/dev/null 2>&1 || break
				least=$n
			done
			echo "# $r ${j:-stream}: runs with $least, budget $budget"
			[ -n "$least" ] && [ "$least" -le "$budget" ]
			# One fewer than the fewest is ward's clean refusal.
			run --separate-stderr with_fds "$((least - 1))" "$WARD" \
				run $j -r "$r" -w "$WS" -- true
			[ "$status" -eq 125 ]
		done
	done
}

# assert_reasoned: $status is 0 or 125, and every line of $stderr that
# ends a sentence with a colon has something after it; no libevent line.
assert_reasoned() {
	echo "# exit $status: $stderr"
	[ "$status" -eq 0 ] || [ "$status" -eq 125 ] ||
		fail "exit $status is neither the command's 0 nor ward's 125"
	if printf '%s\n' "$stderr" | grep -E ':[[:space:]]*$'; then
		fail "a message without its reason"
	fi
	if printf '%s\n' "$stderr" | grep -E '^\[(warn|err|debug|msg)\] '; then
		fail "a library printed on ward's stderr"
	fi
}

@test "few descriptors: ward's own status and a reason, never a library's exit" {
	# libevent exited 1 when it could not make its signal socketpair
	# (ulimit -n 5), and "cannot start ward's network proxy: " and
	# "cannot open the network proxy for the call: " had nothing after
	# the colon.
	local n r
	# LeakSanitizer needs descriptors of its own at exit, which these
	# runs do not have (make check-asan): it failed, or hung in
	# sanitizer_common's Die with two threads dying.
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	for r in bwrap landlock; do
		require_runner "$r"
		for n in $(seq 4 20); do
			run --separate-stderr with_fds "$n" "$WARD" run -r "$r" \
				-w "$WS" --allow-domain localhost -- echo HELLO
			assert_reasoned
			[ "$status" -ne 0 ] || [ "$output" = HELLO ]
			run --separate-stderr with_fds "$n" "$WARD" run --json \
				-r "$r" -w "$WS" --allow-domain localhost -- echo HELLO
			assert_reasoned
			[ "$status" -eq 0 ] ||
				[ "$(json '"error" in d and not d["message"].rstrip().endswith(":")')" = True ]
		done
	done
}

@test "a command with 12,000 arguments runs under every runner (bwrap's limit is 9,000)" {
	# bwrap refused it ("Exceeded maximum number of arguments 9000",
	# sandbox unavailable) and the chain did not fall back; `xargs -n
	# 10000 ward run -- rm` is a real use. Odd arguments (empty, spaces,
	# a newline) must arrive as they were given.
	local r args=() i
	for ((i = 0; i < 12000; i++)); do args+=("f$i"); done
	args+=("" "a b" $'x\ny' "--" "-c")
	local want
	want=$(printf '%s\0' "${args[@]}" | sha256sum)
	for r in bwrap landlock; do
		require_runner "$r"
		run --separate-stderr "$WARD" run -r "$r" -w "$WS" -- \
			sh -c 'printf "%s\0" "$@" | sha256sum; ls /proc/self/fd | wc -l' \
			sh "${args[@]}"
		echo "# $r: exit $status: $stderr"
		[ "$status" -eq 0 ]
		[ "${lines[0]}" = "$want" ]
		# 0, 1, 2 and ls's own directory: nothing of ward's.
		[ "${lines[1]}" -eq 4 ]
		# Through ward-bridge (an allowlist) too.
		run --separate-stderr "$WARD" run -r "$r" -w "$WS" \
			--allow-domain localhost -- \
			sh -c 'printf "%s\0" "$@" | sha256sum' sh "${args[@]}"
		[ "$status" -eq 0 ]
		[ "$output" = "$want" ]
	done
	# bwrap without the Landlock layer inside (no landlock-run found):
	# nothing else can carry the arguments, and the error says which
	# limit, by how much, and what runs it.
	if [[ " ${CLI_USABLE:-} " == *" bwrap "* ]]; then
		mkdir "$OUTSIDE/lone"
		cp "$WARD" "$OUTSIDE/lone/ward"
		run "$OUTSIDE/lone/ward" probe
		if [[ "$output" == *"landlock-run not found"* ]]; then
			run --separate-stderr "$OUTSIDE/lone/ward" run -r bwrap \
				-w "$WS" -- true "${args[@]}"
			echo "# lone: $status: $stderr"
			[ "$status" -eq 125 ]
			[[ "$stderr" == *"bwrap: this call needs 12"*" arguments and bwrap takes at most 9000 (its profile "*", the command 12006)"*"--runner landlock"* ]]
		fi
	fi
	# xargs splitting a long list: every file removed.
	mkdir "$WS/many"
	(cd "$WS/many" && seq 1 12000 | sed 's/^/f/' | xargs touch)
	(cd "$WS/many" && ls | xargs -n 10000 "$WARD" run -m workspace-write \
		-w "$WS/many" -- rm 2>&1 | head -5)
	[ -z "$(ls -A "$WS/many")" ]
}

# descendant PID NAME: the pid of a descendant of PID whose comm is NAME,
# waiting up to 1,200 rounds (a minute when idle) for it to appear.
descendant() {
	local root=$1 name=$2 i p c todo
	for ((i = 0; i < 1200; i++)); do
		todo=("$root")
		while [ ${#todo[@]} -gt 0 ]; do
			p=${todo[0]}
			todo=("${todo[@]:1}")
			for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
				if [ "$(cat /proc/"$c"/comm 2>/dev/null)" = "$name" ]; then
					echo "$c"
					return 0
				fi
				todo+=("$c")
			done
		done
		sleep 0.05
	done
	return 1
}

# killed_midway RUNNER NAME [WARD ARGS...]: run a command that prints
# "before" and waits (bounded by --timeout), SIGKILL its sandbox process
# NAME once the command has printed, and leave ward's status, stdout and
# stderr in $status, $output, $stderr.
killed_midway() {
	local r=$1 name=$2 wp victim
	shift 2
	# The timeout only bounds a call the test failed to kill: longer
	# than descendant's waits on a loaded machine (an ASan build).
	"$WARD" run -r "$r" -w "$WS" --timeout 300 "$@" -- sh -c \
		'echo before; while :; do sleep 0.05; done' \
		>"$OUTSIDE/out" 2>"$OUTSIDE/err" &
	wp=$!
	victim=$(descendant "$wp" "$name") || {
		kill "$wp" 2>/dev/null || true
		wait "$wp" || true
		fail "no $name under ward: $(cat "$OUTSIDE/out" "$OUTSIDE/err")"
	}
	# The sandbox's processes start before the command: kill only once
	# the command has printed, that is, once it sleeps.
	descendant "$wp" sleep >/dev/null || true
	kill -9 "$victim"
	status=0
	wait "$wp" || status=$?
	output=$(cat "$OUTSIDE/out")
	stderr=$(cat "$OUTSIDE/err")
	echo "# $r, $name killed: exit $status: $output / $stderr"
}

@test "a killed supervisor or bridge ends the call with 125 and says so, output kept" {
	# The call used to fail closed in silence: judged calls got ENOSYS
	# (supervisor), or the call ended 137 with no word (ward-bridge).
	local r
	for r in bwrap landlock; do
		require_runner "$r"
		killed_midway "$r" ward-supervise
		[ "$status" -eq 125 ]
		[ "$output" = before ]
		[[ "$stderr" == *"ward run: the sandbox's supervisor ended (killed by signal 9) while the command ran"*"the command was ended"* ]]
		killed_midway "$r" ward-supervise --json
		[ "$status" -eq 125 ]
		[ "$(json 'd["stdout"]')" = before ]
		[[ "$(json 'd["sandbox"]["ended"]')" == "the sandbox's supervisor ended (killed by signal 9)"* ]]
	done
	require_runner bwrap
	killed_midway bwrap ward-bridge --allow-domain localhost
	[ "$status" -eq 125 ]
	[ "$output" = before ]
	[[ "$stderr" == *"ward run: the network bridge (ward-bridge) died while the command ran; the command was ended"* ]]
	# The command's own SIGKILL stays the command's.
	run --separate-stderr "$WARD" run -w "$WS" --allow-domain localhost \
		-- sh -c 'kill -9 $$'
	[ "$status" -eq 137 ]
	[[ "$stderr" != *"ward run:"* ]]
}

@test "run --json under danger-full-access reports runner none" {
	run -0 "$WARD" run --json -w "$WS" -m danger-full-access -- true
	[ "$(json 'd["sandbox"]["runner"]')" = none ]
	[ "$(json 'd["sandbox"]["enforcement"]')" = none ]
	[ "$(json 'd["sandbox"]["mode"]')" = danger-full-access ]
}

# --- sandbox unavailable: 125, never unconfined ------------------------------------

@test "a runner that cannot start: exit 125, refusal, hint, command not run" {
	# No bwrap in PATH: forcing bwrap must fail closed.
	run -125 --separate-stderr env PATH=/nonexistent "$WARD" run \
		-w "$WS" --mode workspace-write --runner bwrap -- /bin/touch "$WS/ran"
	[[ "${stderr_lines[0]}" == "ward: sandbox unavailable: "* ]]
	[[ "$stderr" == *"refusing to run the command unconfined"* ]]
	[[ "$stderr" == *"Hint: "* ]]
	[ ! -e "$WS/ran" ]
	run -125 --separate-stderr env PATH=/nonexistent "$WARD" run --json \
		-w "$WS" --mode workspace-write --runner bwrap -- /bin/touch "$WS/ran"
	[ "$(json 'd["error"]')" = SANDBOX_UNAVAILABLE ]
	[[ "$(json 'd["message"]')" == *unconfined* ]]
	[ ! -e "$WS/ran" ]
}

@test "no runner usable at all: run and confine exit 125, probe too" {
	[ -e /usr/local/libexec/ward/landlock-run ] &&
		skip "an installed landlock-run would be found"
	# A copy of ward without landlock-run beside it, and no bwrap in PATH.
	cp "$WARD" "$OUTSIDE/ward"
	run -125 --separate-stderr env PATH=/nonexistent "$OUTSIDE/ward" run \
		-w "$WS" --mode workspace-write -- /bin/touch "$WS/ran"
	[[ "${stderr_lines[0]}" == "ward: sandbox unavailable: "* ]]
	[[ "$stderr" == *"Hint: "*"bubblewrap"* ]]
	[[ "$stderr" == *"Hint: "*"landlock-run"* ]]
	[ ! -e "$WS/ran" ]
	run -125 --separate-stderr env PATH=/nonexistent "$OUTSIDE/ward" \
		confine -- true
	[[ "$stderr" == *"sandbox unavailable"* ]]
	run -125 --separate-stderr env PATH=/nonexistent "$OUTSIDE/ward" probe
	[[ "$output" == *"chosen:        none"* ]]
	run -125 --separate-stderr env PATH=/nonexistent "$OUTSIDE/ward" \
		run --runner landlock -w "$WS" -- /bin/true
	[[ "$stderr" == *"Hint: "*"reinstall"* ]]
}

# --- probe ----------------------------------------------------------------------

@test "ward probe lists bwrap and landlock with verdicts and paths" {
	run "$WARD" probe
	printf '# %s\n' "$output"
	[ "$status" -eq 0 ] || [ "$status" -eq 125 ]
	[[ "$output" == *"chain:"*"bwrap"*"landlock"* ]]
	[[ "$output" =~ $'\n'"  bwrap "+(usable|unusable) ]]
	[[ "$output" =~ $'\n'"  landlock "+(usable|unusable) ]]
	[[ "$output" == *"chosen:"* ]]
	[[ "$output" == *"landlock ABI:"* ]]
	[[ "$output" == *"landlock-run:  $LAUNCHER"* ]]
}

@test "ward probe --json has the documented shape" {
	run "$WARD" probe --json
	[ "$status" -eq 0 ] || [ "$status" -eq 125 ]
	[ "$(json '[c["runner"] for c in d["chain"]]')" = "['bwrap', 'landlock']" ]
	[ "$(json 'sorted(d["chain"][0])')" = "['probed', 'runner', 'usable', 'verdict', 'why']" ]
	[ "$(json 'sorted(d)')" = "['call', 'chain', 'chosen', 'config_error', 'containment', 'enforcement', 'landlock', 'partial', 'paths', 'platform']" ]
	[ "$(json 'd["paths"]["landlock_run"]')" = "$LAUNCHER" ]
	[ "$(json 'd["platform"]')" = linux ]
	if [ "$status" -eq 0 ]; then
		[ "$(json 'd["chosen"] in ("bwrap", "landlock")')" = True ]
		# The same sentence as the text's containment: line.
		[ "$(json 'd["containment"]')" = \
			"$("$WARD" probe | sed -n 's/^containment: *//p')" ]
	else
		[ "$(json 'd["containment"]')" = None ]
	fi
	if [ "$(json 'd["landlock"]["abi"] is not None')" = True ]; then
		[ "$(json 'd["landlock"]["abi"] >= 1')" = True ]
	fi
}

@test "ward probe --runner shows the sole candidate, not probed" {
	run -0 "$WARD" probe --runner landlock --json
	[ "$(json '[c["runner"] for c in d["chain"]]')" = "['landlock']" ]
	[ "$(json 'd["chain"][0]["probed"]')" = False ]
	[ "$(json 'd["chosen"]')" = landlock ]
	[[ "$(json 'd["containment"]')" == "landlock-run's keeper"* ]]
}

# --- confine ----------------------------------------------------------------------

@test "confine --json for bwrap: the bwrap argv around the command" {
	require_runner bwrap
	run -0 "$WARD" confine --json -w "$WS" --runner bwrap --mode workspace-write \
		-- echo 'a b'
	[ "$(json 'sorted(d)')" = "['argv', 'cwd', 'denial_signature', 'enforcement', 'env', 'mode', 'network', 'partial', 'runner', 'warnings']" ]
	[ "$(json 'd["network"]')" = off ]
	[ "$(json 'd["argv"][0].endswith("/bwrap")')" = True ]
	[ "$(json 'd["argv"][-2:]')" = "['echo', 'a b']" ]
	# bwrap's part ends --chdir WS --; then the Landlock layer inside
	# (landlock-run … --), bound read-only onto itself.
	[ "$(json '(lambda a, i: a[i:i+3])(d["argv"], d["argv"].index("--chdir"))')" = "['--chdir', '$WS', '--']" ]
	[ "$(json '(lambda a, i: a[i+3].endswith("/landlock-run"))(d["argv"], d["argv"].index("--chdir"))')" = True ]
	# Then bwrap's --die-with-parent: whoever runs a printed argv holds
	# no end of the Landlock layer's report pipe (docs/RUNNERS.md).
	[ "$(json '(lambda a, i: a[i-4:i] == ["--ro-bind", a[i+3], a[i+3], "--die-with-parent"])(d["argv"], d["argv"].index("--chdir"))')" = True ]
	[ "$(json 'd["argv"][-3]')" = "--" ]
	[ "$(json 'd["cwd"]')" = "$WS" ]
	[ "$(json '"--ro-bind" in d["argv"]')" = True ]
	# The workspace is bound read-write onto itself.
	[ "$(json 'any(d["argv"][i:i+3] == ["--bind", sys.argv[2], sys.argv[2]] for i in range(len(d["argv"])))' "$WS")" = True ]
	[ "$(json 'd["runner"]')" = bwrap ]
	[ "$(json 'd["mode"]')" = workspace-write ]
	[ "$(json 'd["denial_signature"]')" = "Read-only file system" ]
	[ "$(json 'd["env"]')" = "{'WARD_SANDBOX': 'bwrap'}" ]
}

@test "confine --json for landlock: the landlock-run argv" {
	# No state directory to hide: read is granted on / itself.
	run -0 env XDG_STATE_HOME="$OUTSIDE/none" "$WARD" confine --json \
		-w "$WS" --runner landlock -- true
	[ "$(json 'd["argv"][0]')" = "$LAUNCHER" ]
	[ "$(json 'd["argv"][1:5]')" = "['--ro', '/', '--rw', '/dev/null']" ]
	[ "$(json 'd["argv"][-2:]')" = "['--', 'true']" ]
	[ "$(json 'd["runner"]')" = landlock ]
	[ "$(json 'd["mode"]')" = read-only ]
	[ "$(json 'd["denial_signature"]')" = "Permission denied" ]
	[ "$(json 'd["env"]["WARD_SANDBOX"]')" = landlock ]
}

# Every Landlock run goes through landlock-run: the old switch to it,
# which changed nothing, is gone.
@test "--landlock-via-launcher is no option any more" {
	run -2 "$WARD" run -w "$WS" --runner landlock --landlock-via-launcher \
		-- true
	[[ "$output" == *"--landlock-via-launcher"* ]]
	run -0 "$WARD" run --help
	[[ "$output" != *"--landlock-via-launcher"* ]]
}

@test "confine prints one shell-quoted line that runs confined" {
	require_runner landlock
	run -0 "$WARD" confine -w "$WS" --runner landlock -- printf '%s|' "a b" "it's"
	[ "${#lines[@]}" -eq 1 ]
	local line=$output
	run -0 bash -c "cd '$WS' && WARD_SANDBOX=landlock $line"
	[ "$output" = "a b|it's|" ]
	run bash -c "cd '$WS' && $("$WARD" confine -w "$WS" --runner landlock -- touch "$WS/f")"
	[ "$status" -ne 0 ]
	[ ! -e "$WS/f" ]
}

@test "confine under danger-full-access prints the command under its keeper" {
	local ll
	ll=$(dirname "$WARD")/landlock-run
	run -0 "$WARD" confine -m danger-full-access -- ls -l
	[ "$output" = "$ll --unconfined -- ls -l" ]
	run -0 "$WARD" confine --json -m danger-full-access -- ls
	[ "$(json 'd["argv"]')" = "['$ll', '--unconfined', '--', 'ls']" ]
	[ "$(json 'd["runner"]')" = none ]
	[ "$(json 'd["env"]')" = "{}" ]
}

# What `ward confine` prints is what `ward run` executes: the executor runs
# A state directory that never exists (below a regular file): a plan then
# hides nothing of ward's own, so two plans made moments apart are the
# same even while other tests come and go beside ward's state directory
# (Landlock hides it by granting read on the entries beside it, which
# would be listed at each plan).
no_state_dir() {
	: >"$BATS_TEST_TMPDIR/no-state"
	export XDG_STATE_HOME=$BATS_TEST_TMPDIR/no-state/state
}

# the plan's own vector, adding only the channels of descriptors only ward
# holds: bwrap's --json-status-fd, the launcher's --pid-fd (inside bwrap in
# place of --die-with-parent: docs/RUNNERS.md). Seen from outside, with
# strace, on the real runners.
confine_is_run() {
	local runner=$1 mode=$2 want got
	command -v strace >/dev/null || skip "strace is not installed"
	require_runner "$runner"
	no_state_dir
	want=$("$WARD" confine --json -w "$WS" --runner "$runner" \
		--mode "$mode" -- echo 'x y' |
		"$PY" -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["argv"]))')
	# LeakSanitizer cannot run in a traced process (make check-asan).
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -s 4096 -e trace=execve -o "$OUTSIDE/trace" \
		"$WARD" run -w "$WS" --runner "$runner" \
		--mode "$mode" -- echo 'x y' >/dev/null
	got=$("$PY" - "$OUTSIDE/trace" "$runner" <<'PY'
import json, re, sys
runner = sys.argv[2]
for line in open(sys.argv[1]):
    m = re.search(r'execve\("([^"]*)", (\[.*?\]), ', line)
    if not m or "= 0" not in line:
        continue
    path = m.group(1)
    if runner == "bwrap" and not path.endswith("/bwrap"):
        continue
    if runner == "landlock" and not path.endswith("/landlock-run"):
        continue
    argv = json.loads(m.group(2))
    # Channels the executor adds (documented in docs/RUNNERS.md):
    # bwrap's status fd; landlock-run's shell-like exec failure and the
    # pid it reports.
    if argv[1:3] == ["--json-status-fd", "3"]:
        argv = argv[:1] + argv[3:]
        # The Landlock layer's report binds the sandbox to ward instead
        # of bwrap's parent-death signal, which the printed argv keeps.
        at = argv.index("--") + 1
        if argv[at + 1:at + 3] == ["--pid-fd", "4"]:
            del argv[at + 1:at + 3]
            argv.insert(argv.index("--chdir"), "--die-with-parent")
    # ward keeps the launcher it starts (it holds the report pipe and
    # contains what the command leaves): --kept goes with the report.
    if argv[1:5] == ["--kept", "--shell-status", "--pid-fd", "3"]:
        argv = argv[:1] + argv[5:]
    print(json.dumps(argv))
    break
PY
)
	[ -n "$got" ] || fail "no $runner execve in the trace"
	[ "$got" = "$want" ] || fail "run executed $got, confine printed $want"
}

@test "confine prints exactly what run executes (bwrap, read-only)" {
	confine_is_run bwrap read-only
}

@test "confine prints exactly what run executes (bwrap, workspace-write)" {
	confine_is_run bwrap workspace-write
}

@test "confine prints exactly what run executes (landlock-run, workspace-write)" {
	confine_is_run landlock workspace-write
}
