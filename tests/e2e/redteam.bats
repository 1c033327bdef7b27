#!/usr/bin/env bats
# shellcheck shell=bats
#
# Red-team findings: each test demonstrates one way a confined command (or a
# repository it runs in) gets around a property ward documents. A failing
# test here is an open hole, not a flaky check; a test marked
# skip "KNOWN: …" is a documented, accepted limitation.
#
# Every test is self-contained: its own workspace and outside directory
# (e2e_setup), its own HOME where the session store or ward's configuration
# is involved, and it kills what it started by pid.

load helpers

setup() {
	e2e_setup
	RT_PIDS=()
}

teardown() {
	local pid
	for pid in "${RT_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	e2e_teardown
	[ -z "${RT_HOME:-}" ] || rm -rf "$RT_HOME"
	[ -z "${RT_PWN:-}" ] || rm -f "$RT_PWN" "$RT_PWN".*
}

require_bwrap() {
	bwrap --ro-bind / / --unshare-user -- true 2>/dev/null ||
		skip "bwrap cannot create a sandbox here"
}

require_landlock() {
	"$LAUNCHER" --probe >/dev/null 2>&1 ||
		"$WARD" probe 2>/dev/null | grep -qi landlock ||
		skip "Landlock is not usable here"
}

require_git() {
	command -v git >/dev/null || skip "git not installed"
}

# A committed repository in $WS, with an identity that works without $HOME.
make_repo() {
	git -C "$WS" init -q . &&
		git -C "$WS" config user.email rt@example.invalid &&
		git -C "$WS" config user.name rt &&
		echo a >"$WS/a" &&
		git -C "$WS" add a &&
		git -C "$WS" commit -qm init
}

# A private HOME, so that ward's store and configuration are throwaway.
private_home() {
	RT_HOME=$(mktemp -d /var/tmp/ward-rt-home.XXXXXX)
	export HOME=$RT_HOME
	unset XDG_CONFIG_HOME XDG_STATE_HOME
}

# Pids of live processes whose argv[0] is exactly $1 (a unique tag).
pids_tagged() {
	local d
	for d in /proc/[0-9]*; do
		[ "$({ tr '\0' '\n' <"$d/cmdline"; } 2>/dev/null | head -n 1)" = "$1" ] &&
			echo "${d#/proc/}"
	done
	return 0
}

# --- protected git paths ----------------------------------------------------

# .git/hooks and .git/config are read-only under bwrap, but .git itself is
# writable (git needs it), and git reads $GIT_DIR/commondir in *any*
# repository: a `commondir` naming a directory the command built makes git
# take its config and hooks from there. One confined run plants it; the
# user's next `git status` runs the planted core.fsmonitor outside any
# sandbox.
@test "bwrap: .git/commondir redirects git's config and hooks (protect_git bypass)" {
	require_bwrap
	require_git
	make_repo
	RT_PWN=/var/tmp/ward-rt-pwned-$E2E_TAG
	ward_run bwrap workspace-write -c "
		mkdir -p evil/hooks &&
		ln -s ../.git/objects evil/objects &&
		ln -s ../.git/refs evil/refs &&
		cp .git/config evil/config &&
		printf '[core]\n\tfsmonitor = \"touch $RT_PWN; false\"\n' >>evil/config &&
		printf '#!/bin/sh\ntouch $RT_PWN.hook\n' >evil/hooks/pre-commit &&
		chmod +x evil/hooks/pre-commit &&
		echo ../evil >.git/commondir"
	# Outside the sandbox, as the user would.
	git -C "$WS" status >/dev/null 2>&1 || true
	git -C "$WS" commit -q --allow-empty -m x >/dev/null 2>&1 || true
	[ ! -e "$RT_PWN" ] || fail "git status ran the planted fsmonitor"
	[ ! -e "$RT_PWN.hook" ] || fail "git commit ran the planted pre-commit hook"
}

# The fs fence protects the same paths; commondir is not among them.
@test "fs fence: ward fs write .git/commondir is refused under workspace-write" {
	require_git
	make_repo
	run "$WARD" fs write --mode workspace-write -w "$WS" .git/commondir \
		--text '../evil'
	printf '# status %s: %s\n' "$status" "$output"
	[ ! -e "$WS/.git/commondir" ] ||
		fail "the fence let .git/commondir be written"
}

# protect.c follows a .git directory and a .git file, but not a .git
# symlink ("followed by nothing here"); git follows it. A repository whose
# .git is a symlink to a git directory inside the workspace keeps neither its
# hooks nor its config read-only, and `ward config check` says nothing.
@test "bwrap: a symlinked .git leaves hooks and config writable" {
	require_bwrap
	require_git
	git init -q "$WS/real" && mv "$WS/real/.git" "$WS/.gitreal" &&
		rmdir "$WS/real" && ln -s .gitreal "$WS/.git"
	ward_run bwrap workspace-write -c \
		'printf "#!/bin/sh\n" >.git/hooks/pre-commit; git config core.fsmonitor "touch /nonexistent/x"'
	[ ! -e "$WS/.gitreal/hooks/pre-commit" ] ||
		fail "a hook was planted through the .git symlink"
	! grep -q fsmonitor "$WS/.gitreal/config" ||
		fail "the git config was changed through the .git symlink"
}

# --- rules ------------------------------------------------------------------

