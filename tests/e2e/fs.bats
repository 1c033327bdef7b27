#!/usr/bin/env bats
# shellcheck shell=bats
#
# `ward fs`: the in-process file fence from the command line. Exit statuses
# (0 ok, 1 operation error, 2 usage, 3 denied), the denial marker, --json
# shapes, symlinks and `..`, and agreement with the runners: for a table of
# paths and modes, `ward run` may write exactly where `ward fs write` may.
#
# Workspaces live under /var/tmp, not /tmp: /tmp is itself a writable root
# under workspace-write (and bwrap gives a confined command a private one).

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
# Tests only: run another build of ward (e.g. before `fs` is registered).
WARD=${WARD:-$BUILD/bin/ward}
PY=/usr/bin/python3
MARKER_RE='^\[sandbox: file access denied under [a-z-]+ mode\]$'

setup_file() {
	[ -x "$WARD" ] || return 0
	local probe
	probe=$("$WARD" probe --json 2>/dev/null) || true
	FS_USABLE=$(printf '%s' "$probe" | "$PY" -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    sys.exit(0)
print(" ".join(c["runner"] for c in d["chain"] if c["usable"]))')
	export FS_USABLE
}

setup() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	"$WARD" fs --help >/dev/null 2>&1 ||
		skip "this ward has no 'fs' subcommand (not registered yet)"
	WS=$(mktemp -d /var/tmp/ward-fs-ws.XXXXXX)
	OUTSIDE=$(mktemp -d /var/tmp/ward-fs-out.XXXXXX)
	unset TMPDIR
}

teardown() {
	rm -rf "${WS:-}" "${OUTSIDE:-}"
}

# ward fs with the workspace set.
wfs() {
	local sub=$1
	shift
	"$WARD" fs "$sub" -w "$WS" "$@"
}

json_get() { # json_get EXPR  (reads $output)
	printf '%s' "$output" | "$PY" -c "import json,sys; d=json.load(sys.stdin); print($1)"
}

@test "usage errors exit 2 and name the culprit" {
	run --separate-stderr "$WARD" fs
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"no subcommand"* ]]
	run --separate-stderr "$WARD" fs frobnicate x
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'frobnicate'"* ]]
	run --separate-stderr wfs read
	[ "$status" -eq 2 ]
	run --separate-stderr wfs mv a
	[ "$status" -eq 2 ]
	run --separate-stderr wfs read --mode sideways a
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'sideways'"* ]]
	run --separate-stderr "$WARD" fs read -w "$WS/nope" a
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"$WS/nope"* ]]
	run --separate-stderr wfs rm -p a
	[ "$status" -eq 2 ]
	run --separate-stderr wfs edit --old a f
	[ "$status" -eq 2 ]
	run --separate-stderr wfs read --offset x f
	[ "$status" -eq 2 ]
}

@test "read-only denies a write: exit 3, detail and marker, nothing written" {
	echo old >"$WS/f"
	run --separate-stderr wfs write --text new f
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"write f"*"read-only"* ]]
	[[ "$(printf '%s\n' "$stderr" | tail -2 | head -1)" =~ $MARKER_RE ]]
	[[ "$(printf '%s\n' "$stderr" | tail -1)" == "[sandbox: write of "*"/f refused: not writable under read-only mode (built-in default)]" ]]
	[ "$(cat "$WS/f")" = old ]
	# Reading is allowed.
	run --separate-stderr wfs read f
	[ "$status" -eq 0 ]
	[ "$output" = old ]
}

@test "workspace-write: inside yes (stdin or --text), outside no" {
	run bash -c "printf 'from stdin\n' | '$WARD' fs write -m workspace-write -w '$WS' a.txt"
	[ "$status" -eq 0 ]
	[ "$(cat "$WS/a.txt")" = "from stdin" ]
	run wfs write -m workspace-write --text 'hi' sub/b.txt -p
	[ "$status" -eq 0 ]
	[ "$(cat "$WS/sub/b.txt")" = hi ]
	run --separate-stderr wfs write -m workspace-write --text x "$OUTSIDE/c"
	[ "$status" -eq 3 ]
	[[ "$stderr" == *"outside every writable root"* ]]
	[ ! -e "$OUTSIDE/c" ]
	run --separate-stderr wfs write -m workspace-write --text x "../$(basename "$OUTSIDE")/d"
	[ "$status" -eq 3 ]
	[ ! -e "$OUTSIDE/d" ]
	run wfs write -m danger-full-access --text x "$OUTSIDE/e"
	[ "$status" -eq 0 ]
	[ "$(cat "$OUTSIDE/e")" = x ]
}

