#!/usr/bin/env bats
# shellcheck shell=bats
#
# End-to-end tests of ward's network proxy and ward-bridge with real
# clients against real servers on this host (there is no internet here):
# curl over HTTP, HTTPS (CONNECT) and SOCKS5, git clone over dumb HTTP and
# HTTPS, python's http.server (tests/e2e/http_server.py) as the server,
# and bwrap --unshare-net with ward-bridge for the sandbox side.
#
# The proxy runs in build/tests/ward-proxyd (libward's proxy on its own
# thread, events written as JSON lines). Names resolve through a private
# hosts file: allowed.test, denied.test, tls.test, git.test and
# a.wild.test all point at 127.0.0.1, where the servers listen.

bats_require_minimum_version 1.5.0

ROOT="$BATS_TEST_DIRNAME/../.."
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
PROXYD="$BUILD/tests/ward-proxyd"
BRIDGE="$BUILD/bin/ward-bridge"
SERVER="$BATS_TEST_DIRNAME/http_server.py"
PY=/usr/bin/python3

setup() {
	[ -x "$PROXYD" ] || skip "$PROXYD is not built (run make check)"
	command -v curl >/dev/null || skip "curl is not installed"
	[ -x "$PY" ] || skip "python3 is not installed"
	# A directory an unprivileged user can reach too (as_nobody).
	T=$(mktemp -d /tmp/ward-e2e-proxy.XXXXXX)
	chmod 0755 "$T"
	PIDS=()
	AS=()
	WRAP=()
	mkdir -p "$T/www"
	echo "hello from the allowed server" >"$T/www/hello.txt"
	echo "127.0.0.1 localhost allowed.test denied.test tls.test" \
		"git.test a.wild.test" >"$T/hosts"
	chmod 0644 "$T/hosts"
	unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy \
		NO_PROXY no_proxy
}

teardown() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$T"
}

# Wait until FILE holds LINE-PATTERN (bounded; the wait is not a test).
wait_for() {
	local i
	for i in $(seq 1 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "# $1 never showed '$2'; it has: $(cat "$1" 2>/dev/null)"
	return 1
}

make_cert() {
	[ -e "$T/cert.pem" ] && return 0
	command -v openssl >/dev/null || skip "openssl is not installed"
	openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=tls.test \
		-addext subjectAltName=DNS:tls.test,DNS:git.test \
		-keyout "$T/key.pem" -out "$T/cert.pem" 2>/dev/null
}

# start_server [tls]: serve $T/www on 127.0.0.1; sets $SPORT.
start_server() {
	local pf=$T/server-$RANDOM.port
	if [ "${1:-}" = tls ]; then
		make_cert
		"$PY" "$SERVER" "$T/www" "$pf" "$T/cert.pem" "$T/key.pem" 3>&- &
	else
		"$PY" "$SERVER" "$T/www" "$pf" 3>&- &
	fi
	PIDS+=($!)
	wait_for "$pf" '^[0-9]'
	SPORT=$(cat "$pf")
}

# start_proxy ARG...: ward-proxyd (as "${AS[@]}", under "${WRAP[@]}")
# on TCP and on $T/proxy.sock; sets $PPORT, $PSOCK, $EVENTS.
start_proxy() {
	PSOCK=$T/proxy.sock
	EVENTS=$T/events.jsonl
	: >"$T/proxyd.out"
	"${AS[@]}" "${WRAP[@]}" "$PROXYD" --tcp --unix "$PSOCK" \
		--hosts "$T/hosts" --events "$EVENTS" "$@" \
		>"$T/proxyd.out" 2>"$T/proxyd.err" 3>&- &
	PROXYD_PID=$!
	PIDS+=("$PROXYD_PID")
	wait_for "$T/proxyd.out" '^unix='
	PPORT=$(sed -n 's/^port=//p' "$T/proxyd.out")
}

# Stop the proxy: on SIGTERM it reports every connection, then exits.
stop_proxy() {
	local rc=0
	kill -TERM "$PROXYD_PID"
	wait "$PROXYD_PID" || rc=$?
	echo "# proxy exited $rc; stderr: $(cat "$T/proxyd.err")"
	return "$rc"
}

# events PYTHON-EXPR: evaluate over the list `ev` of event dicts.
events() {
	"$PY" -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(eval(sys.argv[2]))' "$EVENTS" "$1"
}

# curl through the proxy: proxy URL, then curl arguments.
pcurl() {
	curl -sS --max-time 30 --proxy "$@"
}

# --- the proxy ------------------------------------------------------------

@test "proxy: curl fetches an allowed name over plain HTTP" {
	start_server
	start_proxy --allow allowed.test
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" \
		"http://allowed.test:$SPORT/hello.txt"
	echo "# $output $stderr"
	[ "$status" = 0 ]
	[ "$output" = "hello from the allowed server" ]
	stop_proxy
	run events '[(e["verdict"], e["protocol"], e["host"], e["port"],
	              e["address"]) for e in ev]'
	echo "# $output"
	[ "$output" = "[('allowed', 'http', 'allowed.test', $SPORT, '127.0.0.1')]" ]
}

