#!/usr/bin/env bats
# shellcheck shell=bats
#
# make install puts ward, the launcher, libward, its headers and ward.pc,
# the man pages and the completions where they belong (under DESTDIR), the
# installed ward works from there, and make uninstall takes every file
# back out.

bats_require_minimum_version 1.5.0

ROOT=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
# The build under test (make check-asan points this at its own tree).
BUILD=${WARD_BUILD:-$ROOT/build}

setup() {
	[ -x "$BUILD/bin/ward" ] || skip "$WARD is not built (run make)"
	[ -f "$BUILD/completion/_ward" ] || skip "not built by this tree's make"
	DEST=$(mktemp -d /var/tmp/ward-install.XXXXXX)
}

teardown() {
	rm -rf "${DEST:-}"
}

# The tree's make, not the one running the tests (no jobserver from it).
tree_make() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$ROOT" "$@"
}

@test "make install puts every file in place, make uninstall takes them all out" {
	local p=/usr/local f
	run -0 tree_make install DESTDIR="$DEST"
	local expected=(
		"$p/bin/ward"
		"$p/libexec/ward/landlock-run"
		"$p/libexec/ward/ward-bridge"
		"$p/lib/libward.a"
		"$p/lib/libward.so.0"
		"$p/lib/libward.so"
		"$p/lib/pkgconfig/ward.pc"
		"$p/share/bash-completion/completions/ward"
		"$p/share/zsh/site-functions/_ward"
	)
	for f in "$ROOT"/include/ward/*.h; do
		expected+=("$p/include/ward/$(basename "$f")")
	done
	for f in "$ROOT"/man/*.1; do
		expected+=("$p/share/man/man1/$(basename "$f")")
	done
	for f in "$ROOT"/man/*.5; do
		expected+=("$p/share/man/man5/$(basename "$f")")
	done
	# Exactly these files and links, nothing else.
	diff <(printf '%s\n' "${expected[@]}" | sort) \
		<(cd "$DEST" && find . \( -type f -o -type l \) | sed 's|^\.||' | sort)
	[ "$(readlink "$DEST$p/lib/libward.so")" = libward.so.0 ]
	grep -qx 'Version: .*' "$DEST$p/lib/pkgconfig/ward.pc"
	grep -q "^prefix=$p\$" "$DEST$p/lib/pkgconfig/ward.pc"
	cmp "$DEST$p/share/bash-completion/completions/ward" \
		<("$DEST$p/bin/ward" completion bash)
	# The installed ward runs (and says the tree's version).
	run -0 "$DEST$p/bin/ward" --version
	[ "$output" = "ward $(sed -n 's/^#define WARD_VERSION "\(.*\)"/\1/p' "$ROOT/include/ward/common.h")" ]

	run -0 tree_make uninstall DESTDIR="$DEST"
	run -0 find "$DEST" \( -type f -o -type l \)
	printf '# left: %s\n' "$output"
	[ -z "$output" ]
	# ward's own directories go too; the shared ones may stay.
	[ ! -e "$DEST$p/include/ward" ]
	[ ! -e "$DEST$p/libexec/ward" ]
}

@test "make uninstall leaves files that are not ward's" {
	local p=/usr/local
	run -0 tree_make install DESTDIR="$DEST"
	echo other >"$DEST$p/bin/other-tool"
	echo other >"$DEST$p/share/man/man1/other.1"
	run -0 tree_make uninstall DESTDIR="$DEST"
	run -0 find "$DEST" \( -type f -o -type l \)
	[ "$(printf '%s\n' "$output" | sed "s|$DEST||" | sort | paste -sd' ')" = \
		"$p/bin/other-tool $p/share/man/man1/other.1" ]
}
