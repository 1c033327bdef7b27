#!/bin/bash
# ward demo (what `make demo` runs): real commands, each printed before it
# runs, showing a denied write and an allowed one.
#
# Usage: scripts/demo.sh [--runner auto|bwrap|landlock]
#
# It is also a check: it exits 0 only when every step behaved as expected,
# 1 otherwise (2 when ward is not built). Temporary files are removed.
set -u
cd "$(dirname "$0")/.." || exit 2
repo=$PWD
ward=$repo/build/bin/ward
runner=auto

case "${1:-}" in
--runner) runner=${2:?--runner needs a value} ;;
--runner=*) runner=${1#--runner=} ;;
"") ;;
*)
	echo "usage: scripts/demo.sh [--runner auto|bwrap|landlock]" >&2
	exit 2
	;;
esac

if [ ! -x "$ward" ]; then
	echo "demo: $ward is not built; run 'make' first" >&2
	exit 2
fi

if [ -t 1 ]; then
	bold=$'\e[1m' green=$'\e[32m' red=$'\e[31m' off=$'\e[0m'
else
	bold='' green='' red='' off=''
fi

# The workspace lives under build/, not /tmp: bwrap gives a confined
# command a private /tmp, which would hide a workspace there.
mkdir -p "$repo/build"
ws=$(mktemp -d "$repo/build/ward-demo.XXXXXX") || exit 2
# A target outside every writable root of workspace-write: not in the
# workspace, /tmp or $TMPDIR (HOME and the clone may both lie under /tmp
# on a CI image). The first of $HOME, /var/tmp and build/ that is none of
# them, compared as canonical paths.
within() { # PATH DIR: whether PATH is DIR or lies beneath it
	[ -n "$2" ] && case "$1/" in "${2%/}/"*) return 0 ;; esac
	return 1
}
outside_dir=
for d in "${HOME:-}" /var/tmp "$repo/build"; do
	if [ -z "$d" ] || [ ! -d "$d" ] || [ ! -w "$d" ]; then
		continue
	fi
	d=$(realpath "$d") || continue
	[ "$d" != / ] || continue
	within "$d" "$(realpath /tmp)" && continue
	[ -n "${TMPDIR:-}" ] && within "$d" "$(realpath -m "$TMPDIR")" && continue
	within "$d" "$(realpath "$ws")" && continue
	outside_dir=$d
	break
done
if [ -z "$outside_dir" ]; then
	echo "demo: no writable directory outside /tmp, \$TMPDIR and the workspace for the 'outside' step (tried \$HOME, /var/tmp, build/)" >&2
	rm -rf -- "$ws"
	exit 2
fi
outside=$outside_dir/ward-demo-$$.txt
err=$(mktemp) || exit 2
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	rm -rf -- "$ws"
	rm -f -- "$outside" "$err"
}
trap cleanup EXIT

failures=0
step=0

# Quote one word for display the way a person would type it.
q() {
	case "$1" in
	'' | *[!A-Za-z0-9_@%+=:,./-]*) printf "'%s'" "${1//\'/\'\\\'\'}" ;;
	*) printf '%s' "$1" ;;
	esac
}

# Print "+ CMD ARGS" (ward shown by name), then run it; $rc holds the status.
show() {
	local word first=1
	printf '%s+' "$bold"
	for word in "$@"; do
		if [ $first = 1 ] && [ "$word" = "$ward" ]; then
			printf ' ward'
		else
			printf ' %s' "$(q "$word")"
		fi
		first=0
	done
	printf '%s\n' "$off"
	"$@"
	rc=$?
}

# Like show, but stderr is also kept in $err (displayed after stdout).
show_err() {
	show "$@" 2>"$err"
	cat "$err" >&2
}

ok() { printf '  %sok%s: %s\n' "$green" "$off" "$*"; }
fail() {
	printf '  %sFAIL%s: %s\n' "$red" "$off" "$*"
	failures=$((failures + 1))
}
title() {
	step=$((step + 1))
	printf '\n%s== %d. %s%s\n' "$bold" "$step" "$*" "$off"
}
expect_marker() { # MODE
	# The marker is a line of its own; only the denial report's lines
	# ("[sandbox: … refused: …]") may follow it.
	local marker="[sandbox: file access denied under $1 mode]"
	if awk -v m="$marker" '$0 == m { seen = 1; next }
		seen && !/^\[sandbox: / { bad = 1 }
		END { exit !(seen && !bad) }' "$err"; then
		ok "stderr has the marker $marker, then only the denial report"
	else
		fail "stderr lacks the marker line '$marker' (or other output follows it)"
	fi
}

runner_opt=()
[ "$runner" != auto ] && runner_opt=(--runner "$runner")

printf '%sward demo%s (ward = %s, runner: %s)\n' "$bold" "$off" "$ward" \
	"$runner"
show cd "$ws"

title "Which runner can confine here?"
show "$ward" probe
if [ "$rc" -eq 0 ]; then
	ok "a runner can confine on this machine"
else
	fail "ward probe exited $rc: no runner can confine"
	echo "demo: nothing below can work; stopping" >&2
	exit 1
fi

title "read-only (the default): a write in the workspace is denied"
show_err "$ward" run "${runner_opt[@]}" -- sh -c 'echo hello > note.txt'
if [ "$rc" -ne 0 ]; then
	ok "the command failed (exit $rc)"
else
	fail "the write succeeded under read-only"
fi
expect_marker read-only
show ls -A
if [ ! -e note.txt ]; then
	ok "note.txt does not exist"
else
	fail "note.txt was created"
fi

title "workspace-write: the same write succeeds"
show "$ward" run "${runner_opt[@]}" --mode workspace-write -- \
	sh -c 'echo hello > note.txt'
if [ "$rc" -eq 0 ]; then
	ok "exit 0"
else
	fail "exit $rc"
fi
show cat note.txt
if [ "$(cat note.txt 2>/dev/null)" = hello ]; then
	ok "note.txt holds 'hello'"
else
	fail "note.txt does not hold 'hello'"
fi

title "workspace-write: a write outside the workspace is denied"
show_err "$ward" run "${runner_opt[@]}" --mode workspace-write -- \
	sh -c "echo escaped > $(q "$outside")"
if [ "$rc" -ne 0 ]; then
	ok "the command failed (exit $rc)"
else
	fail "the write outside the workspace succeeded"
fi
expect_marker workspace-write
show ls "$outside"
if [ ! -e "$outside" ]; then
	ok "$outside does not exist"
else
	fail "$outside was created"
fi

echo
if [ "$failures" -eq 0 ]; then
	printf '%sdemo: every step behaved as expected%s\n' "$green" "$off"
	exit 0
fi
printf '%sdemo: %d check(s) failed%s\n' "$red" "$failures" "$off"
exit 1
