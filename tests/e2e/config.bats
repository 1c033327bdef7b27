#!/usr/bin/env bats
# shellcheck shell=bats
#
# ward.yml end to end: `ward config check` (text and --json, exit 0/1/2),
# the layers as `ward run`/`ward confine`/`ward fs` see them, --access and
# --config, a project file that tries to widen (ignored, with a warning),
# and access rules with runner_command (refused at confine).
#
# Every test gets its own XDG_CONFIG_HOME (the user file lives there), a
# workspace and an "outside" directory under /var/tmp (not /tmp: bwrap gives
# a confined command a private /tmp).

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
WARD=${WARD:-$BUILD/bin/ward}
PY=/usr/bin/python3

setup_file() {
	[ -x "$WARD" ] || return 0
	local probe
	probe=$("$WARD" probe --json 2>/dev/null) || true
	CFG_USABLE=$(printf '%s' "$probe" | "$PY" -c '
import json, sys
try:
    d = json.load(sys.stdin)
except ValueError:
    sys.exit(0)
print(" ".join(c["runner"] for c in d["chain"] if c["usable"]))')
	export CFG_USABLE
}

setup() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	WS=$(mktemp -d /var/tmp/ward-cfg-ws.XXXXXX)
	OUTSIDE=$(mktemp -d /var/tmp/ward-cfg-out.XXXXXX)
	XDG=$(mktemp -d /var/tmp/ward-cfg-xdg.XXXXXX)
	export XDG_CONFIG_HOME=$XDG
	USER_FILE=$XDG/ward/config.yml
	mkdir -p "$XDG/ward"
	unset TMPDIR
}

teardown() {
	rm -rf "${WS:-/nonexistent}" "${OUTSIDE:-/nonexistent}" \
		"${XDG:-/nonexistent}"
}

need_runner() {
	[[ " $CFG_USABLE " == *" $1 "* ]] ||
		skip "runner $1 is not usable here (see ward probe)"
}

# json_get JSON EXPR: print EXPR evaluated on the parsed JSON (as d).
json_get() {
	printf '%s' "$1" | "$PY" -c "import json,sys; d=json.load(sys.stdin); print($2)"
}

project_file() {
	mkdir -p "$WS/.ward"
	cat >"$WS/.ward/config.yml"
}

# --- ward config check -------------------------------------------------------

@test "config check without files: valid, built-in defaults" {
	run -0 --separate-stderr "$WARD" config check -w "$WS"
	[[ "${lines[0]}" == "configuration: valid" ]]
	[[ "$output" =~ mode\ +read-only\ +default ]]
	[[ "$output" =~ approval\ +ask\ +default ]]
	[[ "$output" =~ protect_git\ +true\ +default ]]
	[[ "$output" == *"$USER_FILE (not present)"* ]]
	[[ "$output" == *"$WS/.ward/config.yml (not present)"* ]]
}

@test "config check names the file and line each value came from" {
	cat >"$USER_FILE" <<-'EOF'
	# user defaults
	mode: workspace-write
	probe_timeout_ms: 900
	access:
	  - "-- ~/.ssh"
	EOF
	project_file <<-'EOF'
	mode: read-only
	access: |
	  r- docs
	EOF
	run -0 --separate-stderr "$WARD" config check -w "$WS"
	[[ "$output" =~ mode\ +read-only\ +project\ file\ $WS/.ward/config.yml:1 ]]
	[[ "$output" =~ probe_timeout_ms\ +900\ +user\ file\ $USER_FILE:3 ]]
	[[ "$output" =~ workspace\ +$WS\ +flag\ --workspace ]]
	[[ "$output" == *"-- $HOME/.ssh"*"user file $USER_FILE:5"* ]]
	[[ "$output" == *"r- $WS/docs"*"project file $WS/.ward/config.yml:3"* ]]
	# How each runner of the chain applies them.
	[[ "$output" == *"as the bwrap runner applies them:"* ]]
	[[ "$output" == *"as the landlock runner applies them:"* ]]
	[[ "$output" == *"warnings:"* ]]
}