@test "proxy: curl fetches over HTTPS through a CONNECT tunnel" {
	start_server tls
	start_proxy --allow tls.test
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" \
		--cacert "$T/cert.pem" "https://tls.test:$SPORT/hello.txt"
	echo "# $output $stderr"
	[ "$status" = 0 ]
	[ "$output" = "hello from the allowed server" ]
	stop_proxy
	run events '[(e["verdict"], e["protocol"], e["host"],
	              e["sent"] > 0, e["received"] > 0) for e in ev]'
	[ "$output" = "[('allowed', 'connect', 'tls.test', True, True)]" ]
}

@test "proxy: a name not allowed gets 403 with the reason and X-Ward-Denied-Host" {
	start_server tls
	start_proxy --allow allowed.test
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" -i \
		"http://denied.test:$SPORT/hello.txt"
	echo "# $output"
	[ "$status" = 0 ]
	[[ "$output" == "HTTP/1.1 403 Forbidden"* ]]
	grep -qx $'X-Ward-Denied-Host: denied.test\r' <<<"$output"
	[ "$(tail -n 1 <<<"$output")" = "ward: network access to denied.test denied: it is not in the allowed domains" ]
	# HTTPS: the tunnel is refused with the same 403.
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" \
		--cacert "$T/cert.pem" "https://tls.test:$SPORT/hello.txt"
	echo "# $stderr"
	[ "$status" = 56 ]
	[[ "$stderr" == *403* ]]
	stop_proxy
	run events '[(e["verdict"], e["protocol"], e["host"], e["sent"],
	              e["received"]) for e in ev]'
	echo "# $output"
	[ "$output" = "[('denied', 'http', 'denied.test', 0, 0), ('denied', 'connect', 'tls.test', 0, 0)]" ]
}

@test "proxy: the denied list wins over the allowed one" {
	start_server
	start_proxy --allow '*.test' --allow allowed.test --deny allowed.test
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" -i \
		"http://allowed.test:$SPORT/hello.txt"
	[[ "$output" == "HTTP/1.1 403 Forbidden"* ]]
	[[ "$output" == *'it matches the denied pattern "allowed.test"'* ]]
}

@test "proxy: an IP address is refused unless that address is allowed" {
	start_server
	start_proxy --allow allowed.test --allow localhost
	# The server is there: only the proxy stands between.
	run curl -sS "http://127.0.0.1:$SPORT/hello.txt"
	[ "$output" = "hello from the allowed server" ]
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" -i \
		"http://127.0.0.1:$SPORT/hello.txt"
	echo "# $output"
	[[ "$output" == "HTTP/1.1 403 Forbidden"* ]]
	[[ "$output" == *"network access to 127.0.0.1 denied: an IP address is reachable only when that address itself is allowed"* ]]
	# SOCKS5 with an address (curl resolves locally): refused too.
	run --separate-stderr pcurl "socks5://127.0.0.1:$PPORT" \
		"http://localhost:$SPORT/hello.txt"
	[ "$status" = 97 ]
	stop_proxy
	start_proxy --allow 127.0.0.1
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" \
		"http://127.0.0.1:$SPORT/hello.txt"
	[ "$output" = "hello from the allowed server" ]
}

