#!/usr/bin/env bats
# shellcheck shell=bats
#
# Red team, grants: an approval grants one object for one call's lifetime.
# Through ward run / ward fs and the terminal prompt (answered in a real
# pseudo-terminal by tests/e2e/approve_tty.py), on both runners, as root
# and as the unprivileged user nobody:
#
#   relay       call 1 (confined) writes a Makefile whose target starts a
#               relay — a background loop, a setsid'd one, a double fork
#               and a nohup'd daemon — running whatever .relay says; call 2
#               runs `make test`, approved once under danger-full-access;
#               call 3 (confined again) writes .relay. Nothing of call 2
#               may still run: no file appears outside.
#   swap        a process swaps a symlink to a file outside over notes.txt
#               while hundreds of `ward fs write notes.txt` are approved —
#               each only when the prompt shows notes.txt itself — under
#               danger-full-access: nothing is ever written outside.
#   prompt      a 120 KB justification is cut (and says how much), a
#               typed \x0a is not an escaped newline, and the command is
#               the last thing before the question.
#   proc        ward fs read of /proc/self/environ (the secrets ward
#               strips from commands), cmdline, maps, fdinfo — by every
#               name — is denied.
#   env         the secret values issue 16 found passing through under
#               innocent names reach no command; ward config check says
#               why each is dropped, never the value.
#
# The MCP side of the same attacks is tests/e2e/mcp_grants.bats.

bats_require_minimum_version 1.5.0

load helpers

APPROVE=$E2E_ROOT/tests/e2e/approve_tty.py

require_runner() {
	require_runner_usable "$1"
}

setup() {
	e2e_setup
	RT_HOME=$(mktemp -d /var/tmp/ward-grants-home.XXXXXX)
	export HOME=$RT_HOME
	unset XDG_CONFIG_HOME XDG_STATE_HOME
	chmod 0755 "$RT_HOME"
}

teardown() {
	# A relay that outlived its call (a failed test) must not outlive
	# the test: every process that works in this workspace or names it.
	local p
	for p in /proc/[0-9]*; do
		{
			[ "$(readlink "$p/cwd")" = "$WS" ] ||
				tr '\0' ' ' <"$p/cmdline" | grep -qF "$WS"
		} 2>/dev/null && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	e2e_teardown
	rm -rf "$RT_HOME"
}

# approve ARG...: run the approval helper as the test's user.
approve() {
	timeout -k 5 600 "$PY" "$APPROVE" "$@"
}

# --- relay --------------------------------------------------------------------

# The Makefile of call 1: `make test` starts the relay in four shapes.
# Each runs `sh .relay SHAPE` every 0.1 s for at most 20 s, after saying it
# is alive (alive.SHAPE).
write_makefile() {
	local s loop
	printf 'test:\n'
	for s in bg setsid fork nohup; do
		loop="sh -c 'touch alive.$s; for i in \$\$(seq 200); do [ -f .relay ] && sh .relay $s; sleep 0.1; done'"
		case $s in
		bg) printf '\t@(%s) &\n' "$loop" ;;
		setsid) printf '\t@setsid -f %s\n' "$loop" ;;
		fork) printf '\t@(%s &)\n' "$loop" ;;
		nohup) printf '\t@nohup %s >/dev/null 2>&1 &\n' "$loop" ;;
		esac
	done
	printf '\t@echo tested\n'
}

