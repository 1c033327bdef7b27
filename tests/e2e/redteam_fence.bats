#!/usr/bin/env bats
# shellcheck shell=bats
#
# Red team, the fs fence against the runners: a rule names a symbolic link
# (`-- ~/.ssh` where ~/.ssh is a link), or a path with a linked ancestor,
# or a glob whose literal prefix runs through a link. The runners act on
# where the rule's path resolves (a mount or a Landlock grant follows the
# link), so the fence must too: for every path of the table — through the
# link and at its target — `ward fs read`/`ward fs write` are denied exactly
# where a confined `cat`/`echo >` is — on Landlock too, whose launcher
# mounts over the `r-` match inside the writable root (src/util/hide.c).
#
# Printed as a table (fence, bwrap, landlock) when run with
# bats --tap / --verbose-run; each row is also checked.

load helpers

setup_file() {
	# The npm clients of the MCP test (as tests/e2e/mcp.bats installs them).
	local mcp=$E2E_ROOT/tests/mcp
	if command -v node >/dev/null && command -v npm >/dev/null &&
		[ ! -d "$mcp/node_modules/@modelcontextprotocol/sdk" ]; then
		(cd "$mcp" && npm ci --no-audit --no-fund) \
			>"$BATS_FILE_TMPDIR/npm-ci.log" 2>&1 || true
	fi
}

setup() {
	e2e_setup
	# A private HOME whose .ssh is a link to a keys directory elsewhere.
	RT_HOME=$OUT_DIR/home
	mkdir -p "$RT_HOME" "$OUT_DIR/keys" "$OUT_DIR/real/sec" "$OUT_DIR/real/g" \
		"$WS/data" "$WS/other"
	ln -s ../keys "$RT_HOME/.ssh"
	ln -s real "$OUT_DIR/alias"
	ln -s data "$WS/dlink"
	echo id >"$OUT_DIR/keys/id"
	echo k >"$OUT_DIR/real/sec/k"
	echo a >"$OUT_DIR/real/g/a.pem"
	echo b >"$OUT_DIR/real/g/b.txt"
	export HOME=$RT_HOME
	unset XDG_CONFIG_HOME XDG_STATE_HOME
	RULES=(
		--access '-- ~/.ssh'
		--access "-- $OUT_DIR/alias/sec"
		--access "-- $OUT_DIR/alias/g/*.pem"
		--access "r- $WS/dlink"
	)
}

teardown() {
	e2e_teardown
}

usable() {
	case "$1" in
	bwrap) bwrap --ro-bind / / --unshare-user -- true 2>/dev/null ;;
	*) "$LAUNCHER" --probe >/dev/null 2>&1 ;;
	esac
}

# outcome OP PATH WHO: allowed|denied for the fence and each runner.
fence_outcome() {
	local op=$1 p=$2
	if [ "$op" = read ]; then
		"${E2E_AS[@]}" "$WARD" fs read -w "$WS" -m read-only "${RULES[@]}" \
			"$p" >/dev/null 2>&1
	else
		"${E2E_AS[@]}" "$WARD" fs write -w "$WS" -m workspace-write \
			"${RULES[@]}" --text x "$p" >/dev/null 2>&1
	fi && echo allowed || echo denied
}

runner_outcome() {
	local v=$1 op=$2 p=$3
	usable "$v" || {
		echo n/a
		return
	}
	if [ "$op" = read ]; then
		ward_run "$v" read-only "${RULES[@]}" -- cat "$p" >/dev/null
	else
		ward_run "$v" workspace-write "${RULES[@]}" -c 'echo x > "$1"' sh "$p" >/dev/null
	fi
	[ "$status" = 0 ] && echo allowed || echo denied
}

# The rows: op, path, and whether Landlock enforces the rule there (every
# row since the launcher hides by mounts; kept to say so per row).
ROWS=(
	"read ~/.ssh/id yes"
	"read OUT/keys/id yes"
	"read OUT/alias/sec/k yes"
	"read OUT/real/sec/k yes"
	"read OUT/alias/g/a.pem yes"
	"read OUT/real/g/a.pem yes"
	"read OUT/real/g/b.txt yes"
	"write WS/dlink/f yes"
	"write WS/data/f yes"
	"write WS/other/f yes"
)

table_case() {
	local who=$1 row op p lpath ll f b l bad=0
	if [ "$who" = nobody ]; then
		as_nobody
		chown -R 65534:65534 "$WS"
	fi
	printf '# %-6s %-24s %-8s %-8s %-8s\n' op path fence bwrap landlock >&3
	for row in "${ROWS[@]}"; do
		read -r op lpath ll <<<"$row"
		p=${lpath/#\~/$RT_HOME}
		p=${p/#OUT/$OUT_DIR}
		p=${p/#WS/$WS}
		rm -f "$WS/data/f" "$WS/other/f"
		f=$(fence_outcome "$op" "$p")
		rm -f "$WS/data/f" "$WS/other/f"
		b=$(runner_outcome bwrap "$op" "$p")
		rm -f "$WS/data/f" "$WS/other/f"
		l=$(runner_outcome landlock "$op" "$p")
		printf '# %-6s %-24s %-8s %-8s %-8s\n' "$op" "$lpath" "$f" "$b" "$l" >&3
		[ "$b" = n/a ] || [ "$f" = "$b" ] || bad=1
		if [ "$ll" = yes ]; then
			[ "$l" = n/a ] || [ "$f" = "$l" ] || bad=1
		fi
	done
	[ "$bad" = 0 ] || fail "the fence and the runners disagree (table above)"
	# No rule is left unenforced on Landlock: no warning says so.
	if usable landlock; then
		ward_run landlock workspace-write "${RULES[@]}" -- true
		[[ "$stderr" != *"cannot be expressed"* ]] ||
			fail "a rule is said to be unenforced: $stderr"
	fi
}

@test "fence = bwrap = Landlock for symlinked rules, linked ancestors and their targets (root)" {
	table_case root
}

@test "fence = bwrap = Landlock for symlinked rules, linked ancestors and their targets (nobody)" {
	table_case nobody
}

# The same through the MCP server's read_file.
@test "mcp read_file is denied where the runners hide a symlinked rule's target" {
	command -v node >/dev/null || skip "node is not installed"
	local mcp=$E2E_ROOT/tests/mcp
	[ -d "$mcp/node_modules/@modelcontextprotocol/sdk" ] ||
		skip "the npm clients are not installed (tests/e2e/mcp.bats installs them)"
	run timeout -k 5 120 env WARD="$WARD" RT_WS="$WS" RT_HOME="$RT_HOME" \
		RT_OUT="$OUT_DIR" node --test --test-reporter=tap \
		--test-name-pattern='^fence-symlink: ' "$mcp/approval.test.mjs"
	printf '%s\n' "$output" | grep -v '^ *at ' | head -n 40 | sed 's/^/# /'
	[ "$status" -eq 0 ] || fail "node --test exited $status"
	grep -q '^# pass 1$' <<<"$output" || fail "the scenario did not run"
}