@test "config check --json: settings with sources, rules, runners" {
	printf 'mode: workspace-write\n' >"$USER_FILE"
	run -0 --separate-stderr "$WARD" config check --json -w "$WS" \
		--mode read-only --access 'r- /etc'
	[ "$(json_get "$output" 'd["valid"]')" = True ]
	[ "$(json_get "$output" 'd["settings"]["mode"]["value"]')" = read-only ]
	[ "$(json_get "$output" 'd["settings"]["mode"]["source"]["layer"]')" = flag ]
	[ "$(json_get "$output" 'd["files"]["user"]["read"]')" = True ]
	[ "$(json_get "$output" 'd["files"]["project"]["read"]')" = False ]
	[ "$(json_get "$output" 'd["access"][0]["pattern"]')" = /etc ]
	[ "$(json_get "$output" 'd["access"][0]["source"]["layer"]')" = flag ]
	[ "$(json_get "$output" '",".join(r["runner"] for r in d["runners"])')" = bwrap,landlock ]
	[ "$(json_get "$output" 'len(d["presets"])')" = 3 ]
}

@test "config check: an invalid file exits 1 and lists every error" {
	cat >"$USER_FILE" <<-'EOF'
	mode: wide-open
	colour: blue
	probe_timeout_ms: "fast"
	EOF
	run -1 --separate-stderr "$WARD" config check -w "$WS"
	[[ "${lines[0]}" == "configuration: INVALID" ]]
	[[ "$output" == *"$USER_FILE:1: mode: invalid mode \"wide-open\""* ]]
	[[ "$output" == *"$USER_FILE:2: colour: unknown key"* ]]
	[[ "$output" == *"$USER_FILE:3: probe_timeout_ms: expected an integer"* ]]
	run -1 --separate-stderr "$WARD" config check -w "$WS" --json
	[ "$(json_get "$output" 'd["valid"]')" = False ]
	[ "$(json_get "$output" 'len(d["errors"])')" = 3 ]
}

@test "config check: an alias bomb is refused at once" {
	cat >"$USER_FILE" <<-'EOF'
	a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
	b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
	c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
	access: *c
	EOF
	run -1 --separate-stderr timeout 10 "$WARD" config check -w "$WS"
	[[ "$output" == *"$USER_FILE:2: YAML aliases (*a) are not allowed"* ]]
}

@test "config check: bad command lines exit 2" {
	run -2 --separate-stderr "$WARD" config
	run -2 --separate-stderr "$WARD" config frob
	[[ "$stderr" == *"'frob'"* ]]
	run -2 --separate-stderr "$WARD" config check extra
	[[ "$stderr" == *"'extra'"* ]]
	run -2 --separate-stderr "$WARD" config check --access ''
	run -2 --separate-stderr "$WARD" config check -w "$WS/missing"
	run -2 --separate-stderr "$WARD" config check --bogus
	run -0 "$WARD" config check --help
	[[ "$output" == "Usage: ward config check"* ]]
	run -0 "$WARD" help config
}

# --- a project file may only narrow ---------------------------------------

@test "a project file asking for rw / is ignored with a warning, naming where to put it" {
	project_file <<-'EOF'
	access:
	  - r- docs
	  - rw /
	EOF
	mkdir -p "$WS/docs"
	run -0 --separate-stderr "$WARD" config check -w "$WS"
	[[ "$output" == *"$WS/.ward/config.yml:3: access: ignored: entry \"rw /\": a project file may only narrow"* ]]
	[[ "$output" == *"user file ($USER_FILE)"* ]]
	# The narrowing entry still applies; the rw entry does not.
	[[ "$output" == *"r- $WS/docs"* ]]
	[[ "$output" != *"rw /  "* ]]
	# ward run runs (no lockout), saying once what it ignored.
	run -0 --separate-stderr "$WARD" run -w "$WS" -- true
	[ "$(grep -c 'ignored: entry "rw /"' <<<"$stderr")" -eq 1 ]
	run -1 --separate-stderr "$WARD" run -w "$WS" --mode workspace-write \
		-- touch /etc/ward-project-rw-test
	[ ! -e /etc/ward-project-rw-test ]
	run -0 --separate-stderr "$WARD" confine -w "$WS" -- true
	run -0 --separate-stderr "$WARD" fs ls -w "$WS"
}