@test "a symlink to outside is judged where it leads" {
	echo secret >"$OUTSIDE/s"
	ln -s "$OUTSIDE" "$WS/link"
	run --separate-stderr wfs write -m workspace-write --text pwned link/s
	[ "$status" -eq 3 ]
	[ "$(cat "$OUTSIDE/s")" = secret ]
	run --separate-stderr wfs rm -m workspace-write link/s
	[ "$status" -eq 3 ]
	[ -e "$OUTSIDE/s" ]
	# Removing the link removes the link only.
	run wfs rm -m workspace-write link
	[ "$status" -eq 0 ]
	[ ! -L "$WS/link" ]
	[ -e "$OUTSIDE/s" ]
}

@test "edit, mv, mkdir, rm, and their errors (exit 1)" {
	printf 'a b a\n' >"$WS/e"
	run --separate-stderr wfs edit -m workspace-write --old a --new z e
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"2 times"* ]]
	run wfs edit -m workspace-write --old a --new z --all e --json
	[ "$status" -eq 0 ]
	[ "$(json_get 'd["replacements"]')" = 2 ]
	[ "$(cat "$WS/e")" = "z b z" ]
	run --separate-stderr wfs edit -m workspace-write --old q --new z e
	[ "$status" -eq 1 ]
	run wfs mkdir -m workspace-write -p d/e/f
	[ "$status" -eq 0 ]
	[ -d "$WS/d/e/f" ]
	run --separate-stderr wfs mkdir -m workspace-write d
	[ "$status" -eq 1 ]
	run wfs mv -m workspace-write e d/e2
	[ "$status" -eq 0 ]
	[ -f "$WS/d/e2" ]
	run --separate-stderr wfs mv -m workspace-write d/e2 "$OUTSIDE/e3"
	[ "$status" -eq 3 ]
	[ -f "$WS/d/e2" ]
	run --separate-stderr wfs rm -m workspace-write d
	[ "$status" -eq 1 ]
	run wfs rm -m workspace-write -r d
	[ "$status" -eq 0 ]
	[ ! -e "$WS/d" ]
	run --separate-stderr wfs read nope
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"nope"* ]]
}

@test "--json shapes: read, ls, stat, and a denial" {
	printf 'one\ntwo\nthree\n' >"$WS/t"
	mkdir "$WS/sub"
	printf '\0\1' >"$WS/bin"
	run wfs read t --offset 1 --limit 1 --json
	[ "$status" -eq 0 ]
	[ "$(json_get 'd["content"]')" = two ]
	[ "$(json_get 'd["truncated"]')" = True ]
	run --separate-stderr wfs read bin --json
	[ "$status" -eq 1 ]
	[ "$(json_get 'd["error"]')" = NOT_TEXT ]
	# The way out this surface has, by name.
	[[ "$(json_get 'd["message"]')" == *"read it with ward fs read --bytes" ]]
	run -1 --separate-stderr wfs read bin
	[[ "$stderr" == *"bin is not text (it holds NUL bytes or invalid UTF-8); read it with ward fs read --bytes" ]]
	run wfs read bin --bytes --json
	[ "$status" -eq 0 ]
	[ "$(json_get 'd["content_base64"]')" = AAE= ]
	run wfs ls --json
	[ "$status" -eq 0 ]
	[ "$(json_get '",".join(e["path"]+":"+e["type"] for e in d["entries"])')" = "bin:file,sub:dir,t:file" ]
	run wfs stat t --json
	[ "$(json_get 'd["size"]')" = 14 ]
	[ "$(json_get 'd["resolved"]')" = "$(realpath "$WS")/t" ]
	run wfs write --text x t --json
	[ "$status" -eq 3 ]
	[ "$(json_get 'd["ok"]')" = False ]
	[ "$(json_get 'd["error"]')" = FS_SANDBOX_DENIED ]
	[ "$(json_get 'd["denial"]["mode"]')" = read-only ]
	[ "$(json_get 'd["denial"]["operation"]')" = write ]
	[[ "$(json_get 'd["marker"]')" =~ ^\[sandbox:\ file\ access\ denied\ under\ read-only\ mode\] ]]
	[ "$(json_get '[(x["operation"], x["cause"], x["how"]) for x in d["denials"]]')" = "[('write', 'mode', 'exact')]" ]
}

