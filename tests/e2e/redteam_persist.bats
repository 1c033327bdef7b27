#!/usr/bin/env bats
# shellcheck shell=bats
#
# Red team, persistence: a confined command (workspace-write) tries to
# leave code behind that the user's own, unconfined tools run later — git
# hooks (in .git/hooks, in a core.hooksPath directory), git configuration
# pulled in by include.path / includeIf, editor and agent settings
# (.vscode, .idea, .claude, .mcp.json), direnv's .envrc, husky's .husky,
# and ward's own .ward. Each class runs on every runner (bwrap, and Landlock
# through landlock-run) as root and as the unprivileged user nobody:
# where a runner cannot keep a path read-only (anything inside a writable
# root on Landlock, a missing path on bwrap), ward run's guard must find
# the change after the run by content, move it out of the workspace to the
# quarantine and put the original back. Then the user's git runs, as the
# user, and must run nothing the command planted.
#
# Each test has its own workspace, HOME (so ward's state directory and its
# quarantine are throwaway) and marker file, and removes them.

load helpers

setup() {
	e2e_setup
	RT_HOME=$(mktemp -d /var/tmp/ward-rt-home.XXXXXX)
	export HOME=$RT_HOME
	unset XDG_CONFIG_HOME
	# ward's state directory of its own: a Landlock run hides it by
	# granting read on the entries beside it from / down (optional
	# grants: docs/RUNNERS.md).
	mkdir -p "$E2E_BUILD/e2e-state"
	RT_STATE=$(mktemp -d "$E2E_BUILD/e2e-state/state.XXXXXX")
	chmod 0755 "$RT_STATE"
	export XDG_STATE_HOME=$RT_STATE
	RT_PWN=/var/tmp/ward-rt-pwned-$E2E_TAG
}

teardown() {
	e2e_teardown
	rm -rf "$RT_HOME" "$RT_STATE"
	rm -f "$RT_PWN" "$RT_PWN".*
}

require_runner() {
	require_runner_usable "$1"
	command -v git >/dev/null || skip "git not installed"
}

# become root|nobody: later ward runs (and as_user) run as that user, who
# owns the workspace and the home (git refuses a repository another user
# owns, and the quarantine lives in the home).
become() {
	if [ "$1" = nobody ]; then
		as_nobody
		chown -R 65534:65534 "$WS" "$RT_HOME" "$RT_STATE"
	fi
}

# Run a command as the test's user (root, or nobody after become).
as_user() {
	"${E2E_AS[@]}" env HOME="$HOME" XDG_STATE_HOME="$XDG_STATE_HOME" "$@"
}

# A committed repository in $WS, made by the test's user.
make_repo() {
	as_user git -C "$WS" init -q . &&
		as_user git -C "$WS" config user.email rt@example.invalid &&
		as_user git -C "$WS" config user.name rt &&
		as_user sh -c "echo a > '$WS/a'" &&
		as_user git -C "$WS" add a &&
		as_user git -C "$WS" commit -qm init
}

# What the user does after the call: git, unconfined, as the user.
users_git() {
	as_user git -C "$WS" status >/dev/null 2>&1 || true
	as_user git -C "$WS" commit -q --allow-empty -m x >/dev/null 2>&1 || true
}

assert_not_pwned() {
	[ ! -e "$RT_PWN" ] || fail "the user's git ran code the command planted"
}

# Nothing was moved aside inside the workspace (git could find it there).
assert_no_quarantine_in_ws() {
	local left
	left=$(find "$WS" -name '*quarantine*' 2>/dev/null | head -n 3)
	[ -z "$left" ] || fail "quarantined inside the workspace: $left"
}

# --- 1. the guard compares content -------------------------------------------

