#!/usr/bin/env bats
# The network knob end to end (docs/NETWORK.md): real clients (curl, git,
# pip, npm, a raw TCP connect, a UDP datagram) against local stand-ins on
# the host's 127.0.0.1 (tests/e2e/net_server.py), on every runner (bwrap,
# Landlock through landlock-run) and every setting: off (the
# default of read-only and workspace-write), on, and an allowlist served
# by ward's proxy. Nothing here needs the internet.
#
# Names: the allowlist tests allow `localhost` (an exact pattern, so it may
# reach the host's loopback); ward then leaves it out of NO_PROXY, so the
# clients send it to the proxy (the loopback names the allowlist does not
# name stay in NO_PROXY, so that a command's own local servers work).

load helpers
bats_require_minimum_version 1.5.0

setup_file() {
	export NET_SRV NET_STATE NET_PID
	NET_SRV=$(mktemp -d /var/tmp/ward-net-srv.XXXXXX)
	NET_STATE=$(mktemp -d /var/tmp/ward-net-state.XXXXXX)
	chmod 0755 "$NET_SRV" "$NET_STATE"
	echo "ward ok" >"$NET_SRV/ok.txt"
	/usr/bin/python3 "$BATS_TEST_DIRNAME/net_server.py" "$NET_SRV" \
		"$NET_STATE" >/dev/null 2>&1 3>&- &
	NET_PID=$!
	for _ in $(seq 100); do
		[ -f "$NET_STATE/ports" ] && break
		sleep 0.05
	done
	[ -f "$NET_STATE/ports" ]
	# A dumb-HTTP git repository.
	(cd "$NET_SRV" && git init -q -b main src && cd src &&
		echo cloned >f && git add f &&
		git -c user.email=t@t -c user.name=t commit -qm one &&
		git clone -q --bare . ../repo.git && cd ../repo.git &&
		git update-server-info)
	# A pip "simple" index with one wheel.
	local d=$NET_SRV/simple/wardpkg
	mkdir -p "$d"
	make_wheel "$d"
	echo '<a href="wardpkg-1.0-py3-none-any.whl">wardpkg</a>' >"$d/index.html"
	# An npm registry document and its tarball.
	local http
	http=$(sed 's/.*http=\([0-9]*\).*/\1/' "$NET_STATE/ports")
	mkdir -p "$NET_SRV/npm/package"
	echo '{"name":"wardpkg","version":"1.0.0"}' >"$NET_SRV/npm/package/package.json"
	tar -C "$NET_SRV/npm" -czf "$NET_SRV/wardpkg-1.0.0.tgz" package
	printf '{"name":"wardpkg","dist-tags":{"latest":"1.0.0"},"versions":{"1.0.0":{"name":"wardpkg","version":"1.0.0","dist":{"tarball":"http://localhost:%s/wardpkg-1.0.0.tgz","shasum":"%s","integrity":"sha512-%s"}}}}\n' \
		"$http" "$(sha1sum "$NET_SRV/wardpkg-1.0.0.tgz" | cut -d' ' -f1)" \
		"$(openssl dgst -sha512 -binary "$NET_SRV/wardpkg-1.0.0.tgz" | base64 -w0)" \
		>"$NET_SRV/wardpkg"
}

teardown_file() {
	kill "$NET_PID" 2>/dev/null || true
	rm -rf "$NET_SRV" "$NET_STATE"
}

setup() {
	e2e_setup
	HTTP=$(sed 's/.*http=\([0-9]*\).*/\1/' "$NET_STATE/ports")
	TCP=$(sed 's/.*tcp=\([0-9]*\).*/\1/' "$NET_STATE/ports")
	UDP=$(sed 's/.*udp=\([0-9]*\).*/\1/' "$NET_STATE/ports")
	: >"$NET_STATE/http.log"
	: >"$NET_STATE/tcp.log"
	: >"$NET_STATE/udp.log"
	unset HTTP_PROXY HTTPS_PROXY ALL_PROXY NO_PROXY http_proxy https_proxy all_proxy no_proxy
}

