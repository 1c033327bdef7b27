# shellcheck shell=bash
# Shared helpers for ward's end-to-end tests (bats).
#
# Every test gets a fresh workspace and a fresh "outside" directory, both
# under /var/tmp (not /tmp: /tmp is itself a writable root under
# workspace-write, so a workspace there could not tell the two apart), and
# unique names for the files it may create in /tmp and $HOME. teardown
# removes all of them.
#
#   ward_run VARIANT MODE ARG...
#       runs `ward run --mode MODE --workspace $WS <runner flags> ARG...`
#       with stdout and stderr kept apart: sets $status, $output (stdout),
#       $stderr and $last_err (the last stderr line).
#
# VARIANT is one of the runner variants the suite runs under:
#   bwrap          --runner bwrap
#   landlock-run   --runner landlock            (the same: every Landlock
#   landlock       --runner landlock             run goes through it)
#   auto           --runner auto
#
# When E2E_RECORD names a directory, record() appends the observed outcome of
# the current test to $E2E_RECORD/<variant>.tsv; tests/e2e/conformance.sh
# turns those records into docs/CONFORMANCE.md.

E2E_ROOT=$(cd "${BATS_TEST_DIRNAME:-$(dirname "${BASH_SOURCE[0]}")}/../.." && pwd)
# The build under test (make check-asan points WARD_BUILD at its own tree).
E2E_BUILD=${WARD_BUILD:-$E2E_ROOT/build}
WARD=${WARD:-$E2E_BUILD/bin/ward}
# The parent of the suites' own state directories: beside nothing but its
# peers (a Landlock plan lists a state directory's neighbours, which must
# not come and go between two plans), and outside every writable root,
# where Landlock without a mount namespace refuses one (the container
# lane): not under /tmp or $TMPDIR even when the clone is.
case "$E2E_BUILD/" in
/tmp/* | "${TMPDIR:-/tmp}"/*) E2E_STATE_BASE=/var/tmp/ward-e2e-state ;;
*) E2E_STATE_BASE=$E2E_BUILD/e2e-state ;;
esac
LAUNCHER=${LAUNCHER:-$E2E_BUILD/bin/landlock-run}
# The system interpreter, not a per-user shim (pyenv shims are not usable by
# other users and run extra code).
PY=/usr/bin/python3
E2E_TIMEOUT=${E2E_TIMEOUT:-60}

# The variant a test file runs under, from its name:
# sandbox_bwrap.bats -> bwrap, sandbox_landlock.bats -> landlock
e2e_variant_from_file() {
	local base
	base=$(basename "$BATS_TEST_FILENAME" .bats)
	base=${base#sandbox_}
	printf '%s\n' "${base//_/-}"
}

runner_flags() {
	case "$1" in
	bwrap) echo "--runner bwrap" ;;
	landlock-run) echo "--runner landlock" ;;
	landlock) echo "--runner landlock" ;;
	auto) echo "--runner auto" ;;
	*)
		echo "unknown runner variant '$1'" >&2
		return 1
		;;
	esac
}

# The runner name ward reports (json sandbox.runner, WARD_SANDBOX).
runner_name() {
	case "$1" in
	bwrap) echo bwrap ;;
	landlock | landlock-run) echo landlock ;;
	*) echo "$1" ;;
	esac
}

marker() {
	printf '[sandbox: file access denied under %s mode]\n' "$1"
}

# Skip unless RUNNER (bwrap, or anything else for Landlock) can confine
# here, saying why.
require_runner_usable() { # VARIANT: as the test's user (after become)
	case "$1" in
	bwrap)
		"${E2E_AS[@]}" bwrap --ro-bind / / --unshare-user -- true \
			2>/dev/null || skip "bwrap cannot create a sandbox here"
		;;
	*)
		"${E2E_AS[@]}" "$LAUNCHER" --probe >/dev/null 2>&1 ||
			skip "Landlock is not usable here"
		;;
	esac
}

# rt_home NAME: a HOME (RT_HOME) and a ward state directory (RT_STATE,
# XDG_STATE_HOME) of the test's own, outside every writable root (a
# Landlock run hides the state directory by granting read on the entries
# beside it from / down: optional grants, docs/RUNNERS.md). The test's
# teardown removes both.
rt_home() {
	RT_HOME=$(mktemp -d "/var/tmp/ward-$1-home.XXXXXX")
	export HOME=$RT_HOME
	unset XDG_CONFIG_HOME
	mkdir -p "$E2E_STATE_BASE"
	RT_STATE=$(mktemp -d "$E2E_STATE_BASE/state.XXXXXX")
	chmod 0755 "$RT_STATE"
	export XDG_STATE_HOME=$RT_STATE
}

# become root|nobody: later runs are that user's, who owns the workspace,
# the test's HOME and state directory, and the directories named after it.
become() {
	if [ "$1" = nobody ]; then
		as_nobody
		chown -R 65534:65534 "$WS" ${RT_HOME:+"$RT_HOME"} \
			${RT_STATE:+"$RT_STATE"} "${@:2}"
	fi
}

# make_wheel DIR: a pure-Python wheel wardpkg 1.0 in DIR, for pip tests
# that need nothing from the network.
make_wheel() {
	"$PY" - "$1" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(os.path.join(sys.argv[1], "wardpkg-1.0-py3-none-any.whl"), "w") as z:
    z.writestr("wardpkg/__init__.py", "")
    z.writestr("wardpkg-1.0.dist-info/METADATA",
               "Metadata-Version: 2.1\nName: wardpkg\nVersion: 1.0\n")
    z.writestr("wardpkg-1.0.dist-info/WHEEL",
               "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\n"
               "Tag: py3-none-any\n")
    z.writestr("wardpkg-1.0.dist-info/RECORD", "")
PY
}

require_built() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	[ -x "$LAUNCHER" ] || skip "$LAUNCHER is not built (run make)"
}

e2e_setup() {
	require_built
	E2E_TAG="$$-${BATS_SUITE_TEST_NUMBER:-0}-$RANDOM"
	WS=$(mktemp -d /var/tmp/ward-e2e-ws.XXXXXX)
	OUT_DIR=$(mktemp -d /var/tmp/ward-e2e-out.XXXXXX)
	HOST_TMP=/tmp/ward-e2e-$E2E_TAG
	HOME_FILE=$HOME/.ward-e2e-$E2E_TAG
	E2E_CAP=${BATS_TEST_TMPDIR:-$(mktemp -d)}
	E2E_PIDS=()
	E2E_AS=()
	E2E_WRAP=()
	# TMPDIR would add one more writable root; the cases assume it is unset.
	unset TMPDIR
}

e2e_teardown() {
	local pid q d
	for pid in "${E2E_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	# What ward's guard moved out of this test's workspace into the
	# quarantine of ward's state directory (a box per run, its files
	# named by absolute path under files/).
	q=${XDG_STATE_HOME:-$HOME/.local/state}/ward/quarantine
	for d in "$q"/*; do
		if [ -e "$d/files$WS" ] || [ -e "$d/files$OUT_DIR" ] ||
			grep -qF -e "$WS/" -e "$OUT_DIR/" "$d/manifest" 2>/dev/null; then
			rm -rf "$d"
		fi
	done
	rmdir "$q" 2>/dev/null || true
	rm -rf "$WS" "$OUT_DIR" "$HOST_TMP" "$HOME_FILE" /dev/shm/ward-e2e-"$E2E_TAG"
}

# Run later commands as the unprivileged user nobody (65534). The workspace
# and the outside directory are opened up so that nobody may write there
# when the sandbox allows it.
as_nobody() {
	command -v setpriv >/dev/null || skip "setpriv not installed"
	[ "$(id -u)" = 0 ] || skip "needs root to switch to nobody"
	chmod 0777 "$WS" "$OUT_DIR"
	E2E_AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
}

ward_run() {
	local variant=$1 mode=$2
	shift 2
	local -a flags
	read -r -a flags <<<"$(runner_flags "$variant")"
	E2E_LAST_CMD="ward run --mode $mode --workspace $WS ${flags[*]} $*"
	if timeout -k 5 "$E2E_TIMEOUT" "${E2E_AS[@]}" "${E2E_WRAP[@]}" \
		"$WARD" run --mode "$mode" --workspace "$WS" "${flags[@]}" "$@" \
		>"$E2E_CAP/stdout" 2>"$E2E_CAP/stderr"; then
		status=0
	else
		status=$?
	fi
	output=$(cat "$E2E_CAP/stdout")
	stderr=$(cat "$E2E_CAP/stderr")
	last_err=$(tail -n 1 "$E2E_CAP/stderr")
	ward_dump
}

# Printed into the test's captured output: bats shows it when a test fails.
ward_dump() {
	printf '# %s%s\n' "${E2E_AS[*]:+${E2E_AS[*]} }" "$E2E_LAST_CMD"
	printf '# status: %s\n' "$status"
	printf '# stdout: %s\n' "$output" | head -n 20
	printf '# stderr: %s\n' "$stderr" | head -n 20
}

fail() {
	printf 'FAIL: %s\n' "$*"
	return 1
}

# --- observations ---------------------------------------------------------

# The errno named by the last error message in stderr, if any.
err_name() {
	case "$stderr" in
	*"Read-only file system"*) echo EROFS ;;
	*"Permission denied"*) echo EACCES ;;
	*"Operation not permitted"*) echo EPERM ;;
	*"Invalid cross-device link"*) echo EXDEV ;;
	*"No such process"*) echo ESRCH ;;
	*"No such file or directory"*) echo ENOENT ;;
	*) echo "exit $status" ;;
	esac
}

# The marker's line: the last stderr line that is not one of the denial
# report's lines that follow it ("[sandbox: OP of PATH refused …]", "[sandbox:
# … and N more refused]").
marker_line() {
	grep -v '^\[sandbox: .* refused\|^\[sandbox: … and ' "$E2E_CAP/stderr" |
		tail -n 1
}

has_marker() {
	[ "$(marker_line)" = "$(marker "$1")" ]
}

# Outcome of an attempt to create or change PATH. $2 (optional) is a check
# that the effect happened (default: PATH exists).
#   allowed   the effect is visible on the host
#   vanished  the command succeeded but nothing reached the host
#   denied    the command failed and nothing reached the host
write_outcome() {
	local path=$1 mode=$2 check=${3:-}
	local happened=1
	if [ -n "$check" ]; then
		eval "$check" && happened=0
	elif [ -e "$path" ] || [ -L "$path" ]; then
		happened=0
	fi
	if [ $happened = 0 ]; then
		echo allowed
	elif [ "$status" = 0 ]; then
		echo vanished
	elif has_marker "$mode"; then
		echo "denied ($(err_name))"
	else
		echo "denied ($(err_name), no marker)"
	fi
}

# Append "key<TAB>outcome" for this test to the conformance record.
record() {
	E2E_OUTCOME=$*
	printf '# outcome: %s\n' "$E2E_OUTCOME"
	[ -n "${E2E_RECORD:-}" ] || return 0
	local key=${BATS_TEST_DESCRIPTION#*: }
	printf '%s\t%s\n' "$key" "$E2E_OUTCOME" >>"$E2E_RECORD/${E2E_VARIANT:-unknown}.tsv"
}

# --- assertions -----------------------------------------------------------

assert_status() {
	[ "$status" = "$1" ] || fail "exit status $status, expected $1"
}

assert_failed() {
	[ "$status" != 0 ] || fail "the command succeeded, expected it to fail"
}

assert_marker() {
	has_marker "$1" ||
		fail "the marker's line is '$(marker_line)', expected '$(marker "$1")'"
}

assert_no_marker() {
	case "$stderr" in
	*"[sandbox: file access denied"*) fail "unexpected denial marker" ;;
	esac
}

assert_absent() {
	if [ -e "$1" ] || [ -L "$1" ]; then
		fail "$1 exists on the host"
	fi
}

assert_exists() {
	[ -e "$1" ] || fail "$1 does not exist on the host"
}

# A write to PATH under MODE was denied: non-zero exit, the marker as the
# last stderr line, nothing on disk.
assert_denied() {
	assert_failed
	assert_marker "$2"
	assert_absent "$1"
}

assert_allowed() {
	assert_status 0
	assert_exists "$1"
	assert_no_marker
}

# Start a long-running process outside any sandbox: $BYSTANDER.
# (fd 3 is closed: bats waits for every holder of its output pipe.)
spawn_bystander() {
	sleep 300 3>&- &
	BYSTANDER=$!
	E2E_PIDS+=("$BYSTANDER")
}

alive() {
	kill -0 "$1" 2>/dev/null
}

# slow WHY: skip unless make check-slow (WARD_SLOW=1) runs it; the test's
# name ends with "(slow)", which is how check-slow finds it.
slow() {
	[ "${WARD_SLOW:-}" = 1 ] ||
		skip "slow ($1): run it with make check-slow (WARD_SLOW=1)"
}
