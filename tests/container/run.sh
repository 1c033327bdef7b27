#!/bin/bash
# The container lane (`make check-container`): the end-to-end security suite
# again, with user namespaces denied the way container runtimes deny them
# (tests/container/nouserns: a seccomp filter refusing unshare/clone with
# CLONE_NEWUSER and clone3, the runtime's default capabilities, so no
# CAP_SYS_ADMIN). There bwrap cannot run and Landlock is the only runner:
# every red-team vector must hold all the same. bwrap cases skip and say
# so; `ward probe` must explain the situation.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${WARD_BUILD:-$PWD/build}
NS=$B/tests/nouserns
WARD=$B/bin/ward

if [ "$(id -u)" != 0 ]; then
	echo "container lane: SKIP: needs root (it drops what a container lacks)"
	exit 0
fi
# The lane is only worth something if the denial really is in force.
if "$NS" unshare -U true 2>/dev/null; then
	echo "container lane: nouserns did not deny a user namespace" >&2
	exit 1
fi
probe=$("$NS" "$WARD" probe)
printf '%s\n' "$probe" | sed 's/^/# ward probe: /'
grep -q '^chosen: *landlock' <<<"$probe" || {
	echo "container lane: ward probe did not choose landlock" >&2
	exit 1
}
grep -q '^note: *user namespaces are denied' <<<"$probe" || {
	echo "container lane: ward probe does not explain the denial" >&2
	exit 1
}
export WARD_CONTAINER_LANE=1
# A HOME of its own, a git identity (as make check: tests/own_home.sh).
. tests/own_home.sh
# The TAP lines as they come, then one summary line (as make check ends).
set +e
# The files side by side as make check runs them (GNU parallel), each
# file's tests one after the other.
jobs=()
if [ "$(nproc)" -gt 1 ] && command -v parallel >/dev/null; then
	jobs=(--jobs "$(nproc)" --no-parallelize-within-files)
fi
"$NS" bats --tap "${jobs[@]}" tests/e2e/redteam*.bats tests/e2e/sandbox_landlock.bats |
	awk '
	{ print; fflush() }
	/^(not )?ok .*# (skip|SKIP)/ { s++; next }
	/^not ok/ { f++; next }
	/^ok/ { p++ }
	END { printf "container lane: %d passed, %d failed, %d skipped\n", p, f, s }'
rc=${PIPESTATUS[0]}
exit "$rc"