teardown() {
	e2e_teardown
}

net_marker() {
	printf '[sandbox: network access to %s denied]' "$1"
}

# What leaves by raw TCP and by UDP, tried from inside: prints one line
# "tcp=<ok|errno> udp=<sent|errno>".
RAW='import socket,sys
t,u=int(sys.argv[1]),int(sys.argv[2])
try:
    s=socket.create_connection(("127.0.0.1",t),timeout=3); r=s.recv(6); s.close(); a="ok" if r==b"hello\n" else "bad"
except OSError as e: a=str(e.errno)
try:
    d=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); d.sendto(b"exfil",("127.0.0.1",u)); b="sent"
except OSError as e: b=str(e.errno)
print("tcp=%s udp=%s"%(a,b))'

# Wait a little for a datagram that may be in flight, then the UDP log.
udp_log() {
	sleep 0.3
	cat "$NET_STATE/udp.log"
}

# --- off ------------------------------------------------------------------

check_off() {
	local v=$1
	ward_run "$v" read-only -- curl -sS -m 5 -o /dev/null "http://127.0.0.1:$HTTP/ok.txt"
	[ "$status" -ne 0 ] || fail "curl reached the host"
	ward_run "$v" read-only -- "$PY" -c "$RAW" "$TCP" "$UDP"
	[ "$status" = 0 ]
	case "$v" in
	bwrap)
		# Its own loopback: refused there, never the host's.
		[ "$output" = "tcp=111 udp=sent" ] ;;
	*)
		# The supervisor answers every inet connect and send as a host
		# without a network would: ENETUNREACH.
		[ "$output" = "tcp=101 udp=101" ] ;;
	esac
	[ -z "$(udp_log)" ] || fail "a datagram left: $(udp_log)"
	[ ! -s "$NET_STATE/tcp.log" ] && [ ! -s "$NET_STATE/http.log" ] ||
		fail "a connection reached the host"
	# The default is off: the same without --network, and with it.
	ward_run "$v" workspace-write --network off -- curl -sS -m 5 -o /dev/null "http://127.0.0.1:$HTTP/ok.txt"
	[ "$status" -ne 0 ]
	[ ! -s "$NET_STATE/http.log" ]
}

@test "network off (default): nothing leaves (bwrap)" { check_off bwrap; }
@test "network off (default): nothing leaves (landlock)" { check_off landlock; }

# The network is the reason: after a refused lookup or connect under
# network off, the marker names the network and how to allow a host, for
# every client as it fails (never a file denial: under Landlock the
# filter's EACCES is a socket's, not a file's). The addresses are
# TEST-NET-1's (192.0.2.0/24): nothing would answer even with a network.
OFF_MARKER='[sandbox: network access denied: the network is off under workspace-write mode]'
OFF_HINT='allow a host with --allow-domain HOST (repeatable; or the whole network with --network on)'