relay_case() {
	local v=$1 who=$2 left
	local -a flags
	become "$who" "$OUT_DIR"
	require_runner "$v"
	read -r -a flags <<<"$(runner_flags "$v")"
	# Call 1, confined: the trap.
	ward_run "$v" workspace-write sh -c \
		"echo $(write_makefile | base64 -w0) | base64 -d > '$WS/Makefile'"
	[ "$status" -eq 0 ] || fail "call 1 failed"
	# Call 2: approved once, at the terminal, under danger-full-access.
	# It returns once every relay is alive (a bounded wait).
	run approve --transcript "$BATS_TEST_TMPDIR/prompt" -- \
		"${E2E_AS[@]}" env HOME="$HOME" "$WARD" run -w "$WS" \
		--mode workspace-write "${flags[@]}" \
		--escalate danger-full-access --justification "run the tests" \
		-- sh -c 'cd "$0" && make -s test && for i in $(seq 100); do
			[ "$(ls alive.* 2>/dev/null | wc -l)" -ge 4 ] && break
			sleep 0.1; done; ls alive.*' "$WS"
	printf '# %s\n' "$output"
	[[ "$output" == *"exit 0, allowed"* ]] || fail "call 2 was not run"
	for s in bg setsid fork nohup; do
		[ -e "$WS/alive.$s" ] || fail "the $s relay never ran: the test proves nothing"
	done
	# Call 3, confined again: what the relay would run.
	ward_run "$v" workspace-write sh -c \
		"printf 'id -u > $OUT_DIR/RELAY_RAN.\$1\n' > '$WS/.relay'"
	[ "$status" -eq 0 ] || fail "call 3 failed"
	sleep 2 # ten relay ticks: a survivor would have run .relay
	left=$(cd "$OUT_DIR" && ls RELAY_RAN.* 2>/dev/null | tr '\n' ' ')
	[ -z "$left" ] || fail "the approved call left a relay running: $left"
	grep -q "every process it starts ends with it" "$BATS_TEST_TMPDIR/prompt" ||
		fail "the prompt does not say what the grant covers"
}

@test "relay: an approved danger-full-access call ends with its processes (bwrap, root)" { relay_case bwrap root; }
@test "relay: an approved danger-full-access call ends with its processes (bwrap, nobody)" { relay_case bwrap nobody; }
@test "relay: an approved danger-full-access call ends with its processes (landlock, root)" { relay_case landlock root; }
@test "relay: an approved danger-full-access call ends with its processes (landlock, nobody)" { relay_case landlock nobody; }

# --- swap ---------------------------------------------------------------------

# A process that swaps notes.txt with a symlink to $OUT_DIR/victim, as
# fast as it can, each state as long as the other (one atomic
# renameat2(RENAME_EXCHANGE) a swap), until $WS/stop exists (or 300 s).
start_swapper() {
	"${E2E_AS[@]}" "$PY" -c '
import ctypes, os, sys, time
ws, victim = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
notes, alt = (ws + "/notes.txt").encode(), (ws + "/.swap").encode()
os.symlink(victim, alt)
end, n = time.monotonic() + 300, 0
while not os.path.exists(ws + "/stop") and time.monotonic() < end:
    for _ in range(1000):
        if libc.renameat2(AT_FDCWD, notes, AT_FDCWD, alt, RENAME_EXCHANGE):
            raise SystemExit(os.strerror(ctypes.get_errno()))
    n += 1000
    # A write replaces the entry it found (a link too): bring it back.
    if not os.path.islink(alt) and not os.path.islink(notes):
        os.unlink(alt)
        os.symlink(victim, alt)
print(n, file=open(ws + "/swaps", "w"))
' "$WS" "$OUT_DIR/victim" &
	SWAPPER=$!
	E2E_PIDS+=("$SWAPPER")
}