@test "a project file cannot widen the mode or set runner keys: ignored, never a lockout" {
	printf 'mode: read-only\n' >"$USER_FILE"
	project_file <<-'EOF'
	mode: workspace-write
	runner_command: /bin/sh
	approval: never
	protect_git: false
	EOF
	run -0 --separate-stderr "$WARD" config check -w "$WS"
	[[ "$output" == *"config.yml:1: mode: ignored"*"workspace-write is wider than read-only"*"pass --mode workspace-write"* ]]
	[[ "$output" == *"config.yml:2: runner_command: ignored"* ]]
	[[ "$output" == *"config.yml:3: approval: ignored"* ]]
	[[ "$output" == *"config.yml:4: protect_git: ignored"* ]]
	# Commands run, under the user's read-only (a denial, not a refusal).
	run -1 --separate-stderr "$WARD" run -w "$WS" -- touch "$WS/x"
	[[ "$stderr" == *"[sandbox: file access denied under read-only mode]"* ]]
	[ "$(grep -c 'config.yml:1: mode: ignored' <<<"$stderr")" -eq 1 ]
	[ ! -e "$WS/x" ]
	# The fix the warning suggests works.
	run -0 --separate-stderr "$WARD" run -w "$WS" --mode workspace-write \
		-- touch "$WS/x"
	[ -e "$WS/x" ]
	run -0 --separate-stderr "$WARD" confine --json -w "$WS" -- true
	[ "$(json_get "$output" 'd["mode"]')" = read-only ]
}

@test "\$HOME and \${HOME} in a rule are expanded; an unset variable is an error naming the line" {
	export HOME=$OUTSIDE/home
	mkdir -p "$HOME"
	cat >"$USER_FILE" <<-'EOF'
	access:
	  - "-- $HOME/.ward-test-ssh"
	  - "-- ${HOME}/.ward-test-aws"
	  - "r- /srv/$$literal"
	EOF
	run -0 --separate-stderr "$WARD" config check -w "$WS"
	[[ "$output" == *"-- $HOME/.ward-test-ssh  "* ]]
	[[ "$output" == *"-- $HOME/.ward-test-aws  "* ]]
	[[ "$output" == *"r- /srv/\$literal  "* ]]
	# It protects the real path (not a directory named "$HOME" in the
	# workspace): the fence refuses to read it.
	mkdir -p "$HOME/.ward-test-ssh" && echo k >"$HOME/.ward-test-ssh/id"
	run -3 --separate-stderr "$WARD" fs read -w "$WS" "$HOME/.ward-test-ssh/id"
	printf 'access:\n  - "-- $WARD_SURELY_UNSET/x"\n' >"$USER_FILE"
	run -1 --separate-stderr "$WARD" config check -w "$WS"
	[[ "$output" == *"$USER_FILE:2: access: "*"\$WARD_SURELY_UNSET: WARD_SURELY_UNSET is not set"* ]]
	run -125 --separate-stderr "$WARD" run -w "$WS" -- true
	printf 'access:\n  - "-- /a/$/b"\n' >"$USER_FILE"
	run -1 --separate-stderr "$WARD" config check -w "$WS"
	[[ "$output" == *'write "$$" for a literal'* ]]
}