@test "proxy: SOCKS5 reaches an allowed name; a denied one is not allowed by ruleset" {
	start_server
	start_proxy --allow allowed.test
	run --separate-stderr pcurl "socks5h://127.0.0.1:$PPORT" \
		"http://allowed.test:$SPORT/hello.txt"
	[ "$status" = 0 ]
	[ "$output" = "hello from the allowed server" ]
	run --separate-stderr pcurl "socks5h://127.0.0.1:$PPORT" \
		"http://denied.test:$SPORT/hello.txt"
	echo "# $stderr"
	# curl 97: the proxy's reply code 2, "connection not allowed by
	# ruleset" (RFC 1928).
	[ "$status" = 97 ]
	[[ "$stderr" == *"(2)"* || "$stderr" == *"not allowed by ruleset"* ]]
	stop_proxy
	run events '[(e["verdict"], e["protocol"], e["host"]) for e in ev]'
	[ "$output" = "[('allowed', 'socks5', 'allowed.test'), ('denied', 'socks5', 'denied.test')]" ]
}

@test "proxy: a name allowed only by a wildcard cannot reach a private address (rebinding)" {
	start_server
	start_proxy --allow '*.wild.test'
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" -i \
		"http://a.wild.test:$SPORT/hello.txt"
	echo "# $output"
	[[ "$output" == "HTTP/1.1 403 Forbidden"* ]]
	[[ "$output" == *"resolves only to private or local addresses"* ]]
	stop_proxy
	# The exact name is trusted with what it resolves to.
	start_proxy --allow a.wild.test
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" \
		"http://a.wild.test:$SPORT/hello.txt"
	[ "$output" = "hello from the allowed server" ]
}

# A bare repository served as files (dumb HTTP): $T/www/repo.git.
make_repo() {
	command -v git >/dev/null || skip "git is not installed"
	export HOME=$T GIT_CONFIG_NOSYSTEM=1
	git init -q "$T/src"
	echo "tracked content" >"$T/src/file.txt"
	git -C "$T/src" add file.txt
	git -C "$T/src" -c user.name=t -c user.email=t@t commit -qm one
	git clone -q --bare "$T/src" "$T/www/repo.git"
	git -C "$T/www/repo.git" update-server-info
}

@test "proxy: git clone over dumb HTTP; a denied host fails with 403" {
	make_repo
	start_server
	start_proxy --allow git.test
	run --separate-stderr env http_proxy="http://127.0.0.1:$PPORT" \
		git clone -q "http://git.test:$SPORT/repo.git" "$T/clone"
	echo "# $stderr"
	[ "$status" = 0 ]
	[ "$(cat "$T/clone/file.txt")" = "tracked content" ]
	run --separate-stderr env http_proxy="http://127.0.0.1:$PPORT" \
		git clone -q "http://denied.test:$SPORT/repo.git" "$T/clone2"
	echo "# $stderr"
	[ "$status" != 0 ]
	[[ "$stderr" == *403* ]]
	[ ! -e "$T/clone2/file.txt" ]
	stop_proxy
	# Every request of the clone went through, each with bytes back.
	run events 'sorted(set((e["verdict"], e["host"]) for e in ev))'
	[ "$output" = "[('allowed', 'git.test'), ('denied', 'denied.test')]" ]
	run events 'all(e["received"] > 0 for e in ev if e["verdict"] == "allowed")'
	[ "$output" = True ]
}

@test "proxy: git clone over HTTPS through CONNECT" {
	make_repo
	start_server tls
	start_proxy --allow git.test
	run --separate-stderr env https_proxy="http://127.0.0.1:$PPORT" \
		GIT_SSL_CAINFO="$T/cert.pem" \
		git clone -q "https://git.test:$SPORT/repo.git" "$T/clone"
	echo "# $stderr"
	[ "$status" = 0 ]
	[ "$(cat "$T/clone/file.txt")" = "tracked content" ]
	stop_proxy
	run events 'sorted(set((e["verdict"], e["protocol"], e["host"]) for e in ev))'
	[ "$output" = "[('allowed', 'connect', 'git.test')]" ]
}