# A hook rewritten in place with exactly as many bytes and its time stamps
# put back (touch -d) looks unchanged to a check of size and mtime.
inplace_case() {
	local v=$1 who=$2 hook evil good
	require_runner "$v"
	become "$who"
	make_repo
	hook=$WS/.git/hooks/pre-commit
	evil="#!/bin/sh
touch $RT_PWN
"
	good=${evil/touch/: ok }
	as_user sh -c 'printf "%s" "$1" > "$2" && chmod 755 "$2"' sh "$good" "$hook"
	ward_run "$v" workspace-write -c '
		f=.git/hooks/pre-commit
		m=$(stat -c %y "$f")
		printf "%s" "$1" > "$f" && touch -d "$m" "$f" && echo REWROTE' \
		sh "$evil"
	users_git
	assert_not_pwned
	[ "$(cat "$hook")" = "${good%$'\n'}" ] || fail "the hook was not put back"
	if [[ "$output" == *REWROTE* ]]; then
		[[ "$stderr" == *"pre-commit changed during the run"* ]] ||
			fail "the guard said nothing about the rewritten hook"
		[ -n "$(find "$XDG_STATE_HOME/ward/quarantine" -path '*/.git/hooks/pre-commit' 2>/dev/null)" ] ||
			fail "the rewritten hook is not in the quarantine"
	fi
	assert_no_quarantine_in_ws
}

@test "bwrap: a hook rewritten in place, size and mtime kept, is put back (root)" { inplace_case bwrap root; }
@test "bwrap: a hook rewritten in place, size and mtime kept, is put back (nobody)" { inplace_case bwrap nobody; }
@test "landlock: a hook rewritten in place, size and mtime kept, is put back (root)" { inplace_case landlock root; }
@test "landlock: a hook rewritten in place, size and mtime kept, is put back (nobody)" { inplace_case landlock nobody; }

# --- 1. no entry cap -----------------------------------------------------------

# One call floods .git/hooks with more entries than a snapshot used to
# remember (256); a later call plants a hook. Neither may survive.
flood_case() {
	local v=$1 who=$2 n
	require_runner "$v"
	become "$who"
	make_repo
	ward_run "$v" workspace-write -c \
		'for i in $(seq 400); do : > .git/hooks/flood-$i; done; echo FLOODED'
	n=$(find "$WS/.git/hooks" -name 'flood-*' | wc -l)
	[ "$n" = 0 ] || fail "$n flood entries are left in .git/hooks"
	ward_run "$v" workspace-write -c \
		'printf "#!/bin/sh\ntouch %s\n" "$1" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit' \
		sh "$RT_PWN"
	users_git
	assert_not_pwned
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "the planted hook is still there"
	assert_no_quarantine_in_ws
}

@test "bwrap: flooding .git/hooks does not switch the guard off (root)" { flood_case bwrap root; }
@test "bwrap: flooding .git/hooks does not switch the guard off (nobody)" { flood_case bwrap nobody; }
@test "landlock: flooding .git/hooks does not switch the guard off (root)" { flood_case landlock root; }
@test "landlock: flooding .git/hooks does not switch the guard off (nobody)" { flood_case landlock nobody; }

