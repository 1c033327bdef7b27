#!/usr/bin/env bats
# shellcheck shell=bats
#
# Red team, approval smuggling: the escalation prompt must show what will
# happen. A write to notes.txt that is a symlink to a file outside the
# workspace shows that file; text from the model (the justification, the
# command, a file name) cannot hide anything from the person or repaint
# the question: line and paragraph separators, zero-width and bidi
# characters and tag characters arrive as visible escapes. The terminal
# prompt (ward run / ward fs --escalate, under script(1) for a terminal)
# and the MCP elicitation (a real SDK client) use the same escaping,
# libward's ward_escalation_escape().

load helpers

setup_file() {
	local mcp=$E2E_ROOT/tests/mcp
	if command -v node >/dev/null && command -v npm >/dev/null &&
		[ ! -d "$mcp/node_modules/@modelcontextprotocol/sdk" ]; then
		(cd "$mcp" && npm ci --no-audit --no-fund) \
			>"$BATS_FILE_TMPDIR/npm-ci.log" 2>&1 || true
	fi
}

setup() {
	e2e_setup
	RT_HOME=$(mktemp -d /var/tmp/ward-rt-home.XXXXXX)
	export HOME=$RT_HOME
	unset XDG_CONFIG_HOME XDG_STATE_HOME
	command -v script >/dev/null || skip "script(1) is not installed"
}

teardown() {
	e2e_teardown
	rm -rf "$RT_HOME"
}

# The characters, spelled as UTF-8 bytes: bash turns $'\u…' into a
# character only under a UTF-8 locale (CI runs without LANG).
LS=$'\xe2\x80\xa8'         # U+2028 LINE SEPARATOR
PS=$'\xe2\x80\xa9'         # U+2029 PARAGRAPH SEPARATOR
RLO=$'\xe2\x80\xae'        # U+202E RIGHT-TO-LEFT OVERRIDE
ZWSP=$'\xe2\x80\x8b'       # U+200B ZERO WIDTH SPACE
TAG_O=$'\xf3\xa0\x81\xaf' # U+E006F TAG LATIN SMALL LETTER O
TAG_K=$'\xf3\xa0\x81\xab' # U+E006B TAG LATIN SMALL LETTER K
# The justification: a line separator, an override, a zero-width space
# and tag characters spelling "ok".
JUST="fix typo${LS}ward: approved by policy${RLO} txt.exe ${ZWSP}${TAG_O}${TAG_K}"

# Run "$@" in a terminal (script), as the test's user, answering nothing;
# the prompt is in $output.
in_terminal() {
	local cmd
	printf -v cmd '%q ' "$@"
	# The answer typed ahead is discarded by the prompt (tcflush); the end
	# of input that follows cancels it. script(1) runs $cmd with $SHELL,
	# which must read %q's quoting: bash, whatever the caller's is.
	output=$(printf 'n\n' | timeout -k 2 30 "${E2E_AS[@]}" \
		env HOME="$HOME" SHELL=/bin/bash \
		script -qec "$cmd" /dev/null 2>&1 | tr -d '\r')
	printf '# %s\n' "$output" | head -n 20
}

assert_escaped() {
	local raw
	for raw in "$LS" "$RLO" "$ZWSP" "$TAG_O"; do
		[[ "$output" != *"$raw"* ]] ||
			fail "the prompt holds a raw U+$(printf '%s' "$raw" | iconv -f utf-8 -t utf-32be | od -An -tx1 | tr -d ' \n')"
	done
	[[ "$output" == *'\u2028'* && "$output" == *'\u202e'* &&
		"$output" == *'\u200b'* && "$output" == *'\U000e006f'* ]] ||
		fail "the prompt does not show the escapes"
}

prompt_case() {
	local who=$1
	[ "$who" = nobody ] && as_nobody && chown -R 65534:65534 "$RT_HOME"
	ln -s "$OUT_DIR/etc-x" "$WS/notes.txt"
	in_terminal "$WARD" fs write -w "$WS" --escalate workspace-write \
		--justification "$JUST" --text x notes.txt
	[[ "$output" == *"asks for a wider sandbox"* ]] || fail "no prompt was shown"
	[[ "$output" == *"write notes.txt (-> $OUT_DIR/etc-x)"* ]] ||
		fail "the prompt does not show where the write lands"
	assert_escaped
	[ ! -e "$OUT_DIR/etc-x" ] || fail "the unanswered write happened"
	# A command and its argument are escaped the same way.
	in_terminal "$WARD" run -w "$WS" --escalate danger-full-access \
		--justification "$JUST" -- printf '%s' "a${PS}b"
	[[ "$output" == *'a\u2029b'* ]] || fail "the command is not escaped"
	assert_escaped
}

@test "terminal prompt: a file operation shows its resolved target, escaped (root)" {
	prompt_case root
}

@test "terminal prompt: a file operation shows its resolved target, escaped (nobody)" {
	prompt_case nobody
}

@test "mcp elicitation: a file operation shows its resolved target, escaped" {
	command -v node >/dev/null || skip "node is not installed"
	local mcp=$E2E_ROOT/tests/mcp
	[ -d "$mcp/node_modules/@modelcontextprotocol/sdk" ] ||
		fail "the npm clients are not installed (npm ci in tests/mcp failed)"
	run timeout -k 5 120 env WARD="$WARD" node --test --test-reporter=tap \
		--test-name-pattern='^approval-target: ' "$mcp/approval.test.mjs"
	printf '%s\n' "$output" | grep -v '^ *at ' | head -n 40 | sed 's/^/# /'
	[ "$status" -eq 0 ] || fail "node --test exited $status"
	grep -q '^# pass 1$' <<<"$output" || fail "the scenario did not run"
}
