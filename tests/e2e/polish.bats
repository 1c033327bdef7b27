#!/usr/bin/env bats
# shellcheck shell=bats
#
# The command line as people use it daily (issue 12, item 13):
#   - --quiet: the warnings before a call said once per change, remembered
#     in ward's state directory (a protected path), per workspace;
#   - the bash and zsh completion generated from the option tables;
#   - --json failures: one shape, every code documented in man/ward.1;
#   - the man pages, --help texts and option tables agree.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}
WARD=$BUILD/bin/ward
LAUNCHER=$BUILD/bin/landlock-run
PY=/usr/bin/python3

setup() {
	[ -x "$WARD" ] || skip "$WARD is not built (run make)"
	WS=$(mktemp -d /var/tmp/ward-polish-ws.XXXXXX)
	WS2=$(mktemp -d /var/tmp/ward-polish-ws2.XXXXXX)
	# A state directory of the test's own: the memo, sessions and the
	# probe cache start empty and never touch the caller's.
	STATE=$(mktemp -d /var/tmp/ward-polish-state.XXXXXX)
	export XDG_STATE_HOME=$STATE
	unset TMPDIR
	# A glob rule Landlock applies only to what exists at confine time:
	# ward warns about it before every landlock run.
	printf 'access:\n  - "-- secret*"\n' >"$WS/ward.yml"
	cp "$WS/ward.yml" "$WS2/ward.yml"
}

teardown() {
	rm -rf "${WS:-}" "${WS2:-}" "${STATE:-}"
}

# The number of "ward: warning:" lines in $stderr.
warnings() {
	grep -c '^ward: warning: ' <<<"$stderr" || true
}

landlock_run() { # landlock_run WS ARG... (a run with the warning)
	local ws=$1
	shift
	run --separate-stderr "$WARD" run -w "$ws" --config "$ws/ward.yml" \
		--runner landlock "$@" -- true
}

require_landlock() {
	"$LAUNCHER" --probe >/dev/null 2>&1 ||
		skip "Landlock cannot confine on this machine"
}

# --- --quiet ------------------------------------------------------------------

@test "--quiet: the warnings are said once, then again only after a change" {
	require_landlock
	landlock_run "$WS" --quiet
	[ "$status" -eq 0 ]
	[ "$(warnings)" -eq 1 ]
	[[ "$stderr" == *'"-- secret*"'* ]]
	landlock_run "$WS" --quiet
	[ "$status" -eq 0 ]
	[ "$(warnings)" -eq 0 ]
	landlock_run "$WS" -q
	[ "$(warnings)" -eq 0 ]

	# A change of the configuration: said again (all of them), once.
	printf 'access:\n  - "-- secret*"\n  - "-- token*"\n' >"$WS/ward.yml"
	landlock_run "$WS" --quiet
	[ "$(warnings)" -eq 2 ]
	landlock_run "$WS" --quiet
	[ "$(warnings)" -eq 0 ]
	# Back to the first configuration: a change too.
	printf 'access:\n  - "-- secret*"\n' >"$WS/ward.yml"
	landlock_run "$WS" --quiet
	[ "$(warnings)" -eq 1 ]

	# Per workspace: another one has not been told.
	landlock_run "$WS2" --quiet
	[ "$(warnings)" -eq 1 ]
}

@test "--quiet: without it the warnings are said every time, and remembered" {
	require_landlock
	landlock_run "$WS"
	[ "$(warnings)" -eq 1 ]
	landlock_run "$WS"
	[ "$(warnings)" -eq 1 ]
	# What a run without --quiet said counts as said.
	landlock_run "$WS" --quiet
	[ "$(warnings)" -eq 0 ]
	# ward config check always lists them.
	run -0 "$WARD" config check -w "$WS" --config "$WS/ward.yml"
	[[ "$output" == *'"-- secret*"'* ]]
}

