#!/bin/bash
# Run every ward test and end with one line: "N passed, N failed, N skipped".
#
# Usage: tests/run.sh UNIT_TEST_BINARY...
#
# Unit tests (cmocka) and end-to-end tests (bats) both speak TAP here; this
# script counts their results. A test binary that dies without reporting is
# counted as one failure. Skips always carry their reason in the TAP line.
set -u
cd "$(dirname "$0")/.." || exit 2

passed=0 failed=0 skipped=0
log=build/tests/last-run.log
mkdir -p build/tests
: >"$log"

count() { # count TAP lines from stdin, echoing them
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		printf '%s\n' "$line" >>"$log"
		case "$line" in
		*ok*"# skip"* | *ok*"# SKIP"*) skipped=$((skipped + 1)) ;;
		"not ok"*) failed=$((failed + 1)) ;;
		ok*) passed=$((passed + 1)) ;;
		esac
	done
}

for bin in "$@"; do
	echo "# unit: $bin"
	out=$(CMOCKA_MESSAGE_OUTPUT=TAP "$bin" 2>&1)
	rc=$?
	count <<<"$out"
	if [ $rc -ne 0 ] && ! grep -v '# SKIP' <<<"$out" | grep -q '^not ok'; then
		echo "not ok - $bin exited $rc without reporting a failure"
		failed=$((failed + 1))
	fi
done

# libward from another language (ctypes), through ward_call.
echo "# python: tests/python/test_libward.py"
count < <(/usr/bin/python3 tests/python/test_libward.py 2>&1)

if [ -n "${WARD_FUZZ_BINS:-}" ]; then
	echo "# fuzz smoke: ${WARD_FUZZ_SECONDS:-5}s per target"
	# shellcheck disable=SC2086
	count < <(tests/fuzz/run.sh "${WARD_FUZZ_SECONDS:-5}" $WARD_FUZZ_BINS 2>&1)
fi

if compgen -G 'tests/e2e/*.bats' >/dev/null; then
	echo "# e2e: bats tests/e2e"
	count < <(bats --tap tests/e2e/*.bats 2>&1)
fi

if [ "$skipped" -gt 0 ]; then
	echo "# skipped tests and their reasons:"
	grep -iE '^(not )?ok .*# skip' "$log" | sed 's/^/#   /'
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