check_off_marker() {
	local v=$1 c
	local -a clients=(
		"curl -sS -m 10 http://registry.example.invalid/"
		"curl -sS -m 10 http://192.0.2.1/"
		"wget -T 10 -t 1 -O /dev/null http://registry.example.invalid/"
		"wget -T 10 -t 1 -O /dev/null http://192.0.2.1/"
		"git ls-remote http://registry.example.invalid/repo.git"
		"$PY -c 'import socket; socket.getaddrinfo(\"registry.example.invalid\", 80)'"
		"$PY -m pip download --no-deps --no-cache-dir --disable-pip-version-check --retries 1 --timeout 10 -d $WS/dl --trusted-host registry.example.invalid --index-url http://registry.example.invalid/simple/ wardpkg"
	)
	command -v wget >/dev/null || skip "wget is not installed"
	if command -v npm >/dev/null; then
		clients+=("npm view wardpkg version --registry http://registry.example.invalid/ --fetch-retries 0 --fetch-timeout 10000 --cache $WS/.npm")
		clients+=("node -e 'require(\"net\").connect(80, \"192.0.2.1\").on(\"error\", e => { console.error(e.message); process.exit(1) })'")
	fi
	for c in "${clients[@]}"; do
		ward_run "$v" workspace-write -c "$c"
		[ "$status" -ne 0 ] || fail "$c: succeeded with the network off"
		[ "$(grep -cxF "$OFF_MARKER" "$E2E_CAP/stderr")" = 1 ] ||
			fail "$c: no network marker"
		grep -qxF "$OFF_HINT" "$E2E_CAP/stderr" || fail "$c: no hint"
		[[ "$stderr" != *"file access denied"* ]] ||
			fail "$c: taken for a file denial"
	done
	# A command that handles its own failure was not stopped: no marker.
	ward_run "$v" workspace-write -c "curl -sS -m 10 http://registry.example.invalid/; exit 0"
	[[ "$stderr" != *"network access denied"* ]] || fail "a marker after a success"
	# --json says it too, and in a session the escalation is offered.
	ward_run "$v" workspace-write --json -- curl -sS -m 10 http://registry.example.invalid/
	[ "$(jq -r .network.off_denied <<<"$output")" = true ]
	[[ "$(jq -r .network.denied <<<"$output")" == "$OFF_MARKER"* ]]
	[ ! -s "$NET_STATE/http.log" ] || fail "a request reached the host"
}

@test "network off: a refused lookup or connect names the network, for curl, wget, git, python, pip, npm, node (bwrap)" { check_off_marker bwrap; }
@test "network off: a refused lookup or connect names the network, for curl, wget, git, python, pip, npm, node (landlock)" { check_off_marker landlock; }

@test "network off: in a session the marker is followed by the escalation hint" {
	local s
	s=$("$WARD" session new --cwd "$WS" --mode workspace-write)
	run --separate-stderr "$WARD" run --session "$s" -- curl -sS -m 10 http://registry.example.invalid/
	[ "$status" -ne 0 ]
	[[ "$stderr" == *"$OFF_MARKER"$'\n'"$OFF_HINT"$'\n''retry once with --escalate-network HOST (or on) --justification TEXT; the approval prompt asks you'* ]]
	"$WARD" session rm "$s"
}

# An allowed name ward's proxy cannot resolve (its own lookup, outside the
# sandbox): a line of its own, not a refusal and not the sandbox's doing.
@test "network allowlist: an allowed name the proxy cannot resolve gets its own line" {
	local v
	for v in bwrap landlock; do
		ward_run "$v" read-only --allow-domain no-such-host.invalid -- \
			curl -fsS -m 60 -o /dev/null http://no-such-host.invalid/
		[ "$status" -ne 0 ]
		grep -qxF "[sandbox: network: no-such-host.invalid is allowed, but ward's proxy could not resolve it (the lookup outside the sandbox failed: a DNS problem, not a refusal)]" "$E2E_CAP/stderr" ||
			fail "$v: no line for the failed lookup"
		[[ "$stderr" != *"network access to no-such-host.invalid denied"* ]]
		[[ "$stderr" != *"network is off"* ]]
	done
}

# --- on -------------------------------------------------------------------

check_on() {
	local v=$1
	ward_run "$v" read-only --network on -- curl -sS -m 5 "http://127.0.0.1:$HTTP/ok.txt"
	[ "$status" = 0 ]
	[ "$output" = "ward ok" ]
	ward_run "$v" read-only --network on -- "$PY" -c "$RAW" "$TCP" "$UDP"
	[ "$output" = "tcp=ok udp=sent" ]
	[ "$(udp_log)" = exfil ]
}

@test "network on: the host's network (bwrap)" { check_on bwrap; }
@test "network on: the host's network (landlock)" { check_on landlock; }

# --- allowlist ------------------------------------------------------------

