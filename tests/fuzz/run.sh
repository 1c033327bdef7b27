#!/bin/bash
# Run libFuzzer targets: tests/fuzz/run.sh SECONDS BINARY...
#
# Each target first replays its seed corpus (tests/fuzz/corpus/<name>/),
# then fuzzes for SECONDS into a scratch corpus under build/fuzz/ (libFuzzer
# writes new inputs into the first corpus directory, so the committed seeds
# stay untouched). Prints one TAP line per target.
set -u
cd "$(dirname "$0")/../.." || exit 2
secs=$1
shift
n=0 rc=0
for bin in "$@"; do
	n=$((n + 1))
	name=$(basename "$bin")
	short=${name#fuzz_}
	seeds=tests/fuzz/corpus/$short
	scratch=build/fuzz/corpus_$short
	dict=tests/fuzz/corpus/$short.dict
	mkdir -p "$scratch" "$seeds"
	args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048)
	[ -f "$dict" ] && args+=(-dict="$dict")
	log=build/fuzz/$name.log
	if "$bin" "${args[@]}" "$scratch" "$seeds" >"$log" 2>&1; then
		echo "ok $n - fuzz $short: ${secs}s clean ($(grep -c . "$log") log lines)"
	else
		echo "not ok $n - fuzz $short: crash or leak, see $log"
		tail -n 30 "$log" | sed 's/^/# /'
		rc=1
	fi
done
exit $rc
