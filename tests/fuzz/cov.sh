#!/bin/bash
# Source coverage of each fuzz target's files under test:
#   tests/fuzz/cov.sh SECONDS BINARY...
# (BINARY built with -fprofile-instr-generate -fcoverage-mapping: make
# fuzz-cov.) Each target fuzzes SECONDS (0: not at all) into its scratch
# corpus, then replays that corpus and its committed one with profiling on;
# llvm-cov reports the files the target is about. One line per target:
#   <target>  lines L%  regions R%  functions F%  (files)
set -u
cd "$(dirname "$0")/../.." || exit 2
secs=$1
shift
B=${WARD_BUILD:-build}
PROFDATA=$(command -v llvm-profdata || command -v llvm-profdata-14)
COV=$(command -v llvm-cov || command -v llvm-cov-14)
if [ -z "$PROFDATA" ] || [ -z "$COV" ]; then
	echo "fuzz-cov: llvm-profdata and llvm-cov are needed (Debian: apt-get install llvm-14)" >&2
	exit 1
fi

# The files each target is about.
files_of() {
	case "$1" in
	argv) echo src/cli/options.c ;;
	classify) echo src/libward/run/classify.c ;;
	config) echo src/libward/config/config.c src/libward/config/config_parse.c src/libward/config/config_schema.c ;;
	fence) echo src/libward/fsfence/fsfence.c ;;
	gitconfig) echo src/libward/policy/gitconfig.c ;;
	gitrepo) echo src/libward/policy/protect.c src/libward/policy/gitconfig.c ;;
	glob) echo src/libward/policy/glob.c ;;
	jsonrpc) echo src/mcp/jsonrpc.c ;;
	landlock) echo src/libward/plan/translate.c src/libward/plan/translate_targets.c src/libward/plan/translate_landlock.c ;;
	mcp) echo src/mcp/server.c src/mcp/tools.c ;;
	proxy) echo src/libward/net/proxy_http.c src/libward/net/proxy_socks.c src/libward/net/proxy_rules.c ;;
	rules) echo src/libward/policy/rules.c ;;
	session) echo src/libward/session/session.c ;;
	supervise) echo src/util/supervise.c ;;
	*) echo "" ;;
	esac
}

out=$B/fuzz-cov
mkdir -p "$out"
rc=0
for bin in "$@"; do
	name=$(basename "$bin")
	short=${name#fuzz_}
	files=$(files_of "$short")
	[ -n "$files" ] || { echo "$short: no file under test named in tests/fuzz/cov.sh"; rc=1; continue; }
	seeds=tests/fuzz/corpus/$short
	scratch=$B/fuzz/corpus_$short
	mkdir -p "$scratch"
	opts=()
	[ -f "tests/fuzz/corpus/$short.options" ] &&
		while IFS= read -r o; do
			[ -n "$o" ] && [ "${o#\#}" = "$o" ] && opts+=("$o")
		done <"tests/fuzz/corpus/$short.options"
	rm -f "$out/$short".*.profraw
	if [ "$secs" != 0 ]; then
		LLVM_PROFILE_FILE=$out/$short.fuzz.profraw "$bin" "${opts[@]}" \
			-max_total_time="$secs" "$scratch" "$seeds" \
			>"$out/$short.log" 2>&1
	fi
	LLVM_PROFILE_FILE=$out/$short.replay.profraw "$bin" "${opts[@]}" \
		-runs=0 "$scratch" "$seeds" >>"$out/$short.log" 2>&1
	"$PROFDATA" merge -sparse "$out/$short".*.profraw -o "$out/$short.profdata" || { rc=1; continue; }
	# shellcheck disable=SC2086
	"$COV" report "$bin" -instr-profile="$out/$short.profdata" $files \
		>"$out/$short.txt" 2>&1
	# The TOTAL line: regions, missed, cover, functions, missed, cover,
	# lines, missed, cover, branches...
	awk -v t="$short" -v f="$files" '$1 == "TOTAL" {
		printf "%-10s lines %7s  regions %7s  functions %7s  (%s)\n",
			t, $10, $4, $7, f }' "$out/$short.txt"
	# A single file has no TOTAL line.
	if ! grep -q '^TOTAL' "$out/$short.txt"; then
		awk -v t="$short" -v f="$files" 'index($1, "/") || $1 ~ /\.c$/ {
			printf "%-10s lines %7s  regions %7s  functions %7s  (%s)\n",
				t, $10, $4, $7, f }' "$out/$short.txt" | tail -n 1
	fi
done
exit $rc