swap_case() {
	local who=$1 tries=300 met
	become "$who" "$OUT_DIR"
	printf 'real\n' >"$WS/notes.txt"
	[ "$who" = nobody ] && chown 65534:65534 "$WS/notes.txt"
	start_swapper
	run approve --repeat "$tries" --allow-if "(-> $WS/notes.txt)" \
		--transcript "$BATS_TEST_TMPDIR/transcript" -- \
		"${E2E_AS[@]}" env HOME="$HOME" "$WARD" fs write -w "$WS" \
		--mode read-only --escalate danger-full-access \
		--justification "update the notes" --text "approved" notes.txt
	touch "$WS/stop"
	wait "$SWAPPER" || true
	printf '# %s; %s; %s swaps\n' "${lines[-2]}" "${lines[-1]}" "$(cat "$WS/swaps")"
	[[ "${lines[-1]}" == "asked $tries "* ]] || fail "not every write was asked: $output"
	[[ "${lines[-1]}" != *" allowed 0 "* ]] || fail "no write was allowed: the test proves nothing"
	[ ! -e "$OUT_DIR/victim" ] ||
		fail "an approved write landed outside: $(cat "$OUT_DIR/victim")"
	# The race was met: some approved writes found the link in place,
	# and were refused rather than followed.
	met=$(grep -c "as the approval showed: nothing was done" \
		"$BATS_TEST_TMPDIR/transcript" || true)
	printf '# %s approved writes met the link and were refused\n' "$met"
	[ "$met" -gt 0 ] || fail "no write met the swapped link: the test proves nothing"
}

@test "swap: a symlink swapped over an approved ward fs write never redirects it (root)" { swap_case root; }
@test "swap: a symlink swapped over an approved ward fs write never redirects it (nobody)" { swap_case nobody; }

# --- prompt -------------------------------------------------------------------

prompt_case() {
	local who=$1 just big
	become "$who" "$OUT_DIR"
	# One argument holds at most 128 KiB (MAX_ARG_STRLEN): ward mcp gets
	# the 420 KB one (tests/mcp/grants.test.mjs).
	big=$(head -c 120000 /dev/zero | tr '\0' j)
	just="typed \\x0a here $big"
	run approve --transcript "$BATS_TEST_TMPDIR/prompt" -- \
		"${E2E_AS[@]}" env HOME="$HOME" "$WARD" run -w "$WS" \
		--escalate danger-full-access --justification "$just" -- true
	local text
	text=$(cat "$BATS_TEST_TMPDIR/prompt")
	printf '# %s\n' "${text:0:300}"
	[ "${#text}" -lt 4000 ] || fail "the prompt is ${#text} bytes long"
	[[ "$text" == *"more bytes not shown]"* ]] || fail "the cut is not said"
	[[ "$text" == *'typed \\x0a here'* ]] || fail "a typed backslash is not escaped"
	# The command, then the question: nothing in between.
	[[ "$text" == *"command         true"$'\n'"Allow this command to run once under danger-full-access? [y/N] "* ]] ||
		fail "the command is not right before the question"
}

@test "prompt: a 120 KB justification is cut, a typed \\x0a escaped, the command last (root)" { prompt_case root; }
@test "prompt: a 120 KB justification is cut, a typed \\x0a escaped, the command last (nobody)" { prompt_case nobody; }

# --- /proc --------------------------------------------------------------------

proc_case() {
	local who=$1 p
	become "$who" "$OUT_DIR"
	ln -s /proc/self/environ "$WS/env"
	chown -h "$(stat -c %u "$WS")" "$WS/env"
	for p in /proc/self/environ /proc/self/cmdline /proc/self/maps \
		/proc/self/fdinfo/0 /proc/thread-self/environ env; do
		run "${E2E_AS[@]}" env HOME="$HOME" WARD_GRANTS_SECRET=s3cr3t \
			"$WARD" fs read -w "$WS" --bytes "$p"
		[ "$status" -eq 3 ] || fail "$p: status $status: ${output:0:200}"
		[[ "$output" != *s3cr3t* ]] || fail "$p: the harness's environment was read"
		[[ "$output" == *"names the harness"* ]] || fail "$p: ${output:0:300}"
	done
	run "${E2E_AS[@]}" env HOME="$HOME" "$WARD" fs ls -w "$WS" /proc/self
	[ "$status" -eq 3 ] || fail "/proc/self was listed"
	run -0 "${E2E_AS[@]}" env HOME="$HOME" "$WARD" fs read -w "$WS" /proc/meminfo
}

@test "proc: ward fs reads nothing of the harness's /proc (root)" { proc_case root; }
@test "proc: ward fs reads nothing of the harness's /proc (nobody)" { proc_case nobody; }

# --- env ----------------------------------------------------------------------