@test "--quiet: a project value that would widen is said once per change, not before every command" {
	local w
	mkdir -p "$WS2/.ward"
	printf 'mode: workspace-write\n' >"$WS2/.ward/config.yml"
	w="ward run: warning: $WS2/.ward/config.yml:1: mode: ignored: "
	# Said, and the command runs under the narrower mode (the ceiling).
	run -1 --separate-stderr "$WARD" run -w "$WS2" --quiet -- touch "$WS2/f"
	[ "$(grep -c -F -- "$w" <<<"$stderr")" -eq 1 ]
	[ ! -e "$WS2/f" ]
	# Then not again with --quiet, for run, confine and fs alike.
	run -0 --separate-stderr "$WARD" run -w "$WS2" --quiet -- true
	[[ "$stderr" != *"mode: ignored"* ]]
	run -0 --separate-stderr "$WARD" confine -w "$WS2" -q -- true
	[[ "$stderr" != *"mode: ignored"* ]]
	run -0 --separate-stderr "$WARD" fs read -w "$WS2" -q "$WS2/.ward/config.yml"
	[[ "$stderr" != *"mode: ignored"* ]]
	# Without --quiet: every time.
	run -0 --separate-stderr "$WARD" run -w "$WS2" -- true
	[ "$(grep -c -F -- "$w" <<<"$stderr")" -eq 1 ]
	# A change of the project file: said again, once.
	printf '# widened\nmode: danger-full-access\n' >"$WS2/.ward/config.yml"
	run -0 --separate-stderr "$WARD" run -w "$WS2" --quiet -- true
	[[ "$stderr" == *"config.yml:2: mode: ignored"* ]]
	run -0 --separate-stderr "$WARD" run -w "$WS2" --quiet -- true
	[[ "$stderr" != *"mode: ignored"* ]]
	# ward config check always lists it.
	run -0 "$WARD" config check -w "$WS2"
	[[ "$output" == *"mode: ignored"* ]]
}