@test "proxy: every connection is reported once, with exact byte counts" {
	start_server
	start_proxy --allow allowed.test
	# SOCKS5 is transparent: what curl counts is what crossed the proxy.
	run --separate-stderr pcurl "socks5h://127.0.0.1:$PPORT" \
		-o /dev/null -w '%{size_request} %{size_header} %{size_download}' \
		"http://allowed.test:$SPORT/hello.txt"
	read -r req hdr body <<<"$output"
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" \
		"http://allowed.test:$SPORT/hello.txt"
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" -p \
		"http://allowed.test:$SPORT/hello.txt"
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" \
		"http://denied.test:$SPORT/hello.txt"
	run --separate-stderr pcurl "socks5h://127.0.0.1:$PPORT" \
		"http://denied.test:$SPORT/hello.txt"
	# Not a request at all.
	exec 5<>"/dev/tcp/127.0.0.1/$PPORT"
	printf 'hello?\r\n\r\n' >&5
	cat <&5 >/dev/null
	exec 5>&-
	stop_proxy
	sed 's/^/# /' "$EVENTS"
	run events 'len(ev), len(set(e["id"] for e in ev))'
	[ "$output" = "(6, 6)" ]
	run events '([e["verdict"] for e in ev].count("allowed"),
	             [e["verdict"] for e in ev].count("denied"),
	             [e["verdict"] for e in ev].count("invalid"))'
	[ "$output" = "(3, 2, 1)" ]
	run events '[(e["sent"], e["received"]) for e in ev][0]'
	[ "$output" = "($req, $((hdr + body)))" ]
	run events 'all(e["sent"] > 0 and e["received"] > 0 and
	                e["address"] == "127.0.0.1" and e["reason"] is None
	                for e in ev if e["verdict"] == "allowed")'
	[ "$output" = True ]
	run events 'all(e["sent"] == 0 and e["received"] == 0 and e["reason"]
	                for e in ev if e["verdict"] != "allowed")'
	[ "$output" = True ]
}

@test "proxy: no leaks or memory errors under valgrind" {
	[ -z "${WARD_SANITIZE:-}" ] ||
		skip "the sanitizer lane (make check-asan) checks the same under ASan: valgrind cannot run an ASan build"
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	start_server
	WRAP=(valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect
		--error-exitcode=9 --log-file="$T/vg.log")
	start_proxy --allow allowed.test
	pcurl "http://127.0.0.1:$PPORT" "http://allowed.test:$SPORT/hello.txt"
	pcurl "http://127.0.0.1:$PPORT" -p "http://allowed.test:$SPORT/hello.txt"
	pcurl "socks5h://127.0.0.1:$PPORT" "http://allowed.test:$SPORT/hello.txt"
	pcurl "http://127.0.0.1:$PPORT" "http://denied.test:$SPORT/" || true
	rc=0
	stop_proxy || rc=$?
	sed 's/^/# /' "$T/vg.log"
	[ "$rc" = 0 ]
	[ ! -s "$T/vg.log" ]
}

@test "proxy: the static musl build (libevent from scripts/musl-deps.sh) serves too" {
	[ -x "$PROXYD-musl" ] || skip "no musl build here (make WARD_LINK=musl builds one)"
	start_server
	PROXYD=$PROXYD-musl start_proxy --allow allowed.test
	run --separate-stderr pcurl "http://127.0.0.1:$PPORT" \
		"http://allowed.test:$SPORT/hello.txt"
	[ "$output" = "hello from the allowed server" ]
	run --separate-stderr pcurl "socks5h://127.0.0.1:$PPORT" \
		"http://denied.test:$SPORT/hello.txt"
	[ "$status" = 97 ]
	stop_proxy
	run events '[(e["verdict"], e["protocol"], e["host"]) for e in ev]'
	[ "$output" = "[('allowed', 'http', 'allowed.test'), ('denied', 'socks5', 'denied.test')]" ]
}

# --- the bridge ------------------------------------------------------------

need_bwrap() {
	[ -x "$BRIDGE" ] || skip "$BRIDGE is not built (run make)"
	command -v bwrap >/dev/null || skip "bwrap is not installed"
	bwrap --ro-bind / / --unshare-net -- true 2>/dev/null ||
		skip "bwrap --unshare-net does not work here"
}

# Run ARG... in a sandbox without network, behind ward-bridge on
# 127.0.0.1:3128 (as "${AS[@]}"), the proxy's socket bound at the fixed
# path docs/NETWORK.md gives.
in_sandbox() {
	"${AS[@]}" bwrap --ro-bind / / --dev /dev --proc /proc \
		--ro-bind "$PSOCK" /dev/ward-proxy.sock \
		--unshare-net --unshare-pid --unshare-user --die-with-parent \
		--new-session --cap-drop ALL -- \
		"$BRIDGE" --port 3128 --socket /dev/ward-proxy.sock -- "$@"
}