# The values issue 16 found passing through, each under an innocent name
# or one the old patterns missed.
SECRETS=(
	"DATABASE_URL=postgres://u:PASSWORD@db.example/app"
	"REDIS_URL=redis://:hunter2xyz@cache:6379/0"
	"SENTRY_DSN=https://abc123@o1.ingest.sentry.io/1"
	"SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T0/B0/xyzzyplugh"
	"NPM_CONFIG__AUTH=dXNlcjpwYXNzd29yZA=="
	"DOCKER_AUTH_CONFIG={\"auths\":{}}"
	"CI_JOB_JWT=eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJqb2IxMjMifQ.c2lnbmF0dXJl"
	"GPG_PASSPHRASE=correcthorsebattery"
	"SESSION_COOKIE=sid=abcdef0123"
	"PRIVATE_KEY_PEM=-----BEGIN PRIVATE KEY-----MIIEvQIBADAN"
	"SERVICE_CREDS=user:pass"
	"BASIC_AUTH=user:pass"
	"HELPER=ghp_0123456789abcdefghijklmnopqrstuvwxyz"
	"NOTES=call me: xoxb-1234567890-abcdefghijklm"
	"CLOUD=AKIAIOSFODNN7EXAMPLE"
	"TOOLING=sk-proj-abcdefghijklmnopqrstuvwx"
	"GL=glpat-abcdefghij0123456789"
	"G=AIzaSyA-abcdefghijklmnopqrstuvwxyz01234"
	"N=npm_abcdefghijklmnopqrstuvwxyz0123456789"
	"BEARER=Authorization: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTYifQ.sig"
)

env_case() {
	local v=$1 who=$2 kv
	become "$who" "$OUT_DIR"
	require_runner "$v"
	local -a envs=(HOME="$HOME" PATH="$PATH" PLAIN=kept
		SSH_AUTH_SOCK=/tmp/agent.sock GIT_AUTHOR_NAME=me LANG=sk_SK.UTF-8)
	envs+=("${SECRETS[@]}")
	E2E_WRAP=(env -i "${envs[@]}")
	ward_run "$v" workspace-write env
	[ "$status" -eq 0 ] || fail "env did not run"
	for kv in "${SECRETS[@]}"; do
		[[ "$output" != *"${kv#*=}"* ]] || fail "${kv%%=*} reached the command"
	done
	for kv in PLAIN=kept SSH_AUTH_SOCK=/tmp/agent.sock GIT_AUTHOR_NAME=me \
		LANG=sk_SK.UTF-8; do
		grep -qx "$kv" <<<"$output" || fail "$kv did not reach the command"
	done
	# --env-keep still wins, over a value too.
	ward_run "$v" workspace-write --env-keep DATABASE_URL sh -c 'echo "$DATABASE_URL"'
	[ "$output" = "postgres://u:PASSWORD@db.example/app" ] || fail "--env-keep lost"
	# ward config check says why, never the value.
	run -0 "${E2E_AS[@]}" "${E2E_WRAP[@]}" "$WARD" config check -w "$WS"
	for kv in "${SECRETS[@]}"; do
		[[ "$output" == *"    ${kv%%=*}: "* ]] || fail "${kv%%=*} is not listed as dropped"
		[[ "$output" != *"${kv#*=}"* ]] || fail "config check shows ${kv%%=*}'s value"
	done
	[[ "$output" == *"DATABASE_URL: value looks like a URL with a password"* ]]
	[[ "$output" == *"GPG_PASSPHRASE: name matches *PASSPHRASE*"* ]]
}

@test "env: credentials by value and the wider names reach no command (bwrap, root)" { env_case bwrap root; }
@test "env: credentials by value and the wider names reach no command (bwrap, nobody)" { env_case bwrap nobody; }
@test "env: credentials by value and the wider names reach no command (landlock, root)" { env_case landlock root; }
@test "env: credentials by value and the wider names reach no command (landlock, nobody)" { env_case landlock nobody; }