check_allow() {
	local v=$1
	# An allowed name works, through the proxy: an allowed localhost is
	# the host's loopback, so NO_PROXY leaves it out and the client
	# sends it to the proxy.
	ward_run "$v" read-only --allow-domain localhost -- \
		curl -sS -m 10 "http://localhost:$HTTP/ok.txt"
	[ "$status" = 0 ]
	[ "$output" = "ward ok" ]
	[[ "$stderr" != *"[sandbox: network"* ]]
	grep -qx "GET /ok.txt" "$NET_STATE/http.log"
	# A denied name: the proxy's 403, the marker exactly once.
	ward_run "$v" read-only --allow-domain localhost -- \
		curl --noproxy '' -sS -m 10 -o /dev/null -w '%{http_code}' "http://denied.example:$HTTP/ok.txt"
	[ "$output" = 403 ]
	[ "$(grep -cxF "$(net_marker denied.example)" "$E2E_CAP/stderr")" = 1 ]
	# An IP literal, even of an allowed host: refused with the marker.
	ward_run "$v" read-only --allow-domain localhost -- \
		curl --noproxy '' -sS -m 10 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP/ok.txt"
	[ "$output" = 403 ]
	grep -qxF "$(net_marker 127.0.0.1)" "$E2E_CAP/stderr"
	# HTTPS (a CONNECT tunnel) to a denied name: refused too.
	ward_run "$v" read-only --allow-domain localhost -- \
		sh -c 'curl -sS -m 10 -o /dev/null -x "$ALL_PROXY" https://evil.example/'
	[ "$status" -ne 0 ]
	grep -qxF "$(net_marker evil.example)" "$E2E_CAP/stderr"
	# Direct connections and UDP still leave nothing.
	: >"$NET_STATE/tcp.log"
	ward_run "$v" read-only --allow-domain localhost -- "$PY" -c "$RAW" "$TCP" "$UDP"
	case "$v" in
	bwrap) [ "$output" = "tcp=111 udp=sent" ] ;;
	# Anywhere but the proxy endpoint itself: refused (ECONNREFUSED).
	*) [ "$output" = "tcp=111 udp=111" ] ;;
	esac
	[ -z "$(udp_log)" ]
	[ ! -s "$NET_STATE/tcp.log" ]
}

@test "network allowlist: NO_PROXY leaves out the loopback names the allowlist names" {
	local v
	for v in bwrap landlock; do
		ward_run "$v" read-only --allow-domain localhost -- sh -c 'echo "$NO_PROXY $no_proxy"'
		[ "$output" = "127.0.0.1,::1 127.0.0.1,::1" ]
		ward_run "$v" read-only --allow-domain 127.0.0.1 --allow-domain '[::1]' \
			--allow-domain localhost -- sh -c 'echo "[$NO_PROXY]"'
		[ "$output" = "[]" ]
		ward_run "$v" read-only --allow-domain example.com -- sh -c 'echo "$NO_PROXY"'
		[ "$output" = "localhost,127.0.0.1,::1" ]
		# A wildcard never reaches loopback: it changes nothing.
		ward_run "$v" read-only --allow-domain '*.localhost' -- sh -c 'echo "$NO_PROXY"'
		[ "$output" = "localhost,127.0.0.1,::1" ]
	done
}

@test "network allowlist: allowed name, denied name, IP literal (bwrap)" { check_allow bwrap; }
# ward installed where the sandbox sees something else: bwrap mounts its own
# /tmp, so a ward-bridge found beside a ward under /tmp must be bound in.
@test "network allowlist: a ward installed under /tmp still reaches its bridge (bwrap)" {
	local inst
	inst=$(mktemp -d /tmp/ward-e2e-inst.XXXXXX)
	cp "$WARD" "$LAUNCHER" "$(dirname "$WARD")/ward-bridge" "$inst/"
	WARD=$inst/ward ward_run bwrap read-only --allow-domain localhost -- \
		curl -sS -m 10 "http://localhost:$HTTP/ok.txt"
	rm -rf "$inst"
	[ "$status" = 0 ] || fail "the command did not run: $stderr"
	[ "$output" = "ward ok" ]
}
@test "network allowlist: allowed name, denied name, IP literal (landlock)" { check_allow landlock; }