# The checks shared by root and nobody.
bridge_checks() {
	start_server
	start_proxy --allow allowed.test
	# Without the proxy nothing leaves the sandbox.
	run --separate-stderr in_sandbox curl -sS --max-time 30 \
		"http://127.0.0.1:$SPORT/hello.txt"
	echo "# direct: $status $stderr"
	[ "$status" = 7 ]
	# Through the bridge and the proxy: an allowed name works...
	run --separate-stderr in_sandbox curl -sS --max-time 30 \
		-x http://127.0.0.1:3128 "http://allowed.test:$SPORT/hello.txt"
	echo "# http: $status $output $stderr"
	[ "$status" = 0 ]
	[ "$output" = "hello from the allowed server" ]
	run --separate-stderr in_sandbox curl -sS --max-time 30 \
		-x socks5h://127.0.0.1:3128 "http://allowed.test:$SPORT/hello.txt"
	[ "$output" = "hello from the allowed server" ]
	# ...a denied one and an IP address get the proxy's refusal.
	run --separate-stderr in_sandbox curl -sS --max-time 30 -i \
		-x http://127.0.0.1:3128 "http://denied.test:$SPORT/hello.txt"
	echo "# denied: $output"
	[[ "$output" == "HTTP/1.1 403 Forbidden"* ]]
	[ "$(tail -n 1 <<<"$output")" = "ward: network access to denied.test denied: it is not in the allowed domains" ]
	run --separate-stderr in_sandbox curl -sS --max-time 30 -i \
		-x http://127.0.0.1:3128 "http://127.0.0.1:$SPORT/hello.txt"
	[[ "$output" == "HTTP/1.1 403 Forbidden"* ]]
	stop_proxy
	run events '[(e["verdict"], e["protocol"], e["host"]) for e in ev]'
	echo "# $output"
	[ "$output" = "[('allowed', 'http', 'allowed.test'), ('allowed', 'socks5', 'allowed.test'), ('denied', 'http', 'denied.test'), ('denied', 'http', '127.0.0.1')]" ]
}

@test "bridge: inside bwrap --unshare-net only the proxy is reachable (root)" {
	need_bwrap
	bridge_checks
}

@test "bridge: inside bwrap --unshare-net only the proxy is reachable (nobody)" {
	need_bwrap
	command -v setpriv >/dev/null || skip "setpriv is not installed"
	[ "$(id -u)" = 0 ] || skip "needs root to switch to nobody"
	chown 65534:65534 "$T"
	AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
	bridge_checks
}

@test "bridge: exit status and signals of the command pass through" {
	need_bwrap
	start_proxy
	run in_sandbox sh -c 'exit 7'
	[ "$status" = 7 ]
	run in_sandbox sh -c 'kill -TERM $$'
	[ "$status" = 143 ]
	# A signal sent to the bridge reaches the command.
	run in_sandbox sh -c 'kill -USR1 $PPID; sleep 5; exit 3'
	[ "$status" = $((128 + 10)) ]
	run in_sandbox sh -c 'echo out; echo err >&2'
	[ "$output" = $'out\nerr' ]
}

@test "bridge: usage errors and a missing socket fail closed (125, nothing runs)" {
	need_bwrap
	run --separate-stderr "$BRIDGE" --port 3128 --socket "$T/none.sock" \
		-- touch "$T/ran"
	[ "$status" = 125 ]
	[[ "$stderr" == "ward-bridge: cannot use the proxy socket $T/none.sock: No such file or directory" ]]
	run --separate-stderr "$BRIDGE" --port 3128 --socket "$T/hosts" \
		-- touch "$T/ran"
	[ "$status" = 125 ]
	[[ "$stderr" == "ward-bridge: $T/hosts is not a socket" ]]
	run --separate-stderr "$BRIDGE" --port 0 --socket "$T/hosts" -- true
	[ "$status" = 125 ]
	run --separate-stderr "$BRIDGE" --socket "$T/hosts" -- true
	[ "$status" = 125 ]
	run --separate-stderr "$BRIDGE" --port 3128 --socket "$T/hosts"
	[ "$status" = 125 ]
	[ ! -e "$T/ran" ]
	run "$BRIDGE" --help
	[ "$status" = 0 ]
	[[ "$output" == Usage:* ]]
}

@test "bridge: the bridge is statically linked" {
	[ -z "${WARD_SANITIZE:-}" ] ||
		skip "the sanitizer lane (make check-asan) links the bridge dynamically: ASan has no static runtime"
	[ -x "$BRIDGE" ] || skip "$BRIDGE is not built (run make)"
	command -v file >/dev/null || skip "file is not installed"
	run file -L "$BRIDGE"
	echo "# $output"
	[[ "$output" == *"statically linked"* || "$output" == *"static-pie linked"* ]]
}
