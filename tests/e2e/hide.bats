#!/usr/bin/env bats
# shellcheck shell=bats
#
# Glob rules inside the workspace really hidden, on every runner (bwrap and
# Landlock, which always runs through landlock-run), as root and as nobody: every
# `--` match can be neither read nor written, every `r-` match not written,
# the non-matches stay usable. On Landlock the launcher hides them by mounts
# in a private namespace (src/util/hide.c); these tests try to get around that:
# unmounting, a nested user namespace, another process's /proc/PID/root, a
# symbolic link, and look for mounts leaking to the host. The container
# lane (user namespaces denied: tests/e2e/nouserns.py) must carve the
# matches out of the grants or refuse — never run without the rule.

load helpers
bats_require_minimum_version 1.5.0

NOUSERNS=$E2E_ROOT/tests/e2e/nouserns.py

setup() {
	e2e_setup
}

teardown() {
	e2e_teardown
}

# The rules of bench/calls.sh part 5.
RULES=(--access '-- **/*.pem' --access '-- **/*.key' --access 'r- **/*.lock'
	--access '-- **/id_rsa*' --access 'r- src/**/*.env')

# A small tree with matches of every rule, and non-matches beside them.
# Everything is world-readable and -writable: what refuses nobody here is
# the sandbox, not the file modes.
make_tree() {
	mkdir -p "$WS/a/b" "$WS/src/x" "$WS/keys.key" "$WS/c"
	echo pem >"$WS/a/b/site.pem"
	echo key >"$WS/c/server.key"
	echo inkeys >"$WS/keys.key/inside"
	echo lock >"$WS/Cargo.lock"
	echo rsa >"$WS/c/id_rsa"
	echo env >"$WS/src/x/.env"
	echo notes >"$WS/a/b/notes.txt"
	echo topenv >"$WS/.env"
	chmod -R a+rwX "$WS"
}

variants() {
	echo bwrap landlock
}

# Skip the bwrap variant where bwrap cannot start (user namespaces denied).
usable() {
	if [ "$1" = bwrap ]; then
		"${E2E_AS[@]}" bwrap --ro-bind / / --unshare-user -- true 2>/dev/null
	fi
}

# Every match hidden, every non-match usable, in variant $1.
check_hidden() {
	local v=$1
	ward_run "$v" workspace-write "${RULES[@]}" -- sh -c '
		for f in a/b/site.pem c/server.key keys.key/inside c/id_rsa; do
			cat "$f" >/dev/null 2>&1 && echo "READ $f"
			(echo owned >"$f") 2>/dev/null && echo "WROTE $f"
		done
		touch keys.key/new 2>/dev/null && echo "CREATED keys.key/new"
		for f in Cargo.lock src/x/.env; do
			cat "$f" >/dev/null || echo "UNREADABLE $f"
			(echo owned >"$f") 2>/dev/null && echo "WROTE $f"
		done
		echo more >>a/b/notes.txt || echo "NOTES"
		echo more >>.env || echo "TOPENV"
		echo done'
	[ "$status" = 0 ] || fail "$v: status $status"
	[ "$output" = done ] || fail "$v: $output"
	[ "$(cat "$WS/a/b/site.pem")" = pem ] || fail "$v: site.pem changed"
	[ "$(cat "$WS/Cargo.lock")" = lock ] || fail "$v: Cargo.lock changed"
	[ "$(cat "$WS/src/x/.env")" = env ] || fail "$v: src/x/.env changed"
	[ ! -e "$WS/keys.key/new" ] || fail "$v: created in a hidden directory"
	[ "$(tail -1 "$WS/a/b/notes.txt")" = more ] || fail "$v: notes.txt"
	# No warning says a rule is not enforced.
	case "$stderr" in
	*"cannot be expressed"* | *"stays readable"*) fail "$v: $stderr" ;;
	esac
}

@test "hide: every glob match hidden on every runner (root)" {
	make_tree
	for v in $(variants); do
		usable "$v" || continue
		check_hidden "$v"
		echo "$v ok"
	done
}

