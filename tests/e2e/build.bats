#!/usr/bin/env bats
# shellcheck shell=bats
#
# How ward is built: a static ward (the default build links glibc
# statically; WARD_LINK=musl, musl) must never load a shared object at run
# time. A static glibc program that does (an NSS module for a uid
# /etc/passwd does not know, with HOME unset: "systemd", "sss") loads a
# second libc and crashes; ward restricts NSS to its built-in "files"
# source, and its proxy resolves names with libevent's evdns, never
# getaddrinfo.

bats_require_minimum_version 1.5.0
load helpers

setup() {
	e2e_setup
}

teardown() {
	e2e_teardown
}

require_static_ward() {
	[ -z "${WARD_SANITIZE:-}" ] ||
		skip "the sanitizer lane links ward dynamically"
	command -v readelf >/dev/null || skip "readelf is not installed"
	if readelf -lW "$WARD" | grep -q 'program interpreter'; then
		skip "this ward is dynamic (make WARD_LINK=dynamic)"
	fi
	command -v strace >/dev/null || skip "strace is not installed"
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	[ "$(id -u)" = 0 ] || skip "needs root to switch to a uid no password file knows"
}

# Run ward ARG... under strace as uid 12345 (in no password file), without
# HOME or the XDG directories, in the workspace; $TRACE is the log (in the
# outside directory: strace runs as that uid too).
traced_ward() {
	chmod 0777 "$WS" "$OUT_DIR"
	TRACE=$OUT_DIR/trace
	# The uid has no home: ward needs none for these commands.
	run --separate-stderr timeout -k 5 "$E2E_TIMEOUT" \
		setpriv --reuid=12345 --regid=12345 --clear-groups \
		env -C "$WS" -u HOME -u XDG_STATE_HOME -u XDG_CONFIG_HOME \
		strace -f -qq -o "$TRACE" \
		-e trace=openat,open,execve,clone,clone3,fork,vfork \
		"$WARD" "$@"
	echo "# status $status; stderr: $stderr"
}

@test "a static ward, as a uid no password file knows with HOME unset, loads no shared object" {
	require_static_ward
	traced_ward config check -w "$WS"
	[ "$status" -ne 139 ]
	run "$PY" "$BATS_TEST_DIRNAME/ward_opens.py" "$TRACE" \
		'\.so(\.[0-9]+)*$|/ld\.so\.cache$'
	echo "# ward's code opened: $output"
	[ "$status" -eq 0 ]
	# It did look the uid up (ward_opens.py exits 1 on a match).
	run -1 "$PY" "$BATS_TEST_DIRNAME/ward_opens.py" "$TRACE" \
		'^/etc/passwd$'
}

@test "a static ward runs a command as that uid without a crash and without loading a shared object" {
	require_static_ward
	traced_ward run --runner landlock -- true
	[ "$status" -eq 0 ]
	run "$PY" "$BATS_TEST_DIRNAME/ward_opens.py" "$TRACE" \
		'\.so(\.[0-9]+)*$|/ld\.so\.cache$'
	echo "# ward's code opened: $output"
	[ "$status" -eq 0 ]
}

@test "the proxy of a static ward resolves a name (hosts file) without NSS or a shared object" {
	require_static_ward
	command -v curl >/dev/null || skip "curl is not installed"
	# localhost comes from /etc/hosts (evdns reads it itself); nothing
	# listens on port 1, so the proxy answers 502 after resolving. (An
	# empty --noproxy: through the proxy, whatever NO_PROXY says.)
	traced_ward run --runner landlock --allow-domain localhost -- \
		curl -s -o /dev/null -w '%{http_code}' --noproxy '' \
		http://localhost:1/
	[[ "$output" == 502 ]]
	run "$PY" "$BATS_TEST_DIRNAME/ward_opens.py" "$TRACE" \
		'\.so(\.[0-9]+)*$|/ld\.so\.cache$|^/etc/gai\.conf$'
	echo "# ward's code opened: $output"
	[ "$status" -eq 0 ]
	# It did resolve: the proxy read the hosts file (a match: exit 1).
	run -1 "$PY" "$BATS_TEST_DIRNAME/ward_opens.py" "$TRACE" \
		'^/etc/hosts$'
}

@test "with musl-gcc installed the launchers are musl programs, on a new machine's first make too" {
	[ -z "${WARD_SANITIZE:-}" ] ||
		skip "the sanitizer lane links the launchers with the compiler"
	command -v musl-gcc >/dev/null || skip "musl-gcc is not installed"
	command -v nm >/dev/null || skip "nm is not installed"
	local b
	# The compiler was chosen when make started, before scripts/deps.sh
	# installed musl-tools: a glibc launcher (six times the size, slower
	# to start on every call) until the next make clean.
	for b in landlock-run ward-bridge; do
		nm "$E2E_BUILD/bin/$b" | grep -qw __init_libc ||
			fail "$E2E_BUILD/bin/$b is not linked with musl"
	done
}