# The runners and the fence take the writable set from the same function:
# for each (mode, path), a confined `echo > path` succeeds exactly when
# `ward fs write` does.
@test "ward run and ward fs write agree on where writes may go" {
	[ -n "${FS_USABLE:-}" ] ||
		skip "no runner can confine on this machine (ward probe)"
	local tmpdir mode p runner run_ok fs_ok
	tmpdir=$(mktemp -d /tmp/ward-fs-agree.XXXXXX)
	mkdir "$WS/sub"
	ln -s "$OUTSIDE" "$WS/out-link"
	ln -s sub "$WS/in-link"
	local paths=(
		"$WS/a" "$WS/sub/b" "$OUTSIDE/c" "$WS/../$(basename "$OUTSIDE")/d"
		"$WS/out-link/e" "$WS/in-link/f" "$tmpdir/g" "/proc/self/root$WS/h"
	)
	for runner in $FS_USABLE; do
		for mode in read-only workspace-write; do
			for p in "${paths[@]}"; do
				rm -f "$WS/a" "$WS/sub/"* "$OUTSIDE/"* "$tmpdir/"*
				if "$WARD" run -r "$runner" -m "$mode" -w "$WS" \
					-c 'echo x > "$1"' sh "$p" >/dev/null 2>&1
				then run_ok=1; else run_ok=0; fi
				rm -f "$WS/a" "$WS/sub/"* "$OUTSIDE/"* "$tmpdir/"*
				if "$WARD" fs write -m "$mode" -w "$WS" --text x \
					"$p" >/dev/null 2>&1
				then fs_ok=1; else fs_ok=0; fi
				echo "# $runner $mode $p: run=$run_ok fs=$fs_ok" >&3
				[ "$run_ok" = "$fs_ok" ] || {
					rm -rf "$tmpdir"
					false
				}
			done
		done
	done
	rm -rf "$tmpdir"
}

@test "RLIMIT_FSIZE below the size: EFBIG, no temporary file, the call recorded, old content intact" {
	# ward died of SIGXFSZ (exit 153), left .f.ward-tmp-… behind, and
	# the session's call stayed call/start without a call/result.
	export XDG_STATE_HOME=$WS/.state
	local sid log
	sid=$("$WARD" session new --cwd "$WS" --mode workspace-write)
	log=$XDG_STATE_HOME/ward/sessions/$sid.jsonl
	echo old >"$WS/f"
	head -c 100000 /dev/zero | tr '\0' a >"$OUTSIDE/big"
	run --separate-stderr bash -c 'ulimit -f 10 && exec "$@"' _ \
		"$WARD" fs write --session "$sid" "$WS/f" --json <"$OUTSIDE/big"
	echo "# exit $status: $output $stderr"
	[ "$status" -eq 1 ]
	[ "$(json_get 'd["error"]')" = TOO_LARGE ]
	[[ "$(json_get 'd["message"]')" == *"cannot write: File too large" ]]
	[ "$(cat "$WS/f")" = old ]
	run ls -A "$WS"
	[[ "$output" != *ward-tmp* ]]
	# call/start and its call/result, nothing left open.
	[ "$(grep -c '"type":"call/start"' "$log")" -eq 1 ]
	[ "$(grep -c '"type":"call/result"' "$log")" -eq 1 ]
	# Without --json and without a session alike.
	run --separate-stderr bash -c 'ulimit -f 10 && exec "$@"' _ \
		"$WARD" fs write -w "$WS" -m workspace-write "$WS/f" <"$OUTSIDE/big"
	[ "$status" -eq 1 ]
	[[ "$stderr" == *"File too large"* ]]
	[ "$(cat "$WS/f")" = old ]
	# The command itself keeps the default: SIGXFSZ ends it.
	run --separate-stderr bash -c 'ulimit -f 10 && exec "$@"' _ "$WARD" run -w "$WS" \
		-m workspace-write -- sh -c 'head -c 20000 /dev/zero >"$1"; echo $?' _ "$WS/g"
	[ "$output" = 153 ]
}