check_clients() {
	local v=$1
	ward_run "$v" workspace-write --allow-domain localhost -- \
		git clone -q "http://localhost:$HTTP/repo.git" "$WS/clone"
	[ "$status" = 0 ]
	[ "$(cat "$WS/clone/f")" = cloned ]
	ward_run "$v" workspace-write --allow-domain localhost -- \
		"$PY" -m pip download --no-deps --no-cache-dir \
		--disable-pip-version-check --index-url "http://localhost:$HTTP/simple/" \
		-d "$WS/dl" wardpkg
	[ "$status" = 0 ]
	[ -f "$WS/dl/wardpkg-1.0-py3-none-any.whl" ]
	if command -v npm >/dev/null; then
		ward_run "$v" workspace-write --allow-domain localhost -- \
			npm pack wardpkg --registry "http://localhost:$HTTP/" \
			--cache "$WS/.npm" --pack-destination "$WS" --loglevel error
		[ "$status" = 0 ]
		[ -f "$WS/wardpkg-1.0.0.tgz" ]
	fi
	# The same clients with the network off reach nothing.
	: >"$NET_STATE/http.log"
	ward_run "$v" workspace-write -- env NO_PROXY= no_proxy= \
		git clone -q "http://localhost:$HTTP/repo.git" "$WS/clone2"
	[ "$status" -ne 0 ]
	[ ! -s "$NET_STATE/http.log" ]
	ward_run "$v" workspace-write --allow-domain other.example -- \
		env NO_PROXY= no_proxy= "$PY" -m pip download --no-deps --no-cache-dir \
		--disable-pip-version-check --retries 0 --timeout 5 \
		--index-url "http://localhost:$HTTP/simple/" -d "$WS/dl2" wardpkg
	[ "$status" -ne 0 ]
	[ ! -s "$NET_STATE/http.log" ]
	grep -qxF "$(net_marker localhost)" "$E2E_CAP/stderr"
}

@test "network allowlist: git clone, pip, npm through the proxy (bwrap)" { check_clients bwrap; }
@test "network allowlist: git clone, pip, npm through the proxy (landlock)" { check_clients landlock; }

# --- around the knob -------------------------------------------------------

@test "network: every connection in the session log, the network object in --json" {
	local s
	s=$("$WARD" session new --cwd "$WS")
	run "$WARD" run --session "$s" --allow-domain localhost --json -- \
		curl --noproxy '' -sS -o /dev/null "http://localhost:$HTTP/ok.txt"
	[ "$status" = 0 ]
	[ "$(jq -r .network.mode <<<"$output")" = allowlist ]
	[ "$(jq -r '.network.connections[0].verdict' <<<"$output")" = allowed ]
	[ "$(jq -r '.network.connections[0].bytes_received' <<<"$output")" -gt 0 ]
	run "$WARD" run --session "$s" --allow-domain localhost -- \
		curl --noproxy '' -sS -o /dev/null "http://nope.example/"
	run "$WARD" session log --json "$s"
	[ "$(grep -c '"type":"network/connection"' <<<"$output")" = 2 ]
	grep -q '"verdict":"denied".*"host":"nope.example"\|"host":"nope.example".*"verdict":"denied"' <<<"$output"
	run "$WARD" session log "$s"
	[[ "$output" == *"network allowed localhost:$HTTP (http"* ]]
	[[ "$output" == *"network denied nope.example:80"* ]]
	"$WARD" session rm "$s"
}