@test "a project file narrows: its mode wins over a wider user mode" {
	printf 'mode: workspace-write\n' >"$USER_FILE"
	printf 'mode: read-only\n' | project_file
	run -0 --separate-stderr "$WARD" confine --json -w "$WS" -- true
	[ "$(json_get "$output" 'd["mode"]')" = read-only ]
	# Without a project file the user's default applies; a flag wins.
	rm -r "$WS/.ward"
	run -0 --separate-stderr "$WARD" confine --json -w "$WS" -- true
	[ "$(json_get "$output" 'd["mode"]')" = workspace-write ]
	run -0 --separate-stderr "$WARD" confine --json -w "$WS" \
		--mode read-only -- true
	[ "$(json_get "$output" 'd["mode"]')" = read-only ]
}

@test "--config FILE is read after the project file" {
	printf 'mode: read-only\n' | project_file
	printf 'mode: workspace-write\n' >"$OUTSIDE/ci.yml"
	run -0 --separate-stderr "$WARD" confine --json -w "$WS" \
		--config "$OUTSIDE/ci.yml" -- true
	[ "$(json_get "$output" 'd["mode"]')" = workspace-write ]
	run -125 --separate-stderr "$WARD" confine -w "$WS" \
		--config "$OUTSIDE/missing.yml" -- true
	[[ "$stderr" == *"$OUTSIDE/missing.yml: cannot read"* ]]
}

# --- --access and rules ----------------------------------------------------------

@test "--access '-- PATH' denies reading under bwrap" {
	need_runner bwrap
	echo secret >"$OUTSIDE/key.pem"
	run -0 --separate-stderr "$WARD" run -r bwrap -w "$WS" \
		-- cat "$OUTSIDE/key.pem"
	[ "$output" = secret ]
	run --separate-stderr "$WARD" run -r bwrap -w "$WS" \
		--access "-- $OUTSIDE/key.pem" -- cat "$OUTSIDE/key.pem"
	printf '# status %s\n# stdout %s\n# stderr %s\n' "$status" "$output" "$stderr"
	[ "$status" -ne 0 ]
	[[ "$output" != *secret* ]]
}

@test "access rules from the user file reach ward run" {
	need_runner bwrap
	mkdir "$OUTSIDE/hidden"
	echo secret >"$OUTSIDE/hidden/f"
	printf 'access:\n  - "-- %s/hidden"\n' "$OUTSIDE" >"$USER_FILE"
	run --separate-stderr "$WARD" run -r bwrap -w "$WS" \
		-- cat "$OUTSIDE/hidden/f"
	[ "$status" -ne 0 ]
	[[ "$output" != *secret* ]]
}

@test "--access reaches the fs fence" {
	echo secret >"$WS/id_rsa"
	run -3 --separate-stderr "$WARD" fs read -w "$WS" --access '-- id_rsa' \
		id_rsa
	[[ "$stderr" == *"[sandbox: file access denied under read-only mode]"* ]]
	run -0 --separate-stderr "$WARD" fs read -w "$WS" id_rsa
	[ "$output" = secret ]
}

@test "a bad --access entry is a usage error naming it" {
	run -2 --separate-stderr "$WARD" run -w "$WS" --access 'xx /a' -- true
	[[ "$stderr" == *"--access: entry \"xx /a\": unknown prefix"* ]]
	run -2 --separate-stderr "$WARD" confine -w "$WS" --access '' -- true
}

@test "access rules with runner_command: refused at confine" {
	printf 'runner_command: /usr/bin/bwrap\naccess: ["-- /srv"]\n' \
		>"$USER_FILE"
	run -125 --separate-stderr "$WARD" confine -w "$WS" -- true
	[[ "$stderr" == *"cannot be used with runner_command"* ]]
	[[ "$stderr" == *"$USER_FILE:2"* ]]
	run -1 --separate-stderr "$WARD" config check -w "$WS"
	[[ "$output" == *"cannot be used with runner_command"* ]]
	# Without rules the runner command is used.
	printf 'runner_command: /usr/bin/bwrap\n' >"$USER_FILE"
	run -0 --separate-stderr "$WARD" confine --json -w "$WS" -- true
	[ "$(json_get "$output" 'd["runner"]')" = custom ]
}

