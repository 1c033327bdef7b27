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

# --- bwrap: the Landlock layer inside mounts the matches ------------------

# The argv of `ward confine --runner bwrap --json` (one element a line).
bwrap_argv() {
	run --separate-stderr "${E2E_AS[@]}" "$WARD" confine --json \
		--mode workspace-write --workspace "$WS" --runner bwrap \
		"${RULES[@]}" -- true
	assert_status 0
	$PY -c 'import json,sys; print("\n".join(json.load(sys.stdin)["argv"]))' <<<"$output"
}

@test "hide: bwrap hands the matches to the Landlock layer, not to its own mounts" {
	make_tree
	local argv inner
	for who in root nobody; do
		[ "$who" = root ] || as_nobody
		argv=$(bwrap_argv)
		# After bwrap's "--": the launcher's options, with the mounts.
		inner=$(sed -n '/^--$/,$p' <<<"$argv")
		grep -qx -- "--hide" <<<"$inner" || fail "$who: no --hide: $argv"
		grep -qx -- "--hide-ro" <<<"$inner" || fail "$who: no --hide-ro"
		grep -qx -- "--pin" <<<"$inner" || fail "$who: no --pin"
		grep -qxF "$WS/a/b/site.pem" <<<"$inner" || fail "$who: site.pem"
		# None of the matches is a bwrap mount any more.
		if sed '/^--$/,$d' <<<"$argv" | grep -qF "$WS/"; then
			fail "$who: a match is still in bwrap's profile: $argv"
		fi
		# Root only: bwrap keeps CAP_SYS_ADMIN for the launcher's mounts
		# (an unprivileged launcher makes its own user namespace).
		if [ "$who" = root ]; then
			grep -qx CAP_SYS_ADMIN <<<"$argv" || fail "root: no --cap-add"
		elif grep -qx -- "--cap-add" <<<"$argv"; then
			fail "nobody: --cap-add in $argv"
		fi
	done
}

# Every way around a mount: rename the match or a parent, hard link it,
# delete it, reach it through /proc/PID/root, remount it writable (as it
# is, and from a nested user and mount namespace), mount over a parent.
check_bypass() {
	local v=$1
	ward_run "$v" workspace-write "${RULES[@]}" -- $PY -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
def tried(what, f):
    try:
        r = f()
    except OSError:
        return
    if r is None or r == 0:
        print(what, "succeeded")
def readable(p):
    try:
        with open(p) as fh:
            return fh.read().strip()
    except OSError:
        return None
def write(p):
    # An existing file only ("r+" never creates one).
    with open(p, "r+") as fh:
        fh.seek(0, 2)
        fh.write("owned\n")
tried("rename site.pem", lambda: os.rename("a/b/site.pem", "a/b/moved"))
tried("rename a/b", lambda: os.rename("a/b", "a/moved"))
tried("rename a", lambda: os.rename("a", "moved"))
tried("rename src/x", lambda: os.rename("src/x", "src/moved"))
tried("rename keys.key", lambda: os.rename("keys.key", "moved.key"))
tried("unlink site.pem", lambda: os.unlink("a/b/site.pem"))
tried("unlink Cargo.lock", lambda: os.unlink("Cargo.lock"))
tried("rename Cargo.lock", lambda: os.rename("Cargo.lock", "moved.lock"))
tried("link site.pem", lambda: os.link("a/b/site.pem", "hard"))
tried("link Cargo.lock", lambda: os.link("Cargo.lock", "hard.lock"))
for p in ("hard", "moved", "a/moved/site.pem", "moved/b/site.pem"):
    if readable(p) == "pem":
        print("READ", p)
tried("write hard.lock", lambda: write("hard.lock"))
os.symlink("a/b/site.pem", "sym")
if readable("sym") is not None:
    print("READ sym")
for pid in ("self", "1", str(os.getppid())):
    if readable("/proc/%s/root%s/a/b/site.pem" % (pid, os.getcwd())) == "pem":
        print("READ /proc/%s/root" % pid)
def remount(p):
    return libc.mount(None, p.encode(), None, MS_REMOUNT | MS_BIND, None)
tried("remount Cargo.lock", lambda: remount("Cargo.lock"))
tried("remount site.pem", lambda: remount("a/b/site.pem"))
tried("bind over a", lambda: libc.mount(b"/tmp", b"a", None, MS_BIND, None))
if libc.unshare(0x10000000 | 0x20000) == 0:
    tried("nested remount Cargo.lock", lambda: remount("Cargo.lock"))
    tried("nested remount site.pem", lambda: remount("a/b/site.pem"))
    tried("nested umount site.pem", lambda: libc.umount2(b"a/b/site.pem", 2))
    tried("nested umount a/b", lambda: libc.umount2(b"a/b", 2))
    tried("nested rename a", lambda: os.rename("a", "moved"))
    if readable("a/b/site.pem") == "pem":
        print("READ nested")
    tried("nested write Cargo.lock", lambda: write("Cargo.lock"))
print("end")'
	[ "$status" = 0 ] || fail "$v: status $status"
	[ "$output" = end ] || fail "$v: $output"
	[ "$(cat "$WS/a/b/site.pem")" = pem ] || fail "$v: site.pem changed"
	[ "$(cat "$WS/Cargo.lock")" = lock ] || fail "$v: Cargo.lock changed"
	[ -d "$WS/a/b" ] && [ -d "$WS/keys.key" ] || fail "$v: a directory moved"
	rm -f "$WS/sym"
}

