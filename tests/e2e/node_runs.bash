# shellcheck shell=bash
# Node test files run once per bats file, beside its tests (mcp.bats,
# acp.bats): setup_file starts them with node_chain, and each bats test
# reads one scenario's result with node_scenario. The file defines
# node_run NAME (the node command for run NAME, its TAP on stdout).

# node_chain NAME...: run `node_run NAME` for each NAME in turn, in the
# background, into $BATS_FILE_TMPDIR/NAME.tap and NAME.rc; NAME.by names
# the process that runs them (so a reader knows when nobody will).
node_chain() {
	local pid n
	(
		for n in "$@"; do
			node_run "$n" >"$BATS_FILE_TMPDIR/$n.tap" 2>&1
			echo "$?" >"$BATS_FILE_TMPDIR/$n.rc"
		done
	) </dev/null 3>&- &
	pid=$!
	echo "$pid" >>"$BATS_FILE_TMPDIR/node.pids"
	for n in "$@"; do
		echo "$pid" >"$BATS_FILE_TMPDIR/$n.by"
	done
}

# node_chains_stop: for teardown_file (a run whose tests were filtered
# out, bats -f, is not waited for).
node_chains_stop() {
	local pid
	while read -r pid; do
		pkill -TERM -P "$pid" 2>/dev/null || true
	done <"$BATS_FILE_TMPDIR/node.pids" 2>/dev/null || true
}

# node_scenario NAME ID SECONDS: pass, skip (with its reason) or fail as
# scenario "ID: …" of run NAME did. Waits for its line at most SECONDS,
# and no longer than the run, or the process running it, lasts.
node_scenario() {
	local name=$1 id=$2 limit=$3 tap rc by waited=0 out
	tap=$BATS_FILE_TMPDIR/$name.tap
	rc=$BATS_FILE_TMPDIR/$name.rc
	by=$(cat "$BATS_FILE_TMPDIR/$name.by" 2>/dev/null)
	while ! grep -Eq "^(not )?ok [0-9]+ - $id: " "$tap" 2>/dev/null &&
		[ ! -e "$rc" ]; do
		if [ -z "$by" ] || ! kill -0 "$by" 2>/dev/null; then
			# Gone: one last look (it may have just written).
			grep -Eq "^(not )?ok [0-9]+ - $id: " "$tap" 2>/dev/null ||
				[ -e "$rc" ] ||
				fail "node run $name: the process running it (${by:-none}) is gone before '$id' ran"
			break
		fi
		sleep 0.2
		waited=$((waited + 1))
		[ "$waited" -lt $((limit * 5)) ] ||
			fail "node run $name: no result for '$id' after $limit s"
	done
	# The scenario's block: from its "# Subtest: ID:" line to the next
	# top-level one.
	out=$(awk -v id="$id: " '
		/^# Subtest: / { on = (index($0, "# Subtest: " id) == 1) }
		on' "$tap")
	printf '%s\n' "$out" | grep -v '^ *at \|^ *\.\.\.$\|^ *---$' |
		head -n 60 | sed 's/^/# /'
	if ! grep -Eq "^(not )?ok [0-9]+ - $id: " "$tap"; then
		sed 's/^/# /' "$tap" | tail -n 40
		fail "node run $name exited $(cat "$rc") before '$id' ran"
	fi
	if grep -Eq "^ok [0-9]+ - $id: .*# SKIP" "$tap"; then
		skip "$(grep -Eo "^ok [0-9]+ - $id: .*# SKIP.*" "$tap" |
			sed 's/.*# SKIP *//')"
	fi
	grep -Eq "^ok [0-9]+ - $id: " "$tap" || fail "scenario '$id' failed"
}