@test "--quiet: ward confine says the warnings like ward run, --json keeps them all" {
	require_landlock
	run --separate-stderr "$WARD" confine -w "$WS" --config "$WS/ward.yml" \
		--runner landlock --quiet -- true
	[ "$status" -eq 0 ]
	[ "$(warnings)" -eq 1 ]
	[[ "$output" == *landlock-run* ]]
	# ward run plans the same call: already said.
	landlock_run "$WS" --quiet
	[ "$(warnings)" -eq 0 ]
	run --separate-stderr "$WARD" confine -w "$WS" --config "$WS/ward.yml" \
		--runner landlock --quiet --json -- true
	[ "$status" -eq 0 ]
	[ "$(warnings)" -eq 0 ]
	[ "$(printf '%s' "$output" | "$PY" -c '
import json, sys; print(len(json.load(sys.stdin)["warnings"]))')" -eq 1 ]
}

@test "--quiet: a memo ward does not own, or that others may write, is ignored" {
	require_landlock
	landlock_run "$WS" --quiet
	[ "$(warnings)" -eq 1 ]
	local memo=$STATE/ward/warnings-shown
	[ -f "$memo" ]
	[ "$(stat -c %a "$memo")" = 600 ]
	# Writable by others: not trusted, so the warning is said again
	# (nothing is hidden on the strength of it), and ward puts a memo of
	# its own in its place.
	chmod 0666 "$memo"
	landlock_run "$WS" --quiet
	[ "$(warnings)" -eq 1 ]
	[ "$(stat -c %a "$memo")" = 600 ]
	landlock_run "$WS" --quiet
	[ "$(warnings)" -eq 0 ]
	# Another owner's file: the same.
	chown 65534 "$memo"
	landlock_run "$WS" --quiet
	[ "$(warnings)" -eq 1 ]
	[ "$(stat -c %u "$memo")" = "$(id -u)" ]
	# A symbolic link in its place is not followed.
	rm -f "$memo"
	cp "$ROOT/README.md" "$WS/decoy"
	ln -s "$WS/decoy" "$memo"
	landlock_run "$WS" --quiet
	[ "$(warnings)" -eq 1 ]
	cmp "$ROOT/README.md" "$WS/decoy"
}

@test "--quiet: no confined command can write the memo, on bwrap and Landlock" {
	# The state directory inside the writable workspace: still out of
	# reach inside the sandbox, whatever the runner (hidden: under bwrap
	# the memo is not there at all, so rm without -f to see it fail).
	local ws=$WS r
	export XDG_STATE_HOME=$ws/state
	require_landlock
	landlock_run "$ws" --quiet
	local memo=$ws/state/ward/warnings-shown
	[ -f "$memo" ]
	for r in bwrap landlock; do
		if [ "$r" = bwrap ] && ! "$WARD" probe --runner bwrap >/dev/null 2>&1; then
			continue
		fi
		run "$WARD" run -w "$ws" --mode workspace-write --runner "$r" \
			-- sh -c 'echo forged > "$1" || echo forged >> "$1" ||
				rm "$1" || mv "$1" "$1.x" || exit 9' sh "$memo"
		printf '# %s: %s\n' "$r" "$output"
		[ "$status" -eq 9 ]
		[ -f "$memo" ]
		! grep -q forged "$memo"
		[ "$(head -n1 "$memo")" = "ward-warnings-shown 1" ]
	done
}

@test "--quiet: ward fs takes it too; unknown elsewhere" {
	echo hi >"$WS/f"
	run -0 "$WARD" fs read --quiet -w "$WS" f
	[ "$output" = hi ]
	run --separate-stderr "$WARD" probe --quiet
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'--quiet'"* ]]
}

# --- completion ---------------------------------------------------------------

# complete WORD...: what the bash completion offers for the last WORD.
complete_bash() {
	local script
	script=$("$WARD" completion bash)
	bash -c "$script"'
COMP_WORDS=(ward "$@"); COMP_CWORD=$#; _ward
printf "%s\n" "${COMPREPLY[@]}"' bash "$@"
}

@test "completion: bash offers commands, subcommands, options and their values" {
	run -0 "$WARD" completion bash
	bash -n <<<"$output"
	[[ "$output" == *"complete -F _ward ward"* ]]

	run -0 complete_bash ''
	for c in run probe confine fs session config mcp completion help; do
		grep -qx "$c" <<<"$output"
	done
	run -0 complete_bash run --mo
	[ "$output" = --mode ]
	run -0 complete_bash run --mode ''
	[ "$(sort <<<"$output" | paste -sd' ')" = \
		"danger-full-access read-only workspace-write" ]
	run -0 complete_bash run --mode = wo
	[ "$output" = workspace-write ]
	run -0 complete_bash run -r ''
	[ "$(sort <<<"$output" | paste -sd' ')" = "auto bwrap landlock" ]
	run -0 complete_bash fs ''
	[ "$(paste -sd' ' <<<"$output")" = "read write edit rm mv mkdir ls stat" ]
	# Options by subcommand: --text is write's, not read's.
	run -0 complete_bash fs write --te
	[ "$output" = --text ]
	run -0 complete_bash fs read --te
	[ -z "$output" ]
	run -0 complete_bash session approval abc ''
	[ "$(sort <<<"$output" | paste -sd' ')" = "ask never" ]
	run -0 complete_bash completion ''
	[ "$(paste -sd' ' <<<"$output")" = "bash zsh" ]
	run -0 complete_bash help co
	[ "$(paste -sd' ' <<<"$output")" = "confine config completion" ]
	# After the command to run, nothing of ward's is offered.
	run -0 complete_bash run -m read-only -- ls --mo
	! grep -qx -- --mode <<<"$output"
}

@test "completion: bash offers session ids from the store and files for fs" {
	local id
	id=$("$WARD" session new --cwd "$WS")
	[ -f "$STATE/ward/sessions/$id.jsonl" ]
	run -0 complete_bash session show ''
	grep -qx "$id" <<<"$output"
	run -0 complete_bash run --session "${id:0:4}"
	[ "$output" = "$id" ]
	mkdir "$WS/subdir"
	touch "$WS/file.txt"
	cd "$WS"
	run -0 complete_bash fs read fi
	[ "$output" = file.txt ]
	run -0 complete_bash fs ls ''
	[ "$output" = subdir ]
}

@test "completion: zsh's script loads, registers _ward and offers each command's options" {
	command -v zsh >/dev/null || skip "zsh is not installed (scripts/deps.sh test)"
	local dir=$BATS_TEST_TMPDIR/zfunc
	mkdir -p "$dir"
	"$WARD" completion zsh >"$dir/_ward"
	run -0 zsh -n "$dir/_ward"
	# Autoloaded from fpath by compinit, as an installed _ward is.
	run -0 zsh -f -c "fpath=($dir \$fpath); autoload -Uz compinit; compinit -u -d $dir/dump; print -r -- \$_comps[ward]"
	[ "$output" = _ward ]
	# Each command's _arguments specs, captured by a stand-in, name the
	# same options as the bash completion (both come from one table).
	local cmd fn opts_z opts_b
	for cmd in run probe confine mcp "fs read" "fs write" "fs ls" \
		"session new" "session show" "config check"; do
		fn=_ward_cmd_${cmd// /_}
		opts_z=$(zsh -f -c "source $dir/_ward 2>/dev/null
_arguments() { local a; for a; do print -r -- \$a; done }
$fn" | sed -n "s/^\*\(-[-a-zA-Z]*\)[=+]\{0,1\}[:[].*/\1/p; s/^\*\(-[-a-zA-Z]*\)$/\1/p" | sort -u | paste -sd' ')
		# shellcheck disable=SC2086
		opts_b=$(complete_bash $cmd - | sort -u | paste -sd' ')
		printf '# %s\n#  zsh:  %s\n#  bash: %s\n' "$cmd" "$opts_z" "$opts_b"
		[ -n "$opts_z" ]
		[ "$opts_z" = "$opts_b" ]
	done
}

@test "completion: an unknown shell is a usage error" {
	run --separate-stderr "$WARD" completion fish
	[ "$status" -eq 2 ]
	[[ "$stderr" == *"'fish'"* ]]
	run --separate-stderr "$WARD" completion
	[ "$status" -eq 2 ]
}

# --- --json errors -------------------------------------------------------------

# is_error CODE: $output is one JSON object {"error": CODE, "message": ...}.
is_error() {
	printf '%s' "$output" | "$PY" -c '
import json, sys
lines = sys.stdin.read().splitlines()
assert len(lines) == 1, lines
d = json.loads(lines[0])
assert d["error"] == sys.argv[1], d
assert isinstance(d["message"], str) and d["message"], d' "$1"
}

@test "--json: every failure is one {error, message} object on stdout" {
	run --separate-stderr "$WARD" run --json --bogus -- true
	[ "$status" -eq 2 ]
	is_error USAGE
	[[ "$stderr" == *"'--bogus'"* ]]
	# --json after the culprit still gets the JSON form.
	run --separate-stderr "$WARD" run --mode nonsense --json -- true
	[ "$status" -eq 2 ]
	is_error USAGE
	run -127 --separate-stderr "$WARD" run --json -w "$WS" -- ward-no-such-command
	is_error COMMAND_NOT_FOUND
	run --separate-stderr "$WARD" run --json -w "$WS" --config "$WS/nope.yml" -- true
	[ "$status" -eq 125 ]
	is_error CONFIG_INVALID
	[ "$(printf '%s' "$output" | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["errors"]))')" -ge 1 ]
	run --separate-stderr "$WARD" confine --json --runner nonsense -- true
	[ "$status" -eq 2 ]
	is_error USAGE
	run --separate-stderr "$WARD" fs read --json --text x -w "$WS" f
	[ "$status" -eq 2 ]
	is_error USAGE
	[[ "$stderr" == *"'--text' does not apply to read"* ]]
	run --separate-stderr "$WARD" fs read --json -w "$WS" missing
	[ "$status" -eq 1 ]
	is_error NOT_FOUND
	run --separate-stderr "$WARD" session show --json no-such-session
	[ "$status" -eq 2 ]
	is_error USAGE
	run --separate-stderr "$WARD" session new --json --cwd "$WS/nope"
	[ "$status" -eq 2 ]
	is_error USAGE
	# Without --json, nothing on stdout.
	run --separate-stderr "$WARD" run --bogus -- true
	[ "$status" -eq 2 ]
	[ -z "$output" ]
}

@test "--json: every error code in the sources is documented in ward(1)" {
	run "$PY" "$BATS_TEST_DIRNAME/docs_check.py" "$WARD" "$LAUNCHER" codes
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
}

# --- man pages --------------------------------------------------------------------

@test "man pages: every command's --help, option table and OPTIONS agree" {
	run "$PY" "$BATS_TEST_DIRNAME/docs_check.py" "$WARD" "$LAUNCHER" options
	printf '%s\n' "$output"
	[ "$status" -eq 0 ]
}

@test "man pages: ward(1) says confine --json prints cwd, and bwrap's argv has --chdir" {
	run -0 sed -n '/^\.SS Options of probe and confine/,/^\.SS /p' "$ROOT/man/ward.1"
	[[ "$output" == *'\-\-chdir'* ]]
	[[ "$output" == *'.B cwd'* ]]
	if "$WARD" probe --runner bwrap >/dev/null 2>&1; then
		run -0 "$WARD" confine --json --runner bwrap -w "$WS" -- true
		printf '%s' "$output" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
i = d["argv"].index("--chdir")
assert d["argv"][i + 1] == d["cwd"], d'
	fi
}

@test "man pages: groff finds nothing to warn about" {
	command -v man >/dev/null || skip "man is not installed"
	local page
	for page in "$ROOT"/man/*.[15]; do
		run -0 --separate-stderr man --warnings -E UTF-8 -l "$page"
		printf '# %s: %s\n' "$page" "$stderr"
		[ -z "$stderr" ]
	done
}

# The README's quick start: `make demo` runs scripts/demo.sh on the build.
@test "make demo's script: every step behaves as the README says, on each runner" {
	[ "$BUILD" = "$ROOT/build" ] ||
		skip "scripts/demo.sh runs build/bin/ward; this lane builds in $BUILD"
	local r n=0
	for r in bwrap landlock; do
		"$WARD" probe --json | jq -e --arg r "$r" \
			'.chain[] | select(.runner == $r) | .usable' >/dev/null || continue
		n=$((n + 1))
		run "$ROOT/scripts/demo.sh" --runner "$r"
		echo "# $r: $output" | tail -5
		[ "$status" = 0 ]
		[[ "$output" == *"every step behaved as expected"* ]]
		[[ "$output" != *FAIL* ]]
	done
	[ "$n" -gt 0 ] || skip "no runner can confine here (ward probe)"
}

# A clone under /tmp with HOME=/tmp (a CI image): the demo's "outside"
# target must lie outside every writable root, not in build/ or $HOME,
# which are both under /tmp, a writable root of workspace-write.
@test "make demo's script: with the clone and HOME under /tmp, 'outside' really is outside" {
	local tree r
	tree=$(mktemp -d /tmp/ward-demo-tree.XXXXXX)
	mkdir -p "$tree/scripts" "$tree/build/bin" "$tree/home"
	cp "$ROOT/scripts/demo.sh" "$tree/scripts/"
	ln -s "$WARD" "$tree/build/bin/ward"
	for r in bwrap landlock; do
		"$WARD" probe --json | jq -e --arg r "$r" \
			'.chain[] | select(.runner == $r) | .usable' >/dev/null || continue
		run env HOME="$tree/home" "$tree/scripts/demo.sh" --runner "$r"
		echo "# $r: $output" | tail -8
		[ "$status" = 0 ] || { rm -rf "$tree"; false; }
		[[ "$output" != *FAIL* ]] || { rm -rf "$tree"; false; }
		[[ "$output" != *"> $tree"* ]] || { rm -rf "$tree"; false; }
	done
	rm -rf "$tree"
}