@test "hide: renames, links, /proc/PID/root and remounts do not get around a match (root and nobody)" {
	make_tree
	for who in root nobody; do
		[ "$who" = root ] || as_nobody
		for v in $(variants); do
			usable "$v" || continue
			check_bypass "$v"
			echo "$who $v ok"
		done
	done
}

# The descendants of process $1, from the host's /proc: "PID PPID NAME
# CapInh CapPrm CapEff CapBnd CapAmb", one a line.
CAPS_PY='
import os, sys
procs = {}
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        lines = open("/proc/%s/status" % pid).read().splitlines()
    except OSError:
        continue
    f = dict(l.split(":\t", 1) for l in lines if ":\t" in l)
    procs[pid] = f
todo, seen = [sys.argv[1]], set()
while todo:
    p = todo.pop()
    for pid, f in procs.items():
        if f["PPid"].strip() == p and pid not in seen:
            seen.add(pid)
            todo.append(pid)
            print(pid, p, f["Name"], *(f[k].strip() for k in
                  ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")))'

@test "hide: as root on bwrap, nothing that runs in the sandbox keeps a capability (bridge too)" {
	[ "$(id -u)" = 0 ] || skip "needs root"
	usable bwrap || skip "bwrap cannot start here"
	make_tree
	local line outer="" zero=0000000000000000 pid i
	for net in on allowlist; do
		local -a flags=()
		[ "$net" = on ] || flags=(--allow-domain localhost)
		rm -f "$WS/ready" "$WS/go"
		# The command reports its own sets, then waits while the host
		# looks at every process of the call.
		"$WARD" run --mode workspace-write --workspace "$WS" \
			--runner bwrap "${RULES[@]}" "${flags[@]}" -- sh -c '
			grep "^Cap" /proc/self/status >ready
			while [ ! -e go ]; do sleep 0.05; done' 2>/dev/null &
		pid=$!
		E2E_PIDS+=("$pid")
		for i in $(seq 200); do
			[ -s "$WS/ready" ] && break
			sleep 0.05
		done
		[ -s "$WS/ready" ] || fail "$net: the command did not start"
		output=$($PY -c "$CAPS_PY" "$pid")
		touch "$WS/go"
		wait "$pid" || fail "$net: status $?"
		echo "$output"
		[ "$(grep -c "$zero" "$WS/ready")" = 5 ] ||
			fail "$net: the command: $(cat "$WS/ready")"
		grep -q " landlock-run " <<<"$output" || fail "no launcher: $output"
		if [ "$net" = allowlist ]; then
			grep -q " ward-bridge " <<<"$output" || fail "no bridge: $output"
		fi
		outer=""
		while read -r line; do
			set -- $line
			# bwrap outside the sandbox (the caller's root), and its
			# pid 1 inside (a reaper that runs no command: no
			# capability, a bounding set it cannot use).
			if [ "$3" = bwrap ] && [ -z "$outer" ]; then
				outer=$1
				continue
			fi
			if [ "$3" = bwrap ] && [ "$2" = "$outer" ]; then
				[ "$4 $5 $6 $8" = "$zero $zero $zero $zero" ] ||
					fail "$net: bwrap's pid 1: $line"
				continue
			fi
			[ "$4 $5 $6 $7 $8" = "$zero $zero $zero $zero $zero" ] ||
				fail "$net: $3 keeps a capability: $line"
		done <<<"$output"
	done
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