@test "run and confine --help document --access and --config" {
	for cmd in run confine; do
		run -0 "$WARD" "$cmd" --help
		[[ "$output" == *"--access RULE"* ]]
		[[ "$output" == *"--config FILE"* ]]
	done
}

# --- files that once crashed ward (exit 139) ---------------------------------

@test "more than 100 errors, then a list item that is not a string: errors, no crash" {
	{
		for i in $(seq 0 99); do echo "unknown$i: 1"; done
		printf 'access:\n  - {}\n'
	} >"$BATS_TEST_TMPDIR/many.yml"
	run -1 --separate-stderr "$WARD" config check -w "$WS" \
		--config "$BATS_TEST_TMPDIR/many.yml"
	[[ "$output" == *"unknown0: unknown key"* ]]
	# As the project file, ward run refuses it without crashing.
	{
		for i in $(seq 0 99); do echo "unknown$i: 1"; done
		printf 'access:\n  - {}\n'
	} | project_file
	run --separate-stderr "$WARD" run -w "$WS" -- true
	[ "$status" -ne 139 ] && [ "$status" -ne 0 ]
	[[ "$stderr" == *"$WS/.ward/config.yml:1: unknown0: unknown key"* ]]
}

@test "six bytes that crashed libfyaml 0.7.12: ward refuses the file, never crashes" {
	printf '? ?:\t?' | project_file
	run --separate-stderr "$WARD" run -w "$WS" -- true
	echo "# status $status: $stderr"
	[ "$status" -eq 125 ]
	[[ "$stderr" == *"$WS/.ward/config.yml"* ]]
	printf '? ?:\t?' >"$BATS_TEST_TMPDIR/bad.yml"
	run -1 --separate-stderr "$WARD" config check -w "$OUTSIDE" \
		--config "$BATS_TEST_TMPDIR/bad.yml"
	[[ "$output" == *"$BATS_TEST_TMPDIR/bad.yml"* ]]
	# The user file too.
	printf '? ?:\t?' >"$USER_FILE"
	run --separate-stderr "$WARD" run -w "$OUTSIDE" -- true
	[ "$status" -eq 125 ]
	[[ "$stderr" == *"$USER_FILE"* ]]
}

@test "a NUL byte in any configuration file is an error naming the file, line and offset" {
	# Everything after the NUL used to be dropped without a word: the
	# `--` rule below vanished and the secret was readable.
	echo secret >"$OUTSIDE/secret"
	nul_file() {
		printf 'mode: read-only\n\0\naccess:\n  - "-- %s"\n' \
			"$OUTSIDE/secret" >"$1"
	}
	nul_file "$BATS_TEST_TMPDIR/nul.yml"
	run -1 --separate-stderr "$WARD" config check -w "$WS" \
		--config "$BATS_TEST_TMPDIR/nul.yml"
	[[ "$output" == *"configuration: INVALID"* ]]
	[[ "$output" == *"$BATS_TEST_TMPDIR/nul.yml:2: a NUL byte at offset 16"* ]]
	run --separate-stderr "$WARD" run -w "$WS" \
		--config "$BATS_TEST_TMPDIR/nul.yml" -- cat "$OUTSIDE/secret"
	[ "$status" -eq 125 ]
	[[ "$output" != *secret* ]]
	[[ "$stderr" == *"nul.yml:2: a NUL byte at offset 16"* ]]
	# The project file and the user file alike.
	mkdir -p "$WS/.ward"
	nul_file "$WS/.ward/config.yml"
	run -1 --separate-stderr "$WARD" config check -w "$WS"
	[[ "$output" == *"$WS/.ward/config.yml:2: a NUL byte at offset 16"* ]]
	rm "$WS/.ward/config.yml"
	nul_file "$USER_FILE"
	run --separate-stderr "$WARD" run -w "$WS" -- cat "$OUTSIDE/secret"
	[ "$status" -eq 125 ]
	[[ "$stderr" == *"$USER_FILE:2: a NUL byte at offset 16"* ]]
}