@test "hide: every glob match hidden on every runner (nobody)" {
	make_tree
	as_nobody
	for v in $(variants); do
		usable "$v" || continue
		check_hidden "$v"
		echo "$v ok"
	done
}

@test "hide: a read-only run hides the matches too (landlock)" {
	make_tree
	ward_run landlock read-only "${RULES[@]}" -- cat "$WS/a/b/site.pem"
	assert_failed
	[ "$output" != pem ] || fail "the match was read"
	assert_marker read-only
}

# Covers cannot be taken away: unmount (as is, and from a nested user and
# mount namespace, where a process has every capability) fails, and the
# file stays unreadable.
check_unmount() {
	local v=$1
	ward_run "$v" workspace-write "${RULES[@]}" -- $PY -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
p = sys.argv[1].encode()
def tried(what, rc):
    if rc == 0:
        print(what, "succeeded")
tried("umount2", libc.umount2(p, 2))
tried("umount", libc.umount(p))
if libc.unshare(0x10000000 | 0x20000) == 0:
    tried("nested umount2", libc.umount2(p, 2))
    tried("nested umount", libc.umount(p))
try:
    print("read:", open(p).read().strip())
except OSError:
    pass
print("end")' "$WS/c/server.key"
	[ "$output" = end ] || fail "$v: $output"
}

@test "hide: the command cannot unmount a cover (root and nobody)" {
	make_tree
	for v in $(variants); do
		usable "$v" || continue
		check_unmount "$v"
	done
	as_nobody
	for v in $(variants); do
		usable "$v" || continue
		check_unmount "$v"
	done
}

@test "hide: another process's /proc/PID/root does not reach a hidden file" {
	make_tree
	for who in root nobody; do
		[ "$who" = root ] || as_nobody
		for v in landlock; do
			ward_run "$v" workspace-write "${RULES[@]}" -- sh -c '
				cat "/proc/$PPID/root$1" 2>/dev/null && echo LEAK
				cat "/proc/1/root$1" 2>/dev/null && echo LEAK1
				echo end' _ "$WS/c/server.key"
			[ "$output" = end ] || fail "$who $v: $output"
		done
	done
}

@test "hide: a symbolic link to a hidden match does not reveal it" {
	make_tree
	ln -s c/server.key "$WS/alias"
	# A link whose name matches is a name: what it points to is judged
	# by its own path (notes.txt stays usable, the call does not fail).
	ln -s notes.txt "$WS/a/b/link.pem"
	for v in $(variants); do
		usable "$v" || continue
		ward_run "$v" workspace-write "${RULES[@]}" -- sh -c '
			cat alias 2>/dev/null && echo LEAK
			cat a/b/link.pem >/dev/null || echo NOTES
			echo end'
		[ "$status" = 0 ] && [ "$output" = end ] ||
			fail "$v: $status $output"
	done
}

@test "hide: nothing leaks to the host's mount table" {
	make_tree
	local before during after
	before=$(cat /proc/self/mountinfo)
	for v in landlock; do
		ward_run "$v" workspace-write "${RULES[@]}" -- sh -c \
			'grep -c "" /proc/self/mountinfo >"$1"; sleep 1' _ "$WS/n.$v" &
		local pid=$!
		sleep 0.5
		during=$(cat /proc/self/mountinfo)
		wait "$pid"
		[ "$before" = "$during" ] || fail "$v: the host's mounts changed during the run"
		# Inside, the covers were there (more mounts than outside).
		[ "$(cat "$WS/n.$v")" -gt "$(grep -c '' /proc/self/mountinfo)" ] ||
			fail "$v: no covers inside"
	done
	after=$(cat /proc/self/mountinfo)
	[ "$before" = "$after" ] || fail "the host's mounts changed"
	if grep -qF "$WS" /proc/self/mountinfo; then
		fail "a cover is mounted on the host"
	fi
}

