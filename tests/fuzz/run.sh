#!/bin/bash
# Run libFuzzer targets: tests/fuzz/run.sh SECONDS BINARY...
# (SECONDS 0: replay the committed corpus only, as make check does)
#
# Each target first replays its seed corpus (tests/fuzz/corpus/<name>/,
# where every minimised crash input is committed), then fuzzes for SECONDS
# into a scratch corpus under $WARD_BUILD/fuzz/ (libFuzzer writes new
# inputs into the first corpus directory, so the committed seeds stay
# untouched). FUZZ_JOBS targets run at a time (default 1). Prints one TAP
# line per target, in the order given, with its executions per second and
# the coverage libFuzzer saw; with FUZZ_SUMMARY=1 it ends with
# "N passed, N failed, N skipped".
#
# FUZZ_SEED, when set, is libFuzzer's -seed (a repeatable run).
# tests/fuzz/corpus/<name>.dict is used as the target's dictionary;
# tests/fuzz/corpus/<name>.options holds extra libFuzzer flags, one a line.
set -u
cd "$(dirname "$0")/../.." || exit 2
secs=$1
shift
B=${WARD_BUILD:-build}
jobs=${FUZZ_JOBS:-1}
mkdir -p "$B/fuzz"

run_one() { # BINARY: fuzz it; the outcome goes to its .rc file
	local bin=$1 name short seeds scratch dict opts log args
	name=$(basename "$bin")
	short=${name#fuzz_}
	seeds=tests/fuzz/corpus/$short
	scratch=$B/fuzz/corpus_$short
	dict=tests/fuzz/corpus/$short.dict
	opts=tests/fuzz/corpus/$short.options
	log=$B/fuzz/$name.log
	mkdir -p "$scratch" "$seeds"
	if [ "$secs" = 0 ]; then
		args=(-runs=0) # replay the corpus only
	else
		args=(-max_total_time="$secs")
	fi
	args+=(-timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
	# FUZZ_SEED: libFuzzer's seed (a repeatable run; make fuzz-lane).
	[ -n "${FUZZ_SEED:-}" ] && args+=(-seed="$FUZZ_SEED")
	[ -f "$dict" ] && args+=(-dict="$dict")
	if [ -f "$opts" ]; then
		while IFS= read -r o; do
			[ -n "$o" ] && [ "${o#\#}" = "$o" ] && args+=("$o")
		done <"$opts"
	fi
	"$bin" "${args[@]}" "$scratch" "$seeds" >"$log" 2>&1
	echo $? >"$log.rc"
}

# Start them, at most $jobs at a time.
running=0
for bin in "$@"; do
	rm -f "$B/fuzz/$(basename "$bin").log.rc"
	run_one "$bin" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait

n=0 rc=0 passed=0 failed=0
for bin in "$@"; do
	n=$((n + 1))
	name=$(basename "$bin")
	short=${name#fuzz_}
	log=$B/fuzz/$name.log
	code=$(cat "$log.rc" 2>/dev/null || echo 1)
	# libFuzzer's final stats: executions, their rate, the edges covered.
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n 1)
	if [ "$code" = 0 ]; then
		if [ "$secs" = 0 ]; then
			echo "ok $n - fuzz $short: corpus replayed clean (${execs:-?} inputs, ${cov:-cov: ?})"
		else
			echo "ok $n - fuzz $short: ${secs}s clean, ${execs:-?} runs, ${rate:-?} exec/s, ${cov:-cov: ?}"
		fi
		passed=$((passed + 1))
	else
		echo "not ok $n - fuzz $short: crash, leak or broken oracle (exit $code), see $log"
		tail -n 40 "$log" | sed 's/^/# /'
		failed=$((failed + 1))
		rc=1
	fi
done
if [ "${FUZZ_SUMMARY:-}" = 1 ]; then
	echo "$passed passed, $failed failed, 0 skipped"
fi
exit $rc
