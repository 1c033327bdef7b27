#!/bin/bash
# Run every ward test and end with one line: "N passed, N failed, N skipped".
#
# Usage: tests/run.sh UNIT_TEST_BINARY...
#
# Unit tests (cmocka) and end-to-end tests (bats) both speak TAP here; this
# script counts their results. A test binary that dies without reporting is
# counted as one failure. Skips always carry their reason in the TAP line.
#
# WARD_BUILD names the build under test (default build/; make check-asan
# sets it to build-asan/). With WARD_SANITIZE=1 every process writes its
# sanitizer reports under $WARD_BUILD/san/, and each report is one failure.
# WARD_E2E_FILES limits the e2e suite to the files it names.
set -u
cd "$(dirname "$0")/.." || exit 2

passed=0 failed=0 skipped=0
mkdir -p "${WARD_BUILD:-build}/tests" || exit 2
WARD_BUILD=$(cd "${WARD_BUILD:-build}" && pwd) || exit 2
export WARD_BUILD
log=$WARD_BUILD/tests/last-run.log

if [ "${WARD_SANITIZE:-}" = 1 ]; then
	# Absolute, writable by the unprivileged users some tests run ward as.
	san=$WARD_BUILD/san
	rm -rf "$san"
	mkdir -p "$san"
	chmod 1777 "$san"
	export ASAN_OPTIONS="log_path=$san/asan:log_exe_name=1:detect_leaks=1"
	export UBSAN_OPTIONS="log_path=$san/ubsan:log_exe_name=1:print_stacktrace=1:halt_on_error=1"
	export LSAN_OPTIONS="log_path=$san/lsan:log_exe_name=1"
	# What a test adds to build a program against the sanitized libward.
	export WARD_SAN_CFLAGS="-fsanitize=address,undefined"
	# An uninstrumented python loading an instrumented libward.so needs
	# the runtime first; python's own allocations are not ours to check.
	py_env=(env "LD_PRELOAD=$(${CC:-cc} -print-file-name=libasan.so) $(${CC:-cc} -print-file-name=libubsan.so)"
		"ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0")
	for b in ward landlock-run ward-bridge; do
		[ -x "$WARD_BUILD/bin/$b" ] || {
			echo "not ok - $WARD_BUILD/bin/$b is not built"
			exit 1
		}
	done
else
	py_env=()
fi
: >"$log"

# A HOME of its own, a git identity (tests/own_home.sh).
. tests/own_home.sh

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

# section NAME: print how long the section before it took (wall clock).
t_section=$(date +%s.%N) section_name=
section() {
	local now
	now=$(date +%s.%N)
	[ -z "$section_name" ] ||
		awk -v n="$section_name" -v a="$t_section" -v b="$now" \
			'BEGIN { printf "# time: %s %.1f s\n", n, b - a }'
	t_section=$now section_name=$1
}

# Every unit binary runs under a bound (WARD_UNIT_TIMEOUT seconds, default
# 900; then SIGTERM, and SIGKILL 10 s later): a test that hangs is one
# failure, not a suite that never ends. A whole binary takes well under a
# minute on a quiet machine.
unit_timeout=${WARD_UNIT_TIMEOUT:-900}
section unit
for bin in "$@"; do
	echo "# unit: $bin"
	out=$(CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 10 "$unit_timeout" "$bin" 2>&1)
	rc=$?
	count <<<"$out"
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "not ok - $bin did not finish within $unit_timeout s (WARD_UNIT_TIMEOUT): stopped"
		failed=$((failed + 1))
	elif [ $rc -ne 0 ] && ! grep -v '# SKIP' <<<"$out" | grep -q '^not ok'; then
		echo "not ok - $bin exited $rc without reporting a failure"
		failed=$((failed + 1))
	fi
done

# libward from another language (ctypes), through ward_call.
section python
echo "# python: tests/python/test_libward.py"
count < <("${py_env[@]}" timeout -k 10 "$unit_timeout" /usr/bin/python3 \
	tests/python/test_libward.py 2>&1)

section fuzz
if [ -n "${WARD_FUZZ_BINS:-}" ]; then
	echo "# fuzz: every committed corpus replayed, then ${WARD_FUZZ_SECONDS:-0}s per target"
	# shellcheck disable=SC2086
	count < <(FUZZ_JOBS=${FUZZ_JOBS:-$(nproc)} \
		tests/fuzz/run.sh "${WARD_FUZZ_SECONDS:-0}" $WARD_FUZZ_BINS 2>&1)
fi

section e2e
# A bound per test too (bats stops a test past BATS_TEST_TIMEOUT seconds
# and reports it failed): WARD_E2E_TEST_TIMEOUT, default 900.
export BATS_TEST_TIMEOUT=${WARD_E2E_TEST_TIMEOUT:-900}
if compgen -G 'tests/e2e/*.bats' >/dev/null; then
	# The files run side by side, WARD_TEST_JOBS at a time (default: one
	# per CPU; GNU parallel is in the test set), each file's tests one
	# after the other; the longest files first, so none starts last
	# (mcp and acp first of all: their node runs start in setup_file and
	# go on beside their tests). The order is by the sum of each file's
	# test times (bats --timing, in tests/last-run.log) in a make check.
	jobs=${WARD_TEST_JOBS:-$(nproc)}
	files=()
	for f in mcp acp redteam_seal redteam_grants redteam_box cli \
		redteam_repos network doc_examples mcp_grants sandbox_bwrap \
		redteam_root redteam_persist sandbox_landlock session polish \
		home redteam_guard; do
		[ -e "tests/e2e/$f.bats" ] && files+=("tests/e2e/$f.bats")
	done
	for f in tests/e2e/*.bats; do
		case " ${files[*]} " in *" $f "*) ;; *) files+=("$f") ;; esac
	done
	# WARD_E2E_FILES (names without .bats): only those files (make
	# check-asan's selection); a name that is not a file is an error.
	if [ -n "${WARD_E2E_FILES:-}" ]; then
		all=${#files[@]} sel=()
		for n in $WARD_E2E_FILES; do
			[ -e "tests/e2e/$n.bats" ] || {
				echo "not ok - WARD_E2E_FILES: tests/e2e/$n.bats does not exist"
				failed=$((failed + 1))
			}
		done
		for f in "${files[@]}"; do
			case " $WARD_E2E_FILES " in
			*" $(basename "$f" .bats) "*) sel+=("$f") ;;
			esac
		done
		files=("${sel[@]}")
		echo "# e2e: ${#files[@]} of $all files (WARD_E2E_FILES)"
	fi
	if [ "$jobs" -gt 1 ] && command -v parallel >/dev/null; then
		echo "# e2e: bats tests/e2e, $jobs files at a time"
		count < <(bats --tap --timing --jobs "$jobs" --no-parallelize-within-files \
			"${files[@]}" 2>&1)
	else
		echo "# e2e: bats tests/e2e"
		count < <(bats --tap --timing "${files[@]}" 2>&1)
	fi
fi

section end
if [ "${WARD_SANITIZE:-}" = 1 ]; then
	echo "# sanitizer reports: $san"
	for r in "$san"/*; do
		[ -e "$r" ] || continue
		echo "not ok - sanitizer report $r"
		sed -n '1,40p' "$r" | sed 's/^/#   /'
		failed=$((failed + 1))
	done
fi

if [ "$skipped" -gt 0 ]; then
	echo "# skipped tests and their reasons:"
	grep -iE '^(not )?ok .*# skip' "$log" | sed 's/^/#   /'
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