@test "hide: a match removed between the plan and the run does not fail it" {
	make_tree
	local argv
	run --separate-stderr "$WARD" confine --json --mode workspace-write \
		--workspace "$WS" --runner landlock "${RULES[@]}" -- \
		cat "$WS/a/b/notes.txt"
	assert_status 0
	argv=$($PY -c 'import json,sys; print("\n".join(json.load(sys.stdin)["argv"]))' <<<"$output")
	grep -qx -- "--hide" <<<"$argv" || fail "no --hide in $argv"
	# Gone: a hidden file, a hidden directory, a read-only one; and a
	# hidden file replaced by a symbolic link (skipped: a mount would
	# follow it — to a file that is not a match).
	rm -rf "$WS/a/b/site.pem" "$WS/keys.key" "$WS/Cargo.lock"
	rm -f "$WS/c/id_rsa"
	ln -s ../a/b/notes.txt "$WS/c/id_rsa"
	cd "$WS"
	run --separate-stderr "$PY" -c 'import os,sys; os.execv(sys.argv[1], sys.argv[1:])' $argv
	assert_status 0
	[ "$output" = notes ] || fail "output: $output; stderr: $stderr"
	# What was not removed is still hidden.
	run --separate-stderr "$PY" -c 'import os,sys; os.execv(sys.argv[1], sys.argv[1:])' \
		$(sed '$d' <<<"$argv") "$WS/c/server.key"
	assert_failed
	[ "$output" != key ] || fail "the match was read"
}

@test "hide: a working directory inside a hidden directory is not a way in" {
	make_tree
	local argv
	run --separate-stderr "$WARD" confine --json --mode workspace-write \
		--workspace "$WS" --runner landlock "${RULES[@]}" -- cat inside
	assert_status 0
	argv=$($PY -c 'import json,sys; print("\n".join(json.load(sys.stdin)["argv"]))' <<<"$output")
	# The launcher started in the hidden directory enters it again by
	# name after the covers are mounted: it sees the empty cover.
	cd "$WS/keys.key"
	run --separate-stderr "$PY" -c 'import os,sys; os.execv(sys.argv[1], sys.argv[1:])' $argv
	assert_failed
	[ "$output" != inkeys ] || fail "the content leaked"
}

# --- the container lane: user namespaces denied --------------------------

@test "hide: without user namespaces, ward probe says no mounts (nobody)" {
	as_nobody
	run --separate-stderr "${E2E_AS[@]}" "$NOUSERNS" "$WARD" probe --json
	[ "$status" != 77 ] || skip "nouserns.py: not x86_64"
	assert_status 0
	$PY -c 'import json,sys; d=json.load(sys.stdin); assert d["landlock"]["mounts"] is False, d' <<<"$output"
	run --separate-stderr "$WARD" probe --json
	$PY -c 'import json,sys; d=json.load(sys.stdin); assert d["landlock"]["mounts"] is True, d' <<<"$output"
}

@test "hide: without user namespaces, the matches are carved out of the grants (nobody)" {
	make_tree
	as_nobody
	E2E_WRAP=("$NOUSERNS")
	check_hidden landlock
	# Said: the carving's cost.
	grep -qF "landlock: hides" <<<"$stderr" || fail "no warning: $stderr"
}

@test "hide: without user namespaces, a carving past its budget is refused (nobody)" {
	mkdir -p "$WS/many"
	(cd "$WS/many" && seq 1 4200 | xargs touch)
	echo pem >"$WS/many/site.pem"
	chmod -R a+rwX "$WS"
	as_nobody
	E2E_WRAP=("$NOUSERNS")
	ward_run landlock workspace-write --access '-- **/*.pem' -- \
		touch "$WS/ran"
	assert_status 125
	[ ! -e "$WS/ran" ] || fail "the command ran"
	grep -qF 'rule "-- **/*.pem"' <<<"$stderr" || fail "the rule is not named: $stderr"
	grep -qF "refuses to run" <<<"$stderr" || fail "$stderr"
	# With mounts (no seccomp filter), the same call runs, hidden.
	E2E_WRAP=()
	ward_run landlock workspace-write --access '-- **/*.pem' -- \
		sh -c 'cat many/site.pem 2>/dev/null; touch ran'
	assert_status 0
	[ "$output" != pem ] || fail "the match was read"
	[ -e "$WS/ran" ] || fail "the command did not run"
}