@test "network: the session knob is folded like the mode" {
	local s
	s=$("$WARD" session new --cwd "$WS")
	run "$WARD" session network "$s"
	[ "$output" = off ]
	run "$WARD" session network "$s" on
	[ "$output" = on ]
	run "$WARD" run --session "$s" -- curl -sS -m 5 "http://127.0.0.1:$HTTP/ok.txt"
	[ "$output" = "ward ok" ]
	run "$WARD" session network "$s" off
	run "$WARD" run --session "$s" -- curl -sS -m 5 "http://127.0.0.1:$HTTP/ok.txt"
	[ "$status" -ne 0 ]
	run "$WARD" session log --json "$s"
	[ "$(grep -c '"type":"sandbox/network"' <<<"$output")" = 2 ]
	run "$WARD" session network "$s" allowlist
	[ "$status" = 2 ]
	"$WARD" session rm "$s"
}

@test "network: danger-full-access with network off is a usage error (2), on by default" {
	run "$WARD" run --mode danger-full-access --workspace "$WS" --network off -- true
	[ "$status" = 2 ]
	[[ "$output" == *"network off cannot be enforced under danger-full-access"* ]]
	run "$WARD" run --mode danger-full-access --workspace "$WS" -- curl -sS -m 5 "http://127.0.0.1:$HTTP/ok.txt"
	[ "$output" = "ward ok" ]
}

@test "network: ward confine refuses an allowlist it could not serve, and prints off and on" {
	local r
	for r in bwrap landlock; do
		run --separate-stderr "$WARD" confine --runner "$r" --workspace "$WS" \
			--allow-domain example.com -- true
		[ "$status" = 2 ]
		[ -z "$output" ]
		[[ "$stderr" == *"would have no proxy to reach"*"--network off or --network on"* ]]
		run --separate-stderr "$WARD" confine --json --runner "$r" --workspace "$WS" \
			--allow-domain example.com -- true
		[ "$status" = 2 ]
		[ "$(jq -r .error <<<"$output")" = WARD_FAILED ]
		# Off and on print an argv that runs.
		run --separate-stderr "$WARD" confine --runner "$r" --workspace "$WS" \
			--network off -- echo printed
		[ "$status" = 0 ]
		[[ "$output" != *"<"* ]]
		[ "$(eval "$output")" = printed ]
	done
}

@test "network: bad flags and keys name what is wrong" {
	run "$WARD" run --network maybe -- true
	[ "$status" = 2 ]
	[[ "$output" == *"'--network' needs off or on"* ]]
	run "$WARD" run --allow-domain '*' -- true
	[ "$status" = 2 ]
	[[ "$output" == *"--allow-domain"* ]]
	run "$WARD" run --network off --allow-domain a.example -- true
	[ "$status" = 2 ]
	[[ "$output" == *"contradict"* ]]
	mkdir -p "$WS/.ward"
	printf 'network: on\n' >"$WS/.ward/config.yml"
	run "$WARD" config check --workspace "$WS"
	[[ "$output" == *"network: ignored"* ]]
}

@test "network: the allowlist as nobody (bwrap), the socket directory is private" {
	as_nobody
	ward_run bwrap read-only --allow-domain localhost -- \
		curl --noproxy '' -sS -m 10 "http://localhost:$HTTP/ok.txt"
	[ "$status" = 0 ]
	[ "$output" = "ward ok" ]
	[ "$(stat -c %a /tmp/ward-net-65534)" = 700 ]
}

@test "network: escalation at the terminal adds a host for one call only" {
	command -v script >/dev/null || skip "script(1) is not installed"
	local cmd
	printf -v cmd '%q ' "$WARD" run --workspace "$WS" --escalate-network localhost \
		--justification "the local registry" -- curl --noproxy '' -sS -m 10 \
		"http://localhost:$HTTP/ok.txt"
	output=$( (sleep 1.5; printf 'y\n') | timeout 30 script -qec "$cmd" /dev/null | tr -d '\r')
	[[ "$output" == *"requested       network access to localhost"* ]]
	[[ "$output" == *"ward ok"* ]]
	output=$( (sleep 1.5; printf 'n\n') | timeout 30 script -qec "$cmd" /dev/null | tr -d '\r')
	[[ "$output" == *"the user rejected network access to localhost for this command"* ]]
	[[ "$output" != *"ward ok"* ]]
	# Nothing persisted: the next call is back to off.
	ward_run bwrap read-only -- curl --noproxy '' -sS -m 5 "http://localhost:$HTTP/ok.txt"
	[ "$status" -ne 0 ]
}