# An r- rule that contains a writable root is applied with
# `--ro-bind P P` after the binds. For P = / that is the host's whole tree,
# recursively: it mounts over bwrap's private /dev and /proc, so /dev/null
# is no longer writable (host /dev, nodev) and /proc is the host's (every
# host process and its command line, outside the sandbox's pid namespace).
# A project file may add this rule (it only "narrows").
@test "bwrap: r- / in workspace-write keeps the private /dev and /proc" {
	require_bwrap
	local host1
	host1=$(tr '\0' ' ' </proc/1/cmdline)
	ward_run bwrap workspace-write --access 'r- /' -c \
		'echo x >/dev/null && echo devnull-ok; tr "\0" " " </proc/1/cmdline; echo'
	grep -q devnull-ok <<<"$output" ||
		fail "/dev/null is not writable under r- /"
	[ "$(sed -n 2p <<<"$output")" != "$host1" ] ||
		fail "the host's /proc (pid 1: $host1) is visible inside"
}

# --- executor: processes outliving the call ---------------------------------

# Under bwrap the pid namespace ends with the command. Under Landlock there
# is none: PR_SET_PDEATHSIG covers the direct child and the timeout kills
# the process group, so a descendant that calls setsid() survives both and
# keeps running (confined, with the call's write access) after ward has
# returned.
landlock_orphan() {
	local variant=$1 tag=ward-rt-orphan-$E2E_TAG
	require_landlock
	ward_run "$variant" workspace-write --timeout 2 -c \
		"setsid -f bash -c 'exec -a $tag sleep 60'; sleep 30"
	[ "$status" = 124 ] || fail "expected the timeout (124), got $status"
	sleep 0.3
	local left
	left=$(pids_tagged "$tag")
	[ -z "$left" ] || RT_PIDS+=("$left")
	[ -z "$left" ] || fail "a setsid'd descendant outlived ward: pid $left"
}

@test "landlock: a setsid'd descendant does not outlive --timeout" {
	landlock_orphan landlock
}

@test "landlock: a setsid'd descendant does not outlive the call" {
	local tag=ward-rt-orphan-$E2E_TAG
	require_landlock
	ward_run landlock workspace-write -c \
		"setsid -f bash -c 'exec -a $tag sleep 60'"
	assert_status 0
	sleep 0.3
	local left
	left=$(pids_tagged "$tag")
	[ -z "$left" ] || RT_PIDS+=("$left")
	[ -z "$left" ] || fail "a setsid'd descendant outlived ward: pid $left"
}

# --- sessions ---------------------------------------------------------------

# The session log is readable inside every confined run, and flock() needs
# nothing but a descriptor. The store's lock_fd() blocks without a bound,
# so a confined process that keeps a shared lock (here one that outlived its
# call, see above) stops every later append: `ward run --session` and
# `ward session mode` hang.
@test "landlock: a confined process holding flock on the session log does not hang ward" {
	require_landlock
	command -v "$PY" >/dev/null || skip "no $PY"
	private_home
	local id log t0 t1
	id=$("$WARD" session new --mode workspace-write --cwd "$WS")
	log=$HOME/.local/state/ward/sessions/$id.jsonl
	[ -f "$log" ] || fail "no session log at $log"
	cat >"$WS/lock.py" <<EOF
import fcntl, os, sys, time
fd = os.open("$log", os.O_RDONLY)
fcntl.flock(fd, fcntl.LOCK_SH)
sys.argv[0] = "x"
time.sleep(60)
EOF
	timeout -k 2 20 "$WARD" run --runner landlock --mode workspace-write \
		-w "$WS" -c "setsid -f $PY $WS/lock.py >/dev/null 2>&1 </dev/null; sleep 0.5" \
		>/dev/null 2>&1 || true
	local d
	for d in /proc/[0-9]*; do
		grep -qF "$WS/lock.py" "$d/cmdline" 2>/dev/null &&
			RT_PIDS+=("${d#/proc/}")
	done
	t0=$(date +%s)
	# The lock bound shortened (the default 5 s is what the test would
	# otherwise wait): it must still end, and name the log.
	WARD_SESSION_LOCK_WAIT_MS=1000 run timeout -k 2 10 "$WARD" session mode "$id" read-only
	t1=$(date +%s)
	printf '# status %s after %ss: %s\n' "$status" "$((t1 - t0))" "$output"
	[ "$status" != 124 ] && [ "$status" != 137 ] ||
		fail "ward session mode hung on the confined process's lock"
}

# --- host kernel settings ---------------------------------------------------

# bwrap covers /proc/sys only when access(W_OK) says it could write it, and
# a sysctl directory always answers EACCES: the command, still kernel uid 0
# when ward runs as root, could write every host sysctl
# (kernel.core_pattern: a host-root escape on the next crash). The test
# writes a sysctl's current value back, so it changes nothing even when it
# succeeds.
sysctl_write_refused() {
	local variant=$1 mode=$2 f=/proc/sys/kernel/core_uses_pid
	[ -w "$f" ] || skip "not root: $f is not writable from here anyway"
	ward_run "$variant" "$mode" -c "cat $f > $f && echo WROTE"
	[ "$status" -ne 0 ] || fail "the sysctl write succeeded"
	[[ "$output" != *WROTE* ]] || fail "the sysctl write succeeded"
	ward_run "$variant" "$mode" -c "echo x > /proc/sysrq-trigger 2>/dev/null || test ! -e /proc/sysrq-trigger"
	[ "$status" -eq 0 ] || fail "/proc/sysrq-trigger was writable"
}

@test "bwrap: host sysctls are read-only (read-only mode)" {
	require_bwrap
	sysctl_write_refused bwrap read-only
}

@test "bwrap: host sysctls are read-only (workspace-write mode)" {
	require_bwrap
	sysctl_write_refused bwrap workspace-write
}

@test "landlock: host sysctls are read-only (workspace-write mode)" {
	require_landlock
	sysctl_write_refused landlock workspace-write
}