# A tree the guard cannot snapshot whole: under Landlock (the guard is
# what keeps it) the call does not run, and says what to do (fail closed,
# loudly). bwrap binds it read-only itself: the call runs, and the tree
# stays as it was.
toomany_case() {
	local v=$1 who=$2
	require_runner "$v"
	become "$who"
	make_repo
	as_user "$PY" -c '
import sys
for i in range(20001):
    open("%s/.git/hooks/f%d" % (sys.argv[1], i), "w").close()' "$WS"
	ward_run "$v" workspace-write -c \
		'touch ran; printf "#!/bin/sh\ntouch %s\n" "$1" > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit' \
		sh "$RT_PWN"
	if [ "$v" = bwrap ]; then
		[ -e "$WS/ran" ] || fail "the command did not run under bwrap"
		[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "a hook was planted"
		return
	fi
	[ "$status" -ne 0 ] || fail "the call ran although the guard cannot check it"
	[ ! -e "$WS/ran" ] || fail "the command ran"
	[[ "$stderr" == *"cannot check the protected $WS/.git/hooks"* ]] ||
		fail "the error does not name .git/hooks"
	[[ "$stderr" == *"was not run"* && "$stderr" == *"unprotect"* ]] ||
		fail "the error does not say what to do"
}

# 20,001 files each: one variant in make check, the rest in check-slow.
@test "bwrap: a hooks directory too large to check stays read-only (root) (slow)" { slow "20,001 hooks"; toomany_case bwrap root; }
@test "landlock: a hooks directory too large to check refuses the call (root) (slow)" { slow "20,001 hooks"; toomany_case landlock root; }
@test "landlock: a hooks directory too large to check refuses the call (nobody) (slow)" { slow "20,001 hooks"; toomany_case landlock nobody; }

# The quarantine is out of every confined run's reach: a command cannot
# read it back or put a file back from it.
@test "landlock: the quarantine is hidden from confined runs" {
	require_runner landlock
	make_repo
	ward_run landlock workspace-write -c 'echo evil > .git/hooks/pre-push'
	local q=$XDG_STATE_HOME/ward/quarantine
	[ -d "$q" ] || fail "no quarantine at $q"
	for v in landlock bwrap; do
		[ "$v" != bwrap ] || bwrap --ro-bind / / --unshare-user -- true 2>/dev/null || continue
		ward_run "$v" workspace-write -c 'ls -R "$1" && echo LISTED' sh "$q"
		[[ "$output" != *LISTED* ]] || fail "$v: a confined run listed the quarantine"
	done
}

# --- 2. core.hooksPath, include.path, includeIf.*.path --------------------------

# husky: core.hooksPath = .husky/_ in the worktree.
hookspath_case() {
	local v=$1 who=$2
	require_runner "$v"
	become "$who"
	make_repo
	as_user sh -c "mkdir -p '$WS/.husky/_' && printf '#!/bin/sh\n: ok\n' > '$WS/.husky/_/pre-commit' && chmod 755 '$WS/.husky/_/pre-commit'"
	as_user git -C "$WS" config core.hooksPath .husky/_
	ward_run "$v" workspace-write -c \
		'printf "#!/bin/sh\ntouch %s\n" "$1" > .husky/_/pre-commit; printf "#!/bin/sh\ntouch %s.2\n" "$1" > .husky/_/post-commit; chmod +x .husky/_/*' \
		sh "$RT_PWN"
	users_git
	assert_not_pwned
	[ ! -e "$RT_PWN.2" ] || fail "a hook added to the hooksPath directory ran"
	assert_no_quarantine_in_ws
}

@test "bwrap: the core.hooksPath directory (.husky/_) stays the user's (root)" { hookspath_case bwrap root; }
@test "bwrap: the core.hooksPath directory (.husky/_) stays the user's (nobody)" { hookspath_case bwrap nobody; }
@test "landlock: the core.hooksPath directory (.husky/_) stays the user's (root)" { hookspath_case landlock root; }
@test "landlock: the core.hooksPath directory (.husky/_) stays the user's (nobody)" { hookspath_case landlock nobody; }

# include.path to a file in the worktree, and includeIf to one that does
# not exist yet: either would set core.fsmonitor for the user's git.
include_case() {
	local v=$1 who=$2
	require_runner "$v"
	become "$who"
	make_repo
	as_user sh -c ": > '$WS/shared.gitconfig'"
	as_user git -C "$WS" config include.path ../shared.gitconfig
	as_user git -C "$WS" config 'includeIf.gitdir:/.path' ../local.gitconfig
	ward_run "$v" workspace-write -c '
		printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$1" >> shared.gitconfig
		printf "[core]\n\tfsmonitor = \"touch %s.2; false\"\n" "$1" > local.gitconfig' \
		sh "$RT_PWN"
	users_git
	assert_not_pwned
	[ ! -e "$RT_PWN.2" ] || fail "the includeIf file the command created was used"
	[ ! -s "$WS/shared.gitconfig" ] || fail "shared.gitconfig was not put back"
	[ ! -e "$WS/local.gitconfig" ] || fail "local.gitconfig is still there"
	assert_no_quarantine_in_ws
}

@test "bwrap: include.path and includeIf.*.path files stay the user's (root)" { include_case bwrap root; }
@test "bwrap: include.path and includeIf.*.path files stay the user's (nobody)" { include_case bwrap nobody; }
@test "landlock: include.path and includeIf.*.path files stay the user's (root)" { include_case landlock root; }
@test "landlock: include.path and includeIf.*.path files stay the user's (nobody)" { include_case landlock nobody; }

# The fence refuses the same places.
@test "fs fence: hooksPath, include and trap files are refused under workspace-write" {
	command -v git >/dev/null || skip "git not installed"
	make_repo
	git -C "$WS" config core.hooksPath .husky/_
	git -C "$WS" config include.path ../shared.gitconfig
	local p
	for p in .husky/_/pre-commit shared.gitconfig .vscode/tasks.json \
		.idea/workspace.xml .claude/settings.json .mcp.json .envrc \
		.ward/config.yml; do
		run "$WARD" fs write --mode workspace-write -w "$WS" -p --text x "$p"
		[ "$status" -eq 3 ] || fail "ward fs write $p: exit $status, expected 3 (denied)"
		[ ! -e "$WS/$p" ] || fail "the fence let $p be written"
	done
}

# --- 2. the traps beside git -----------------------------------------------------

# Created (missing before: bwrap cannot bind them) or changed (existing:
# Landlock cannot keep them): after the run everything is as it was.
traps_case() {
	local v=$1 who=$2
	require_runner "$v"
	become "$who"
	as_user sh -c "mkdir '$WS/.vscode' && echo '{}' > '$WS/.vscode/settings.json'"
	ward_run "$v" workspace-write -c '
		mkdir -p .vscode .idea .claude .husky .ward
		echo "{\"version\":\"2.0.0\",\"tasks\":[{\"label\":\"x\",\"command\":\"touch $1\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}" > .vscode/tasks.json
		echo "{\"terminal.integrated.env.linux\":{\"X\":\"1\"}}" > .vscode/settings.json
		echo "<x/>" > .idea/workspace.xml
		echo "{\"hooks\":{}}" > .claude/settings.json
		echo "{\"mcpServers\":{\"x\":{\"command\":\"touch\"}}}" > .mcp.json
		echo "touch $1" > .envrc
		printf "#!/bin/sh\ntouch %s\n" "$1" > .husky/pre-commit
		echo "mode: danger-full-access" > .ward/config.yml
		echo DONE' sh "$RT_PWN"
	local p
	for p in .vscode/tasks.json .idea .claude .mcp.json .envrc .husky .ward; do
		[ ! -e "$WS/$p" ] || fail "$p is still in the workspace"
	done
	[ "$(cat "$WS/.vscode/settings.json")" = "{}" ] ||
		fail ".vscode/settings.json was not put back"
	if [[ "$output" == *DONE* ]]; then
		[[ "$stderr" == *"appeared during the run"* ]] ||
			fail "the guard said nothing"
	fi
	assert_no_quarantine_in_ws
}

@test "bwrap: .vscode, .idea, .claude, .mcp.json, .envrc, .husky, .ward stay the user's (root)" { traps_case bwrap root; }
@test "bwrap: .vscode, .idea, .claude, .mcp.json, .envrc, .husky, .ward stay the user's (nobody)" { traps_case bwrap nobody; }
@test "landlock: .vscode, .idea, .claude, .mcp.json, .envrc, .husky, .ward stay the user's (root)" { traps_case landlock root; }
@test "landlock: .vscode, .idea, .claude, .mcp.json, .envrc, .husky, .ward stay the user's (nobody)" { traps_case landlock nobody; }

# --- 2. releasing a protected path: the user's file only ---------------------------

@test "unprotect in the user's file releases .vscode (and only that)" {
	require_runner landlock
	mkdir -p "$HOME/.config/ward"
	printf 'unprotect:\n  - .vscode\n' >"$HOME/.config/ward/config.yml"
	ward_run landlock workspace-write -c \
		'mkdir -p .vscode .idea && echo "{}" > .vscode/tasks.json && echo x > .idea/x'
	assert_status 0
	[ -e "$WS/.vscode/tasks.json" ] || fail "the released .vscode was reverted"
	[ ! -e "$WS/.idea" ] || fail ".idea was released too"
	run "$WARD" config check -w "$WS"
	[[ "$output" == *"unprotect"*"$WS/.vscode"* ]] || fail "config check does not show it"
}

# A project file is a ceiling (config_schema.c, ward_cfg_ignore): its
# unprotect is ignored with a warning naming the file and line, never a
# lockout, and the paths stay protected; --config may not release a path
# either (an error).
@test "unprotect in a project file is ignored (the path stays protected); in --config an error" {
	require_runner landlock
	mkdir -p "$WS/.ward"
	printf '# the repository asks\nunprotect:\n  - .vscode\n' >"$WS/.ward/config.yml"
	run "$WARD" config check -w "$WS"
	[ "$status" -eq 0 ] || fail "the project file locked the user out: $output"
	[[ "$output" == *"$WS/.ward/config.yml:2: unprotect: ignored"* ]] ||
		fail "the warning does not name the file and line: $output"
	ward_run landlock workspace-write -c \
		'mkdir -p .vscode && echo "{}" > .vscode/tasks.json'
	[[ "$stderr" == *"config.yml:2: unprotect: ignored"* ]] ||
		fail "ward run did not say what it ignored: $stderr"
	[ ! -e "$WS/.vscode/tasks.json" ] || fail "the project file released .vscode"
	rm -rf "$WS/.ward"
	printf 'unprotect: [.envrc]\n' >"$OUT_DIR/extra.yml"
	run "$WARD" config check -w "$WS" --config "$OUT_DIR/extra.yml"
	[ "$status" -ne 0 ] || fail "--config was accepted"
	[[ "$output" == *"$OUT_DIR/extra.yml:1: unprotect: refused"* ]] ||
		fail "the error does not name the file and line"
}

# The guard must not take the user's own edits for the command's: under
# bwrap an existing protected path is bound read-only inside, so a change
# made outside during the run (an IDE rewriting .idea/workspace.xml) stays.
@test "bwrap: an edit made outside the sandbox during the run is left alone" {
	require_runner bwrap
	mkdir -p "$WS/.idea"
	echo '<a/>' >"$WS/.idea/workspace.xml"
	"$WARD" run --runner bwrap -m workspace-write -w "$WS" -c \
		'echo started > started; for i in $(seq 400); do [ -e go ] && exit 0; sleep 0.05; done; exit 1' \
		>"$E2E_CAP/out" 2>"$E2E_CAP/err" &
	local w=$!
	E2E_PIDS+=("$w")
	for _ in $(seq 400); do [ -e "$WS/started" ] && break; sleep 0.05; done
	[ -e "$WS/started" ] || fail "the command did not start"
	echo '<b/>' >"$WS/.idea/workspace.xml"
	touch "$WS/go"
	wait "$w" || fail "the command failed: $(cat "$E2E_CAP/err")"
	[ "$(cat "$WS/.idea/workspace.xml")" = '<b/>' ] ||
		fail "the user's edit was reverted"
	! grep -q "ward: protected" "$E2E_CAP/err" || fail "the guard reported the user's edit"
}