@test "network: off and the allowlist on the Landlock runner as nobody" {
	as_nobody
	ward_run landlock read-only -- "$PY" -c "$RAW" "$TCP" "$UDP"
	[ "$output" = "tcp=101 udp=101" ]
	[ -z "$(udp_log)" ]
	ward_run landlock-run read-only --allow-domain localhost -- \
		curl --noproxy '' -sS -m 10 "http://localhost:$HTTP/ok.txt"
	[ "$status" = 0 ]
	[ "$output" = "ward ok" ]
	ward_run landlock-run read-only --allow-domain localhost -- \
		curl -sS -m 5 "http://127.0.0.1:$TCP/"
	[ "$status" -ne 0 ]
	[ ! -s "$NET_STATE/tcp.log" ]
}

@test "network off: the host's abstract unix sockets are out of reach" {
	local name="ward-net-test-$$-$RANDOM"
	"$PY" -c 'import socket,sys,time
s=socket.socket(socket.AF_UNIX); s.bind("\0"+sys.argv[1]); s.listen(4)
s.settimeout(20)
try:
    c,_=s.accept(); open(sys.argv[2],"a").write("connected\n")
except OSError: pass' "$name" "$NET_STATE/tcp.log" 3>&- &
	E2E_PIDS+=($!)
	sleep 0.3
	local probe='import socket,sys
s=socket.socket(socket.AF_UNIX)
try:
    s.connect("\0"+sys.argv[1]); print("connected")
except OSError as e: print(e.errno)'
	ward_run bwrap read-only -- "$PY" -c "$probe" "$name"
	[ "$output" != connected ]
	ward_run landlock read-only -- "$PY" -c "$probe" "$name"
	[ "$output" != connected ]
	[ ! -s "$NET_STATE/tcp.log" ]
}

@test "network: ward mcp — one proxy, an allowlisted bash call, the marker in a denied one" {
	local init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bats","version":"0"}}}'
	local ok bad
	ok=$(jq -cn --arg c "curl --noproxy '' -sS -m 10 http://localhost:$HTTP/ok.txt" \
		'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":$c}}}')
	bad=$(jq -cn --arg c "curl -sS -m 10 -o /dev/null -x \$HTTPS_PROXY https://evil.example/" \
		'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":$c}}}')
	printf '%s\n' "$init" "$ok" "$bad" >"$E2E_CAP/in"
	XDG_STATE_HOME=$OUT_DIR/state timeout -k 5 60 "$WARD" mcp --workspace "$WS" \
		--allow-domain localhost <"$E2E_CAP/in" >"$E2E_CAP/out" 2>"$E2E_CAP/err"
	jq -c 'select(.id == 1) | .result.structuredContent.network' "$E2E_CAP/out"
	[ "$(jq -r 'select(.id == 1) | .result.content[0].text' "$E2E_CAP/out" | head -n 1)" = "ward ok" ]
	[ "$(jq -r 'select(.id == 1) | .result.structuredContent.network.connections[0].verdict' "$E2E_CAP/out")" = allowed ]
	jq -r 'select(.id == 2) | .result.content[0].text' "$E2E_CAP/out" |
		grep -qxF "$(net_marker evil.example)"
	[ "$(jq -r 'select(.id == 2) | .result.structuredContent.network.connections[0].verdict' "$E2E_CAP/out")" = denied ]
	# Without elicitation there is no approval service: no hint.
	[ -z "$(jq -r 'select(.id == 2) | .result.content[0].text' "$E2E_CAP/out" |
		grep network_permissions)" ]
}
