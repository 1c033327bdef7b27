#!/bin/bash
# make fuzz-long: every target for SECONDS, then the coverage its corpus
# reaches, into one report:
#   tests/fuzz/long.sh SECONDS REPORT FUZZ_BINARY... -- COV_BINARY...
# Each target fuzzes SECONDS (FUZZ_JOBS at a time) into its scratch corpus
# (tests/fuzz/run.sh), then the coverage build of it replays the committed
# and the scratch corpus (tests/fuzz/cov.sh). REPORT gets one row per
# target: executions, executions per second, libFuzzer's edge and feature
# counts, and the source lines, regions and functions covered in the files
# the target is about. The exit status is run.sh's: a crash, a leak or a
# broken oracle fails it (the input is in the target's log).
set -u
cd "$(dirname "$0")/../.." || exit 2
secs=$1 report=$2
shift 2
fuzz=() cov=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
	fuzz+=("$1")
	shift
done
[ $# -gt 0 ] && shift
cov=("$@")
B=${WARD_BUILD:-build}
mkdir -p "$(dirname "$report")"
tap=$B/fuzz/long-run.tap
FUZZ_SUMMARY=1 tests/fuzz/run.sh "$secs" "${fuzz[@]}" | tee "$tap"
rc=${PIPESTATUS[0]}
covout=$B/fuzz/long-cov.txt
tests/fuzz/cov.sh 0 "${cov[@]}" >"$covout" 2>&1 || rc=1
{
	echo "# make fuzz-long: $secs s per target, FUZZ_JOBS=${FUZZ_JOBS:-1}, $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null)"
	printf '%-10s %-6s %12s %9s %8s %8s %8s %8s %9s\n' target result \
		runs exec/s cov ft lines regions functions
	for bin in "${fuzz[@]}"; do
		short=$(basename "$bin")
		short=${short#fuzz_}
		line=$(grep -E "^(not )?ok [0-9]+ - fuzz $short:" "$tap")
		result=ok
		[[ "$line" == "not ok"* ]] && result=FAIL
		runs=$(sed -n 's/.* \([0-9]*\) runs,.*/\1/p' <<<"$line")
		rate=$(sed -n 's/.* runs, \([0-9]*\) exec\/s,.*/\1/p' <<<"$line")
		edges=$(sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/\1/p' <<<"$line")
		ft=$(sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/\2/p' <<<"$line")
		read -r _ _ l _ r _ f _ <<<"$(grep -E "^$short " "$covout")"
		printf '%-10s %-6s %12s %9s %8s %8s %8s %8s %9s\n' "$short" \
			"$result" "${runs:--}" "${rate:--}" "${edges:--}" \
			"${ft:--}" "${l:--}" "${r:--}" "${f:--}"
	done
	echo "# source coverage: the files tests/fuzz/cov.sh names per target"
} >"$report"
cat "$report"
exit "$rc"
